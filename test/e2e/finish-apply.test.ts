// citc finish against a registered cluster: a real OpenSSH sshd on loopback is the management node's
// SSH, a real slurmctld (started here, own munged) is its controller. The node programs are stand-in
// scripts that only record their calls: this test is about finish, not about starting nodes.
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseNodeStates} from '../../src/lib/slurm/controller.js'
import {connectSsh} from '../../src/lib/transport/ssh/index.js'
import {generateFromLimits} from '../../src/lib/tasks/finish/generate-config.js'
import {citc} from '../helpers/cli.js'
import {type SlurmSandbox, slurmSandbox} from '../helpers/slurm.js'
import {type SshdSandbox, startSshd} from '../helpers/sshd.js'

let sb: SlurmSandbox
let sshd: SshdSandbox
let work: string
let env: NodeJS.ProcessEnv
let programs: string

const limitsFile = (name: string, text: string) => {
  const f = join(work, name)
  writeFileSync(f, text)
  return f
}
const conf = () => readFileSync(sb.confPath, 'utf8')
const nodeNames = () => parseNodeStates(sb.scontrol(['show', 'node', '--oneliner', '--all']).stdout).map((n) => n.name)

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'citc-finish-e2e-'))
  env = {CITC_DATA_DIR: join(work, 'data')}
  programs = join(work, 'programs')
  const {mkdirSync} = await import('node:fs')
  mkdirSync(programs)
  for (const p of ['resume', 'suspend', 'resume-fail']) {
    writeFileSync(join(programs, p), `#!/bin/sh\necho "${p} $*" >> ${programs}/calls.log\n`, {mode: 0o755})
  }
  sb = await slurmSandbox('fin')
  // The cluster as it runs before citc manages it: the base plus two c5.xlarge nodes.
  const {generated} = generateFromLimits({
    provider: 'aws',
    clusterId: 'fin',
    limitsText: 'c5.xlarge: 2\n',
    limitsFile: 'initial.yaml',
    elastic: {programsDir: programs},
    current: sb.base,
  })
  writeFileSync(sb.confPath, generated.slurmConf)
  await sb.startController()
  sshd = await startSshd()
})

afterAll(async () => {
  await sshd?.stop()
  await sb?.stop()
  if (work) rmSync(work, {recursive: true, force: true})
})

describe('citc cluster add', () => {
  const addArgs = () => [
    'cluster', 'add', 'fin', '--host', '127.0.0.1', '--port', String(sshd.port), '--user', sshd.user, '--key', sshd.clientKeyPath,
    '--provider', 'aws', '--conf-path', sb.confPath, '--programs-dir', programs, '--restart-command', sb.restartScript,
  ]

  it('refuses to trust a host key nobody confirmed (no TTY), naming the flag', async () => {
    const r = await citc(addArgs(), {env})
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`--host-key-fingerprint ${sshd.hostKeyFingerprint}`)
    expect(existsSync(join(work, 'data', 'clusters', 'fin'))).toBe(false)
  })

  it('refuses a fingerprint that does not match', async () => {
    const r = await citc([...addArgs(), '--host-key-fingerprint', 'SHA256:' + 'A'.repeat(43)], {env})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/does not match/)
    expect(r.stderr).toContain(sshd.hostKeyFingerprint)
  })

  it('registers the cluster with the key pinned', async () => {
    const r = await citc([...addArgs(), '--host-key-fingerprint', sshd.hostKeyFingerprint, '--json'], {env})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.json().cluster.mgmt.hostKeyFingerprint).toBe(sshd.hostKeyFingerprint)
    const key = join(work, 'data', 'clusters', 'fin', 'keys', 'admin')
    expect(r.json().cluster.mgmt.keyPath).toBe(key)
    expect(statSync(key).mode & 0o777).toBe(0o600)
    expect(readFileSync(key, 'utf8')).toBe(readFileSync(sshd.clientKeyPath, 'utf8'))
    // Not made by citc: destroy refuses and says how to forget it; nothing changes.
    const destroy = await citc(['destroy', 'fin', '--yes'], {env})
    expect(destroy.code).toBe(2)
    expect(destroy.stderr).toMatch(/fin is not a cloud cluster made by citc create/)
    expect(destroy.stderr).toMatch(/citc cluster remove fin/)
    expect(existsSync(join(work, 'data', 'clusters', 'fin', 'cluster.yaml'))).toBe(true)
    // Power-saving timings short enough for a test (cluster.yaml settings, as create would write them).
    const yamlPath = join(work, 'data', 'clusters', 'fin', 'cluster.yaml')
    writeFileSync(yamlPath, readFileSync(yamlPath, 'utf8') + 'settings:\n  suspendTimeout: 5\n  resumeTimeout: 60\n')
  })
})

describe('citc finish on the registered cluster', () => {
  it('previews the change with --dry-run and changes nothing', async () => {
    const before = conf()
    const f = limitsFile('v2.yaml', 'c5.xlarge: 3\ng4dn.xlarge: 1\n')
    const r = await citc(['finish', '-c', 'fin', '--limits', f, '--dry-run', '--json'], {env})
    expect(r.code).toBe(0)
    const doc = r.json()
    expect(doc.changed).toBe(true)
    expect(doc.applied).toBe(false)
    expect(doc.plan.shapes).toEqual([
      {shape: 'c5.xlarge', before: 2, after: 3},
      {shape: 'g4dn.xlarge', before: 0, after: 1},
    ])
    expect(doc.plan.addedNodes).toBe('fin-c5-xlarge-0003,fin-g4dn-xlarge-0001')
    expect(doc.plan.diff).toContain('+NodeName=fin-g4dn-xlarge-0001')
    expect(conf()).toBe(before)
  })

  it('refuses to apply without --yes when there is no terminal', async () => {
    const before = conf()
    const r = await citc(['finish', '-c', 'fin', '--limits', join(work, 'v2.yaml')], {env})
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/pass --yes/)
    expect(conf()).toBe(before)
  })

  it('applies: backup, swap, restart, and the controller knows the new nodes', async () => {
    const pidBefore = sb.controllerPid()
    const r = await citc(['finish', '-c', 'fin', '--limits', join(work, 'v2.yaml'), '--yes', '--json'], {env})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    const doc = r.json()
    expect(doc).toMatchObject({applied: true, action: 'restart'})
    expect(existsSync(doc.backup)).toBe(true)
    expect(sb.controllerPid()).not.toBe(pidBefore)
    expect(sb.ping()).toBe(true)
    expect(nodeNames()).toEqual(['fin-c5-xlarge-0001', 'fin-c5-xlarge-0002', 'fin-c5-xlarge-0003', 'fin-g4dn-xlarge-0001'])
    expect(readFileSync(join(sb.dir, 'etc', 'gres.conf'), 'utf8')).toContain('NodeName=fin-g4dn-xlarge-0001 Name=gpu Type=t4')
    // The full remote log is in the cluster's logs/ directory.
    expect(readdirSync(join(work, 'data', 'clusters', 'fin', 'logs')).some((f) => f.startsWith('finish-'))).toBe(true)
  })

  it('a second run finds nothing to do', async () => {
    const r = await citc(['finish', '-c', 'fin', '--limits', join(work, 'v2.yaml'), '--yes', '--json'], {env})
    expect(r.code).toBe(0)
    expect(r.json()).toMatchObject({changed: false, applied: false})
  })

  it('rolls back a configuration slurmctld rejects, and the controller runs the old one again', async () => {
    const before = conf()
    const f = limitsFile('bad-plugin.yaml', 'shapes:\n  c5.xlarge: 1\nslurm:\n  SchedulerType: sched/nonexistent\n')
    const r = await citc(['finish', '-c', 'fin', '--limits', f, '--yes'], {env})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/did not take/)
    expect(r.stderr).toMatch(/previous slurm.conf was restored/)
    expect(conf()).toBe(before)
    expect(sb.ping()).toBe(true)
    expect(nodeNames()).toHaveLength(4)
  }, 240_000)

  it('drains and powers down a running node that leaves the configuration', async () => {
    expect(sb.scontrol(['update', 'NodeName=fin-c5-xlarge-0003', 'State=POWER_UP']).status).toBe(0)
    const f = limitsFile('v4.yaml', 'c5.xlarge: 1\ng4dn.xlarge: 1\n')
    const r = await citc(['finish', '-c', 'fin', '--limits', f, '--yes', '--json'], {env, timeoutMs: 180_000})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.json().poweredDown).toEqual(['fin-c5-xlarge-0003'])
    expect(readFileSync(join(programs, 'calls.log'), 'utf8')).toMatch(/^suspend fin-c5-xlarge-0003$/m)
    expect(nodeNames()).toEqual(['fin-c5-xlarge-0001', 'fin-g4dn-xlarge-0001'])
  })

  it('refuses a changed host key and changes nothing', async () => {
    const before = conf()
    const yamlPath = join(work, 'data', 'clusters', 'fin', 'cluster.yaml')
    const original = readFileSync(yamlPath, 'utf8')
    writeFileSync(yamlPath, original.replace(sshd.hostKeyFingerprint, 'SHA256:' + 'B'.repeat(43)))
    try {
      const r = await citc(['finish', '-c', 'fin', '--limits', join(work, 'v2.yaml'), '--yes'], {env})
      expect(r.code).toBe(4)
      expect(r.stderr).toMatch(/host key/i)
      expect(conf()).toBe(before)
    } finally {
      writeFileSync(yamlPath, original)
    }
  })

  it('an interrupted upload leaves the live slurm.conf in place', async () => {
    const before = conf()
    const t = await connectSsh({
      host: '127.0.0.1',
      port: sshd.port,
      user: sshd.user,
      privateKey: sshd.clientKeyPath,
      hostKeyFingerprint: sshd.hostKeyFingerprint,
      readyTimeoutMs: 10_000,
    })
    const ac = new AbortController()
    const big = Buffer.alloc(64 * 1024 * 1024, 'x')
    setTimeout(() => ac.abort(), 50)
    await expect(
      Promise.race([
        (async () => {
          // writeFile takes no signal: interrupt it the way Ctrl-C would, by dropping the connection.
          ac.signal.addEventListener('abort', () => void t.close())
          await t.writeFile(sb.confPath, big)
        })(),
      ]),
    ).rejects.toThrow()
    expect(conf()).toBe(before)
    expect(readdirSync(join(sb.dir, 'etc')).filter((f) => f.includes('citc-tmp'))).toEqual([])
    expect(sb.ping()).toBe(true)
  })

  it('reports a limits error with its location and changes nothing', async () => {
    const before = conf()
    const f = limitsFile('typo.yaml', 'c5.xlarge: 1\nc5.xlarg: 2\n')
    const r = await citc(['finish', '-c', 'fin', '--limits', f, '--yes'], {env})
    expect(r.code).toBe(3)
    expect(r.stderr).toContain(`${f}:2:1`)
    expect(r.stderr).toMatch(/did you mean c5\.xlarge/)
    expect(conf()).toBe(before)
  })
})
