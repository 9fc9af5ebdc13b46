// Two citc commands at once on one cluster (issue 23, fault 8), through the built CLI. For every
// command that changes a cluster or citc's state of it, another command holds the cluster's lock (a
// real process, test/helpers/lock-holder.ts) and:
//   refused  the command ends at once with exit 2 and a message naming the holder (what, pid, since);
//            the cluster's directory is byte-identical afterwards, the holder's lock untouched, and
//            its management node (a TCP listener of the test's own that counts connections) never
//            contacted: the lock comes before anything remote
//   --wait   (commands that have it) it says it waits, waits while the holder lives, and goes on past
//            the lock once the holder releases it
//   stale    the holder is SIGKILLed by PID, its lock file left behind: the next command takes it
//            over with a note, goes on, and leaves no lock behind
// After the lock, the commands fail harmlessly: their management node closes every connection, and
// Terraform is a stand-in that only answers `version` (or is missing).
//
// Not driven here: a re-run of `citc create` of a local cluster. Its refusals before the lock depend on
// this machine (one local cluster per machine: a test cluster of another suite makes it refuse first),
// and going on past the lock installs a cluster here. It takes the lock through the same
// clusterWorkflow as the cloud re-run below, and writes nothing before it (create-local.ts).
//
// The read-only commands take no lock, on purpose (a status must answer while a finish runs): status,
// nodes, users, usage, accounts (show), ssh, monitor, doctor, cluster list, rebuild-image --list.
import {type ChildProcess, spawnSync} from 'node:child_process'
import {chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:net'
import {join, relative} from 'node:path'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {ClusterRegistry} from '../../src/lib/cluster/registry.js'
import {PENDING_HOST, type ClusterRecord, type ClusterRecordInput} from '../../src/lib/cluster/schema.js'
import {citc, type CliResult} from '../helpers/cli.js'
import {cloudRecord} from '../helpers/cloud-records.js'
import {injectFault} from '../helpers/fault-record.js'
import {holdLock, stopHolders} from '../helpers/lock-holder.js'
import {cliSandbox, type CliSandbox} from '../cli/support.js'

const NAME = 'prod'
const FINGERPRINT = 'SHA256:' + 'A'.repeat(43)
const HOLDER = 'citc finish'

// Shared inputs, made once: an SSH key pair (add-user's key, the clusters' admin key, node add's --key),
// a Terraform stand-in, the files the commands read.
const inputs = cliSandbox('two-commands-inputs')
const key = join(inputs.tmp, 'id_ed25519')
const fakeTerraform = join(inputs.tmp, 'terraform')
const limitsAws = join(inputs.tmp, 'limits-aws.yaml')
const accountsFile = join(inputs.tmp, 'accounts.yaml')
let publicKey = ''

/** The management node: accepts TCP connections, counts them, closes each at once. */
let server: Server
let port = 0
let contacts = 0

beforeAll(async () => {
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'alice@example', '-f', key], {encoding: 'utf8'})
  if (r.status !== 0) throw new Error(`ssh-keygen: ${r.stderr}`)
  publicKey = readFileSync(`${key}.pub`, 'utf8').trim()
  writeFileSync(
    fakeTerraform,
    `#!/bin/sh\nif [ "$1" = version ]; then echo '{"terraform_version":"1.9.8","platform":"linux_amd64"}'; exit 0; fi\necho "terraform stand-in: $*" >&2\nexit 1\n`,
  )
  chmodSync(fakeTerraform, 0o755)
  writeFileSync(limitsAws, 't3a.medium: 2\n')
  writeFileSync(accountsFile, 'accounts:\n  physics:\n    limits: {MaxJobs: 3}\n')
  server = createServer((socket) => {
    contacts++
    socket.destroy()
  })
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res))
  port = (server.address() as {port: number}).port
})

const children: ChildProcess[] = []
const sandboxes: CliSandbox[] = []
afterEach(async () => {
  await stopHolders(children)
  for (const s of sandboxes.splice(0)) s.cleanup()
})
afterAll(async () => {
  await new Promise((res) => server?.close(res))
  inputs.cleanup()
})

type Kind = 'registered' | 'created' | 'never-applied' | 'local'

/** cluster.yaml of each kind of cluster; its management node is the counting listener (or this machine). */
function record(kind: Kind, scratch: string): ClusterRecordInput {
  const mgmt = {host: '127.0.0.1', port, user: 'citc', keyPath: key, hostKeyFingerprint: FINGERPRINT, hostname: 'mgmt', sudo: true}
  switch (kind) {
    case 'registered':
      return {name: NAME, provider: 'aws', createdAt: '2026-01-01T12:00:00Z', origin: 'registered', mgmt, slurm: {confPath: '/etc/slurm/slurm.conf'}} as ClusterRecord
    case 'created':
      return {...cloudRecord('aws', NAME), mgmt, settings: {suspendTime: 300}} as ClusterRecord
    case 'never-applied': {
      const {terraform: _t, ...r} = cloudRecord('aws', NAME)
      return {...r, phase: 'creating', mgmt: {...mgmt, host: PENDING_HOST}} as ClusterRecord
    }
    case 'local':
      // This machine is a local cluster's management node: a Slurm configuration that Slurm refuses
      // makes anything run after the lock fail at its first scontrol (a missing one would make scontrol
      // look for a controller for 30 s).
      return {
        name: NAME,
        provider: 'local',
        createdAt: '2026-01-01T12:00:00Z',
        origin: 'created',
        mgmt: {host: 'localhost', port: 22, user: 'root', hostname: 'localhost'},
        slurm: {confPath: join(scratch, 'broken-slurm.conf')},
        settings: {suspendTime: 300},
      } as ClusterRecordInput
  }
}

/** A joined machine in the cluster's stored limits (node remove's), reached at the counting listener. */
const joinedLimits = () =>
  [
    'shapes:',
    '  local.small: 2',
    'static:',
    '  ws1:',
    '    address: 127.0.0.1',
    '    controller: 127.0.0.1',
    `    ssh: {user: root, port: ${port}, hostKey: "${FINGERPRINT}"}`,
    '    hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 2000}',
    '',
  ].join('\n')

interface Row {
  command: string
  kind: Kind
  args: () => string[]
  /** The cluster's stored limits.yaml, if it needs one. */
  limits?: () => string
  /** The command has --wait. */
  wait: boolean
  /** Going on past the lock, it contacts the listener (proof that it went on). */
  contactsAfter: boolean
  /** Else what it says (stdout and stderr) once past the lock. */
  wentOn?: RegExp
  env?: NodeJS.ProcessEnv
}

/** A local cluster's command past the lock: its first scontrol refuses the broken slurm.conf. */
const SCONTROL = /scontrol|configuration file|slurmctld does not answer/

const ROWS: Row[] = [
  {command: 'finish', kind: 'registered', args: () => ['finish', '-c', NAME, '--limits', limitsAws, '--yes'], wait: true, contactsAfter: true},
  {command: 'finish --dry-run', kind: 'registered', args: () => ['finish', '-c', NAME, '--limits', limitsAws, '--dry-run'], wait: true, contactsAfter: true},
  {
    command: 'add-user',
    kind: 'registered',
    args: () => ['add-user', 'alice', '-c', NAME, '--first-name', 'Alice', '--surname', 'Liddell', '--key', publicKey],
    wait: true,
    contactsAfter: true,
  },
  {command: 'remove-user', kind: 'registered', args: () => ['remove-user', 'alice', '-c', NAME, '--yes'], wait: true, contactsAfter: true},
  {command: 'accounts apply', kind: 'registered', args: () => ['accounts', 'apply', '-c', NAME, '--file', accountsFile, '--yes'], wait: true, contactsAfter: true},
  {command: 'rebuild-image', kind: 'created', args: () => ['rebuild-image', '-c', NAME, '--yes'], wait: true, contactsAfter: true},
  {command: 'rebuild-image --rollback', kind: 'created', args: () => ['rebuild-image', '-c', NAME, '--rollback', '--yes'], wait: true, contactsAfter: true},
  // Terraform missing: after the lock, destroy stops at once (before any cloud call).
  {command: 'destroy', kind: 'created', args: () => ['destroy', NAME, '--yes'], wait: false, contactsAfter: false, wentOn: /terraform/i, env: {CITC_TERRAFORM: '/nonexistent/terraform'}},
  {command: 'destroy (apply never started)', kind: 'never-applied', args: () => ['destroy', NAME, '--yes'], wait: false, contactsAfter: false, wentOn: /Forgot prod/},
  {
    command: 'create (re-run of a cloud cluster)',
    kind: 'created',
    args: () => ['create', '--name', NAME, '--resume', '--suspend-time', '120', '--yes'],
    wait: false,
    contactsAfter: false,
    // Its first step, under the lock.
    wentOn: /Render the Terraform working directory/,
    env: {CITC_TERRAFORM: fakeTerraform},
  },
  {command: 'cluster remove', kind: 'registered', args: () => ['cluster', 'remove', NAME, '--yes'], wait: false, contactsAfter: false, wentOn: /Forgot prod/},
  {command: 'cluster remove (apply never started)', kind: 'never-applied', args: () => ['cluster', 'remove', NAME, '--yes'], wait: false, contactsAfter: false, wentOn: /Forgot prod/},
  {
    command: 'node add',
    kind: 'local',
    limits: () => 'local.small: 2\n',
    args: () => ['node', 'add', '127.0.0.1', '-c', NAME, '--port', String(port), '--key', key, '--host-key', FINGERPRINT, '--yes'],
    wait: true,
    contactsAfter: false,
    wentOn: SCONTROL,
  },
  {command: 'node remove', kind: 'local', limits: joinedLimits, args: () => ['node', 'remove', 'ws1', '-c', NAME, '--yes'], wait: true, contactsAfter: false, wentOn: SCONTROL},
]

/** A data dir with the row's cluster in it; returns its state dir. */
function setUp(row: Row): {sandbox: CliSandbox; dir: string} {
  const sandbox = cliSandbox('two-commands')
  sandboxes.push(sandbox)
  writeFileSync(join(sandbox.tmp, 'broken-slurm.conf'), 'NotASlurmKey=1\n')
  const registry = new ClusterRegistry(sandbox.dataDir)
  registry.create(record(row.kind, sandbox.tmp), (paths) => {
    if (row.limits) writeFileSync(join(paths.dir, 'limits.yaml'), row.limits(), {mode: 0o600})
  })
  return {sandbox, dir: registry.paths(NAME).dir}
}

/** Every file under `dir` (but the lock) with its bytes, and every directory: what "changed nothing" compares. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of readdirSync(d, {withFileTypes: true})) {
      const p = join(d, e.name)
      const rel = relative(dir, p)
      if (rel === 'lock') continue
      if (e.isDirectory()) {
        out[rel + '/'] = `dir ${(statSync(p).mode & 0o777).toString(8)}`
        walk(p)
      } else {
        // Text as text (a readable diff when it fails), anything else as base64.
        const bytes = readFileSync(p)
        const text = bytes.toString('utf8')
        out[rel] = Buffer.from(text, 'utf8').equals(bytes) ? text : `base64:${bytes.toString('base64')}`
      }
    }
  }
  if (existsSync(dir)) walk(dir)
  return out
}

const lockOf = (dir: string): {pid: number; what: string} | undefined => (existsSync(join(dir, 'lock')) ? JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) : undefined)

const run = (sandbox: CliSandbox, row: Row, more: string[] = [], onOutput?: (chunk: string) => void): Promise<CliResult> =>
  citc([...row.args(), ...more], {env: {CITC_DATA_DIR: sandbox.dataDir, CITC_CLUSTER: undefined, NODE_ENV: undefined, ...row.env}, timeoutMs: 60_000, onOutput})

const HELD = /has held this cluster since/

describe.each(ROWS)('$command, while another command holds the cluster', (row) => {
  it('is refused at once (exit 2, naming the holder), changes nothing and contacts nothing', () =>
    injectFault('two-commands', `${row.command} while another command holds the cluster`, async () => {
      const {sandbox, dir} = setUp(row)
      const holder = await holdLock(dir, HOLDER, children)
      const before = snapshot(dir)
      const seen = contacts
      const r = await run(sandbox, row)
      expect(r.code, r.stderr).toBe(2)
      const retry = row.wait ? 'wait for it or retry with --wait' : 'run this again when it has finished'
      expect(r.stderr).toMatch(new RegExp(`another ${HOLDER} \\(pid ${holder.pid}\\) has held this cluster since \\d\\d:\\d\\d:\\d\\d; ${retry}`))
      expect(snapshot(dir)).toEqual(before)
      expect(lockOf(dir)).toMatchObject({pid: holder.pid, what: HOLDER})
      expect(contacts - seen, 'connections to the management node').toBe(0)
      return {lost: 0, stuck: 0, seen: 'exit 2: "another citc finish (pid N) has held this cluster since HH:MM:SS; run this again when it has finished"', recovery: 'nothing needed (or --wait)'}
    }))

  // Only commands that have --wait get this test (the others have nothing to wait with): not a skip.
  if (row.wait) it('with --wait: waits while the holder runs, goes on once it releases', async () => {
    const {sandbox, dir} = setUp(row)
    const holder = await holdLock(dir, HOLDER, children)
    const seen = contacts
    let output = ''
    let announced: () => void
    const waiting = new Promise<void>((res) => (announced = res))
    const line = `waiting for ${HOLDER} (pid ${holder.pid}) to release this cluster`
    const result = run(sandbox, row, ['--wait'], (chunk) => {
      output += chunk
      if (output.includes(line)) announced()
    })
    await Promise.race([
      waiting,
      result.then((r) => {
        throw new Error(`ended without waiting (exit ${r.code}): ${r.stderr}`)
      }),
    ])
    // Still waiting a while later: the holder's lock is untouched, nothing contacted.
    await new Promise((res) => setTimeout(res, 1000))
    expect(lockOf(dir)).toMatchObject({pid: holder.pid})
    expect(contacts - seen).toBe(0)
    await holder.release()
    const r = await result
    expect(r.stderr).not.toMatch(HELD)
    expect(r.stderr).not.toMatch(/gave up/)
    if (row.contactsAfter) expect(contacts - seen, `went on to the management node: ${r.stderr}`).toBeGreaterThan(0)
    if (row.wentOn) expect(r.stdout + r.stderr).toMatch(row.wentOn)
    expect(lockOf(dir), 'the lock is released when the command ends').toBeUndefined()
  })

  it('after the holder is killed (SIGKILL), takes its lock over with a note', () =>
    injectFault('two-commands', `${row.command} after the command holding the cluster was SIGKILLed (stale lock)`, async () => {
      const {sandbox, dir} = setUp(row)
      const holder = await holdLock(dir, 'citc add-user', children)
      await holder.kill()
      expect(lockOf(dir)?.pid, 'SIGKILL leaves the lock file').toBe(holder.pid)
      const seen = contacts
      const r = await run(sandbox, row)
      expect(r.stderr).toMatch(new RegExp(`note: taking over a stale lock: citc add-user \\(pid ${holder.pid}\\) took it at \\d\\d:\\d\\d:\\d\\d and is gone`))
      expect(r.stderr).not.toMatch(HELD)
      if (row.contactsAfter) expect(contacts - seen, `went on to the management node: ${r.stderr}`).toBeGreaterThan(0)
      if (row.wentOn) expect(r.stdout + r.stderr).toMatch(row.wentOn)
      expect(lockOf(dir), 'the lock is released when the command ends').toBeUndefined()
      return {lost: 0, stuck: 0, seen: 'note: taking over a stale lock: citc add-user (pid N) took it at HH:MM:SS and is gone', recovery: 'the next command takes the lock over'}
    }))
})
