// A local port forward through a real OpenSSH sshd on loopback (test/helpers/sshd.ts) to a loopback
// HTTP server: requests arrive through it, several at once; a wrong pinned host key is refused before
// anything is forwarded; closing the forward stops the listener.
import {createServer, type Server} from 'node:http'
import {connect} from 'node:net'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {HostKeyMismatchError} from '../../../../src/lib/errors.js'
import {connectSsh, type SshTransport} from '../../../../src/lib/transport/ssh/index.js'
import {startSshd, type SshdSandbox} from '../../../helpers/sshd.js'

let sshd: SshdSandbox
let http: Server
let httpPort: number
let ssh: SshTransport

const connectOpts = () => ({host: sshd.host, port: sshd.port, user: sshd.user, privateKey: sshd.clientKeyPath, hostKeyFingerprint: sshd.hostKeyFingerprint, readyTimeoutMs: 10_000})

beforeAll(async () => {
  sshd = await startSshd()
  http = createServer((req, res) => res.end(`hello from ${req.url}`))
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', () => r()))
  httpPort = (http.address() as {port: number}).port
  ssh = await connectSsh(connectOpts())
}, 30_000)

afterAll(async () => {
  await ssh?.close()
  await new Promise<void>((r) => (http ? http.close(() => r()) : r()))
  await sshd?.stop()
})

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({host: '127.0.0.1', port})
    s.once('connect', () => {
      s.destroy()
      resolve(true)
    })
    s.once('error', () => resolve(false))
  })

describe('forwardLocal', () => {
  it('carries requests to a loopback server as the SSH server sees it, several at once', async () => {
    const tunnel = await ssh.forwardLocal('127.0.0.1', httpPort)
    try {
      expect(tunnel.port).not.toBe(httpPort)
      const answers = await Promise.all([1, 2, 3, 4, 5].map(async (i) => (await fetch(`http://127.0.0.1:${tunnel.port}/q${i}`, {signal: AbortSignal.timeout(10_000)})).text()))
      expect(answers).toEqual([1, 2, 3, 4, 5].map((i) => `hello from /q${i}`))
    } finally {
      await tunnel.close()
    }
    expect(await portOpen(tunnel.port)).toBe(false)
    // The SSH connection is still good for other work.
    expect((await ssh.run(['true'])).exitCode).toBe(0)
  })

  it('resets a connection whose far end does not listen', async () => {
    const closed = createServer()
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()))
    const deadPort = (closed.address() as {port: number}).port
    await new Promise<void>((r) => closed.close(() => r()))
    const tunnel = await ssh.forwardLocal('127.0.0.1', deadPort)
    try {
      await expect(fetch(`http://127.0.0.1:${tunnel.port}/`, {signal: AbortSignal.timeout(10_000)})).rejects.toThrow(/fetch failed/)
    } finally {
      await tunnel.close()
    }
  })

  it('is never opened through a server with another host key', async () => {
    const wrong = `SHA256:${'A'.repeat(43)}`
    await expect(connectSsh({...connectOpts(), hostKeyFingerprint: wrong})).rejects.toBeInstanceOf(HostKeyMismatchError)
  })
})
