// `citc status --watch` as a user runs it, without a terminal (a pipe, as in CI): each refresh printed
// after the last under a timestamped header, no escape codes; Ctrl-C (SIGINT) ends it with exit 0.
// The cluster is local, its controller on a closed loopback port: each refresh is quick and real.
// A second cluster's management node hangs up on every connection: each refresh fails, says why in
// place of the figures, and the watch goes on (connecting again each time).
import {execFileSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {clusterRegistry} from '../../src/lib/cluster/registry.js'
import {citc, type CliResult} from '../helpers/cli.js'
import {cliSandbox, localClusterWithoutController} from './support.js'

const sandbox = cliSandbox('status-watch')
let hangUp: Server
let connections = 0

beforeAll(async () => {
  localClusterWithoutController(sandbox.dataDir, 'lab')
  hangUp = createServer((socket) => {
    connections++
    socket.destroy()
  })
  await new Promise<void>((resolve) => hangUp.listen(0, '127.0.0.1', resolve))
  const key = join(sandbox.tmp, 'admin_ed25519')
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'status-watch-test', '-f', key])
  const registry = clusterRegistry(sandbox.dataDir)
  const record = {
    name: 'gone',
    provider: 'aws' as const,
    createdAt: new Date().toISOString(),
    origin: 'registered' as const,
    mgmt: {host: '127.0.0.1', port: (hangUp.address() as {port: number}).port, user: 'root', keyPath: '/pending', hostKeyFingerprint: `SHA256:${'A'.repeat(43)}`},
  }
  registry.create(record, () => {
    record.mgmt.keyPath = registry.writeKey('gone', 'admin_ed25519', readFileSync(key))
  })
})
afterAll(async () => {
  await new Promise((resolve) => hangUp.close(resolve))
  sandbox.cleanup()
})

/** `citc status --watch …`, interrupted (SIGINT) once `enough` says the output so far is enough. */
function watchUntil(args: string[], enough: (stdout: string) => boolean, cluster = 'lab'): Promise<CliResult & {sent: boolean}> {
  let out = ''
  let sent = false
  return citc(['status', '--watch', '-c', cluster, ...args], {
    env: {CITC_DATA_DIR: sandbox.dataDir, CITC_CLUSTER: undefined, NODE_ENV: undefined},
    timeoutMs: 40_000,
    onSpawn: (child) => {
      child.stdout!.on('data', (d) => {
        out += d
        if (!sent && enough(out)) {
          sent = true
          child.kill('SIGINT')
        }
      })
    },
  }).then((r) => ({...r, sent}))
}

const HEADER = /^=== \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ citc status -c lab \(every 5 s\) ===$/gm

describe('citc status --watch without a terminal', () => {
  it('prints two refreshes under timestamped headers 5 s apart, then Ctrl-C ends it with exit 0', async () => {
    const [plain, json, failing] = await Promise.all([
      watchUntil(['--interval', '5'], (s) => (s.match(HEADER) ?? []).length >= 2 && s.trimEnd().endsWith('(no nodes)')),
      watchUntil(['--interval', '5', '--json'], (s) => s.split('\n').filter(Boolean).length >= 2),
      watchUntil(['--interval', '5'], (s) => (s.match(/still watching/g) ?? []).length >= 2, 'gone'),
    ])
    expect(plain.sent, plain.stdout + plain.stderr).toBe(true)
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stderr).toBe('')
    const headers = plain.stdout.match(HEADER) ?? []
    expect(headers).toHaveLength(2)
    const times = headers.map((h) => Date.parse(h.split(' ')[1]))
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(5000)
    expect(plain.stdout).toContain('Controller: NOT ANSWERING')
    expect(plain.stdout).not.toContain('\u001B')

    // --json: one document per line per refresh (NDJSON), each status's document with refreshedAt.
    expect(json.code, json.stderr).toBe(0)
    const docs = json.stdout.trim().split('\n').map((l) => JSON.parse(l))
    expect(docs).toHaveLength(2)
    for (const d of docs) expect(d).toMatchObject({refreshedAt: expect.stringMatching(/Z$/), cluster: 'lab', controller: {up: false}})

    // Each failed refresh: its error where the figures would be, then the next one connects again.
    expect(failing.code, failing.stderr).toBe(0)
    const blocks = failing.stdout.split(/^=== .* ===$/m).slice(1)
    expect(blocks).toHaveLength(2)
    for (const b of blocks) expect(b).toMatch(/^\nRefresh failed: .*127\.0\.0\.1.*\n(Try: .*\n)?\(still watching: the next refresh tries again\)\n/)
    expect(connections).toBe(2)
  })

  it('refuses an interval under 5 s: the flag named, exit 2, nothing refreshed', async () => {
    const r = await sandbox.run(['status', '--watch', '--interval', '4'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--interval/)
    expect(r.stderr).toMatch(/greater than or equal to 5/)
    expect(r.stdout).toBe('')
  })
})
