// Getting a management node ready, against a real sshd on loopback: waiting for SSH with backoff (a
// node that comes up late, one that never does, one with the wrong host key) and the tools check.
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {afterAll, describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {installTools, TOOLS_SCRIPT, waitForSsh} from '../../../src/lib/tasks/mgmt-setup.js'
import {localTransport} from '../../../src/lib/transport/local.js'
import {generateEd25519KeyPair} from '../../../src/lib/transport/ssh/index.js'
import {freePort} from '../../helpers/slurm.js'
import {startSshd, type SshdSandbox} from '../../helpers/sshd.js'
import {sleep} from '../../../src/lib/proc.js'

const servers: SshdSandbox[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
})

describe('waitForSsh', () => {
  it('keeps trying with backoff until the node answers with the pinned key', async () => {
    // A node whose sshd starts only after a while, with a known host key.
    const keys = await startSshd()
    servers.push(keys)
    const port = await freePort()
    const seen: string[] = []
    const t0 = Date.now()
    const waiting = waitForSsh({
      host: '127.0.0.1',
      port,
      user: keys.user,
      privateKey: keys.clientKeyPath,
      hostKeyFingerprint: keys.hostKeyFingerprint,
      timeoutMs: 30_000,
      initialDelayMs: 300,
      report: (m) => seen.push(m),
    })
    await sleep(1500)
    const late = await startSshd({port, hostKeyFile: keys.hostKeyPath, authorizeKey: readFileSync(`${keys.clientKeyPath}.pub`, 'utf8')})
    servers.push(late)
    const t = await waiting
    try {
      expect((await t.run(['echo', 'up'])).stdout).toBe('up\n')
    } finally {
      await t.close()
    }
    expect(Date.now() - t0).toBeLessThan(15_000)
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen[0]).toMatch(/^attempt 1: cannot connect to 127\.0\.0\.1:\d+: connection refused; retrying in 0 s$/)
    expect(seen[1]).toMatch(/retrying in 1 s$/) // 0.3 s, then 0.6 s: doubling
  }, 60_000)

  it('gives up after the timeout with what the last attempt saw', async () => {
    const port = await freePort()
    const t0 = Date.now()
    const e = await waitForSsh({host: '127.0.0.1', port, user: 'root', privateKey: Buffer.from(generateEd25519KeyPair('t').privateKey), hostKeyFingerprint: 'SHA256:' + 'A'.repeat(43), timeoutMs: 2000, initialDelayMs: 200}).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(CitcError)
    expect((e as CitcError).message).toMatch(/^SSH on the management node root@127\.0\.0\.1:\d+ never came up: \d+ attempt\(s\) in [0-9] s, the last one: cannot connect .*connection refused$/)
    expect((e as CitcError).exitCode).toBe(4)
    expect(Date.now() - t0).toBeLessThan(6000)
  })

  it('fails at once on a host key that is not the pinned one', async () => {
    const s = await startSshd()
    servers.push(s)
    const t0 = Date.now()
    const e = (await waitForSsh({host: s.host, port: s.port, user: s.user, privateKey: s.clientKeyPath, hostKeyFingerprint: 'SHA256:' + 'B'.repeat(43), timeoutMs: 60_000}).catch((x: unknown) => x)) as CitcError
    expect(e.message).toMatch(/does not match the pinned key/)
    expect(e.hint).toMatch(/cloud-init/)
    expect(Date.now() - t0).toBeLessThan(10_000)
  })
})

describe('installTools', () => {
  it('finds Node.js >= 20, npm and ansible-playbook present here and installs nothing', async () => {
    // CI installs them (.ci/run): fail, never skip, where they are missing.
    for (const c of ['node', 'npm', 'ansible-playbook']) expect(spawnSync('sh', ['-c', `command -v ${c}`]).status, `${c} on PATH`).toBe(0)
    expect(await installTools(localTransport())).toEqual([])
  })

  it('installs Node.js 20 from NodeSource and ansible-core from the distribution, apt waiting for its lock', () => {
    expect(TOOLS_SCRIPT).toMatch(/node_20\.x nodistro main/)
    expect(TOOLS_SCRIPT).toMatch(/DPkg::Lock::Timeout=600/)
    expect(TOOLS_SCRIPT).toMatch(/need="ansible-core"/)
  })
})
