// Ctrl-C during a command that only reads (users, usage, accounts, status, nodes): the session with the
// management node is closed and the command ends as a workflow does — exit 130 and one line on stderr,
// no stack trace (one JSON error document under --json). The management node here accepts the TCP
// connection and never says a word of SSH, so each command waits on it until it is interrupted.
import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {createServer, type Server, type Socket} from 'node:net'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {clusterRegistry} from '../../src/lib/cluster/registry.js'
import {citc, type CliResult} from '../helpers/cli.js'
import {cliSandbox, limited} from './support.js'

const sandbox = cliSandbox('interrupt')
let server: Server
const waiting: Array<() => void> = []
const sockets = new Set<Socket>()

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    waiting.shift()?.()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  const key = join(sandbox.tmp, 'admin_ed25519')
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'interrupt-test', '-f', key])
  const registry = clusterRegistry(sandbox.dataDir)
  const record = {
    name: 'silent',
    provider: 'aws' as const,
    createdAt: new Date().toISOString(),
    origin: 'registered' as const,
    mgmt: {host: '127.0.0.1', port, user: 'root', keyPath: '/pending', hostKeyFingerprint: `SHA256:${'A'.repeat(43)}`},
  }
  registry.create(record, () => {
    record.mgmt.keyPath = registry.writeKey('silent', 'admin_ed25519', readFileSync(key))
  })
})
afterAll(async () => {
  for (const s of sockets) s.destroy()
  await new Promise((resolve) => server.close(resolve))
  sandbox.cleanup()
})

/** Run `args`; press Ctrl-C (SIGINT) once citc has connected to the silent node. */
function interrupted(args: string[]): Promise<CliResult> {
  return citc([...args, '-c', 'silent'], {
    env: {CITC_DATA_DIR: sandbox.dataDir, CITC_CLUSTER: undefined, NODE_ENV: undefined},
    timeoutMs: 30_000,
    onSpawn: (child) => waiting.push(() => child.kill('SIGINT')),
  })
}

describe('Ctrl-C during a read-only command', () => {
  it('closes the session and exits 130 with one line, no stack trace', async () => {
    const commands = ['users', 'usage', 'accounts', 'status', 'nodes']
    // One at a time: each connection answers the command that is waiting for it.
    const results = await limited(1, commands.map((c) => () => interrupted([c])))
    for (const [i, r] of results.entries()) {
      expect(r.code, `citc ${commands[i]}: ${r.stderr}`).toBe(130)
      expect(r.stderr).toBe(`Error: citc ${commands[i]} interrupted\n`)
      expect(r.stdout).toBe('')
    }
  })

  it('under --json: one error document, exit 130', async () => {
    const r = await interrupted(['users', '--json'])
    expect(r.code).toBe(130)
    expect(r.json()).toEqual({error: {kind: 'cancelled', message: 'citc users interrupted', exitCode: 130}})
    expect(r.stderr).toBe('')
  })
})
