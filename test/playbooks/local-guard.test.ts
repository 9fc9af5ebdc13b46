// Role local_guard (management.yml on the local provider, joined-management.yml): slurmctld, slurmdbd and
// the local nodes' slurmd listen on every interface (Slurm cannot be told which address to bind), so an
// nftables table refuses new connections to their ports unless they come in on lo, and opens slurmctld's
// port (only it) to the machines that joined. The role run for real by ansible-playbook in a network
// namespace of the test's own (the host's firewall is never touched), with listeners on 0.0.0.0 there and
// a peer namespace over a veth pair standing in for another machine on the network: the peer is refused
// on 6817, 6819 and the slurmd range and reaches other ports; loopback and the machine's own address
// reach everything; a joined peer reaches 6817 and not 6819; management.yml's re-run keeps the joined
// machines; re-runs change nothing; teardown's task removes the table.
// Root only (namespaces, nft, the role's apt task).
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {waitFor} from '../helpers/wait.js'

const PLAYBOOKS = join(import.meta.dirname, '../../playbooks')
const ROLE = join(PLAYBOOKS, 'roles/local_guard')
const root =
  process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0 && spawnSync('unshare', ['--version']).status === 0
const MGMT = '10.250.25.1'
const PEER = '10.250.25.2'
/** Slurm's ports on the management node and some that must stay open (ssh, just past the slurmd range). */
const PORTS = [22, 6817, 6819, 17001, 32767, 32768]

let work: string
let etcDir: string
let playbook: string
const holders: ChildProcess[] = []
const servers: ChildProcess[] = []
/** The management node's and the peer's network namespaces (held by a sleeping process each). */
let mgmtNs: string
let peerNs: string

const inNs = (ns: string, argv: string[]) => spawnSync('nsenter', [`--net=${ns}`, ...argv], {encoding: 'utf8', timeout: 20_000})

const SERVER = `
const net = require('net')
const ports = process.argv.slice(1).map(Number)
let up = 0
for (const port of ports) net.createServer((s) => { s.on('error', () => {}); s.end('ok') }).listen(port, '0.0.0.0', () => { if (++up === ports.length) console.log('ready') })`

const CLIENT = `
const [host, port, localPort] = process.argv.slice(1)
const s = require('net').connect({host, port: Number(port), ...(localPort ? {localPort: Number(localPort)} : {})})
s.setTimeout(3000, () => { console.log('timeout'); process.exit(0) })
s.on('connect', () => { console.log('accepted'); s.destroy() })
s.on('error', (e) => console.log(e.code))`

/** How a connection from namespace `ns` to host:port ends: accepted, ECONNREFUSED, timeout… */
function outcome(ns: string, host: string, port: number, localPort?: number): string {
  const r = inNs(ns, [process.execPath, '-e', CLIENT, host, String(port), ...(localPort ? [String(localPort)] : [])])
  return (r.stdout || r.stderr).trim()
}

/** Each port's outcome from `ns` to `host`, as one object (a failure shows all of them). */
const outcomes = (ns: string, host: string) => Object.fromEntries(PORTS.map((p) => [p, outcome(ns, host, p)]))

/** The role through ansible-playbook in the management namespace, with citc's ansible.cfg. */
function playRole(extra: Record<string, unknown>) {
  return spawnSync(
    'nsenter',
    [
      `--net=${mgmtNs}`,
      'ansible-playbook', '-i', 'localhost,', '-c', 'local', playbook,
      // group_vars as management.yml gets them (slurmdbd_port), then the test's own /etc/citc.
      '-e', `@${join(PLAYBOOKS, 'group_vars/all.yml')}`,
      '-e', JSON.stringify({citc_etc_dir: etcDir, ...extra}),
    ],
    {
      encoding: 'utf8',
      timeout: 300_000,
      env: {...process.env, ANSIBLE_CONFIG: join(PLAYBOOKS, 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(PLAYBOOKS, 'roles')},
    },
  )
}

/** playRole, which must succeed; PLAY RECAP's changed count. */
function runRole(extra: Record<string, unknown>): number {
  const r = playRole(extra)
  expect(r.status, r.stdout + r.stderr).toBe(0)
  const changed = /localhost\s*:.*changed=(\d+)/.exec(r.stdout)
  expect(changed, r.stdout).not.toBeNull()
  return Number(changed![1])
}

/** A process holding a new network namespace of its own; its namespace's path once it is there. */
async function holdNamespace(): Promise<string> {
  const holder = spawn('unshare', ['--net', '--', 'sleep', '1800'], {stdio: 'ignore'})
  holders.push(holder)
  const mine = readlinkSync('/proc/self/ns/net')
  const path = `/proc/${holder.pid}/ns/net`
  await waitFor('a network namespace of the test', () => {
    try {
      return readlinkSync(path) !== mine
    } catch {
      return false
    }
  })
  return path
}

async function startServer(ns: string, ports: number[]): Promise<void> {
  let out = ''
  // nsenter execs node (no --fork): the pid is the server's.
  const server = spawn('nsenter', [`--net=${ns}`, process.execPath, '-e', SERVER, ...ports.map(String)], {stdio: ['ignore', 'pipe', 'inherit']})
  servers.push(server)
  server.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  await waitFor('the stand-in listeners', () => out.includes('ready'), 15_000)
}

describe.skipIf(!root)('role local_guard', () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'citc-lg-'))
    etcDir = join(work, 'etc-citc')
    mkdirSync(etcDir)
    playbook = join(work, 'local-guard.yml')
    writeFileSync(playbook, '- hosts: all\n  gather_facts: true\n  gather_subset: [min]\n  roles: [local_guard]\n')
    mgmtNs = await holdNamespace()
    peerNs = await holdNamespace()
    const peerPid = peerNs.split('/')[2]
    // The veth pair is made inside the management namespace with its far end in the peer's: never in the host's.
    for (const [ns, argv] of [
      [mgmtNs, ['ip', 'link', 'add', 'lg0', 'type', 'veth', 'peer', 'name', 'lg1', 'netns', peerPid]],
      [mgmtNs, ['ip', 'addr', 'add', `${MGMT}/24`, 'dev', 'lg0']],
      [mgmtNs, ['ip', 'link', 'set', 'lg0', 'up']],
      [mgmtNs, ['ip', 'link', 'set', 'lo', 'up']],
      [peerNs, ['ip', 'addr', 'add', `${PEER}/24`, 'dev', 'lg1']],
      [peerNs, ['ip', 'link', 'set', 'lg1', 'up']],
      [peerNs, ['ip', 'link', 'set', 'lo', 'up']],
    ] as const)
      expect(inNs(ns, [...argv]).stderr).toBe('')
    await startServer(mgmtNs, PORTS)
    // The peer's own server, for a reply coming back to a port of the slurmd range.
    await startServer(peerNs, [5000])
  }, 60_000)

  afterAll(() => {
    // By pid: the servers, then the holders (their namespaces, and the veth pair, go with the last process).
    for (const p of [...servers, ...holders]) if (p.pid && p.exitCode === null) process.kill(p.pid, 'SIGKILL')
    if (work) rmSync(work, {recursive: true, force: true})
  })

  it('keeps Slurm to loopback, opens slurmctld (only) to joined machines, re-runs change nothing, teardown removes it', () => {
    // Without the guard the peer reaches everything (the test can fail).
    expect(outcomes(peerNs, MGMT)).toEqual(Object.fromEntries(PORTS.map((p) => [p, 'accepted'])))

    // management.yml: no joined machine.
    expect(runRole({})).toBeGreaterThan(0)
    const refusedFromPeer = {22: 'accepted', 6817: 'ECONNREFUSED', 6819: 'ECONNREFUSED', 17001: 'ECONNREFUSED', 32767: 'ECONNREFUSED', 32768: 'accepted'}
    expect(outcomes(peerNs, MGMT)).toEqual(refusedFromPeer)
    // This machine reaches them on loopback and on its own address (lo carries both).
    const allAccepted = Object.fromEntries(PORTS.map((p) => [p, 'accepted']))
    expect(outcomes(mgmtNs, '127.0.0.1')).toEqual(allAccepted)
    expect(outcomes(mgmtNs, MGMT)).toEqual(allAccepted)
    // A reply to this machine's own connection, coming back to a port in the slurmd range, gets through.
    expect(outcome(mgmtNs, PEER, 5000, 17005)).toBe('accepted')
    expect(readFileSync(join(etcDir, 'local-guard.nft'), 'utf8')).not.toMatch(/saddr/)

    // joined-management.yml: a machine joined (and one by IPv6 address).
    expect(runRole({joined_addresses: [PEER, 'fd00:25::2']})).toBeGreaterThan(0)
    expect(outcomes(peerNs, MGMT)).toEqual({...refusedFromPeer, 6817: 'accepted'})
    const listed = inNs(mgmtNs, ['nft', 'list', 'table', 'inet', 'citc_local_guard']).stdout
    expect(listed).toMatch(new RegExp(`^\\s*ip saddr ${PEER.replaceAll('.', '\\.')} tcp dport 6817 accept$`, 'm'))
    expect(listed).toMatch(/^\s*ip6 saddr fd00:25::2 tcp dport 6817 accept$/m)
    // Loading again replaced the table: one refusal rule, not two.
    expect(listed.match(/reject/g)).toHaveLength(1)
    expect(readFileSync(join(etcDir, 'local-guard-joined'), 'utf8')).toBe(`${PEER}\nfd00:25::2\n`)

    // The same again, and management.yml's re-run (no joined_addresses of its own): nothing changes,
    // the joined machine keeps slurmctld.
    expect(runRole({joined_addresses: [PEER, 'fd00:25::2']})).toBe(0)
    expect(runRole({})).toBe(0)
    expect(outcomes(peerNs, MGMT)).toEqual({...refusedFromPeer, 6817: 'accepted'})

    // The machine left (and destroy runs this with none before teardown).
    expect(runRole({joined_addresses: []})).toBeGreaterThan(0)
    expect(outcomes(peerNs, MGMT)).toEqual(refusedFromPeer)
    expect(existsSync(join(etcDir, 'local-guard-joined'))).toBe(false)

    // teardown.yml's task, as written there.
    const teardown = parse(readFileSync(join(PLAYBOOKS, 'teardown.yml'), 'utf8')) as Array<{tasks: Array<Record<string, unknown>>}>
    const task = teardown[0].tasks.find((t) => t.name === "Remove the local guard's table")!
    expect(inNs(mgmtNs, ['sh', '-c', task['ansible.builtin.shell'] as string]).stdout.trim()).toBe('removed')
    expect(outcomes(peerNs, MGMT)).toEqual(allAccepted)
    expect(inNs(mgmtNs, ['nft', 'list', 'table', 'inet', 'citc_local_guard']).status).not.toBe(0)
    expect(inNs(mgmtNs, ['sh', '-c', task['ansible.builtin.shell'] as string]).stdout.trim()).toBe('')
  }, 900_000)

  it('refuses a joined machine whose name does not resolve, saying which', () => {
    const r = playRole({joined_addresses: ['no-such-machine.invalid']})
    expect(r.status).not.toBe(0)
    expect(r.stdout, r.stderr).toContain('the joined machine no-such-machine.invalid does not resolve on this machine')
  }, 300_000)

  it('loads at boot from the file it writes, is wired into the plays, and teardown removes its files', () => {
    const defaults = parse(readFileSync(join(ROLE, 'defaults/main.yml'), 'utf8')) as Record<string, string>
    // Under /etc/citc, which teardown removes whole.
    expect(defaults.local_guard_rules_file).toBe('{{ citc_etc_dir }}/local-guard.nft')
    expect(defaults.local_guard_joined_file).toMatch(/^\{\{ citc_etc_dir \}\}\//)
    const template = readFileSync(join(ROLE, 'templates/citc-local-guard.service.j2'), 'utf8')
    const unit = template.replace('{{ ansible_managed }}', 'Ansible managed').replace('{{ local_guard_rules_file }}', '/etc/citc/local-guard.nft')
    expect(unit).not.toContain('{{')
    expect(unit).toContain('ExecStart=/usr/sbin/nft -f /etc/citc/local-guard.nft')
    expect(unit).toMatch(/^Before=network-pre\.target\b/m)
    expect(unit).toMatch(/^WantedBy=multi-user\.target$/m)
    const unitFile = join(work, 'citc-local-guard.service')
    writeFileSync(unitFile, unit)
    // systemd reads it without a complaint (it warns, and still exits 0, on an unknown key).
    const verify = spawnSync('systemd-analyze', ['verify', unitFile], {encoding: 'utf8', timeout: 60_000})
    expect({status: verify.status, said: (verify.stdout + verify.stderr).trim()}).toEqual({status: 0, said: ''})

    // The local provider only (clouds have their own security rules), and kept current as machines join and leave.
    const management = parse(readFileSync(join(PLAYBOOKS, 'management.yml'), 'utf8')) as Array<{roles: unknown[]}>
    expect(management[0].roles).toContainEqual({role: 'local_guard', when: "provider == 'local'"})
    const joined = parse(readFileSync(join(PLAYBOOKS, 'joined-management.yml'), 'utf8')) as Array<{tasks: Array<Record<string, unknown>>}>
    expect(joined[0].tasks).toContainEqual(expect.objectContaining({'ansible.builtin.import_role': {name: 'local_guard'}, when: "provider == 'local'"}))
    const teardown = parse(readFileSync(join(PLAYBOOKS, 'teardown.yml'), 'utf8')) as Array<{tasks: Array<Record<string, {path?: string; name?: string}> & {loop?: string[]}>}>
    const removed = teardown[0].tasks.find((t) => t.name === ('Remove what citc created' as never))!.loop!
    expect(removed).toContain('/etc/systemd/system/citc-local-guard.service')
    expect(removed).toContain('{{ citc_etc_dir }}')
    expect(teardown[0].tasks.find((t) => t['ansible.builtin.systemd']?.name === 'citc-local-guard.service')).toBeDefined()
    for (const play of ['management.yml', 'joined-management.yml', 'teardown.yml']) {
      const r = spawnSync('ansible-playbook', ['--syntax-check', '-i', 'localhost,', play], {
        cwd: PLAYBOOKS,
        env: {...process.env, ANSIBLE_CONFIG: 'ansible.cfg'},
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(r.status, r.stderr).toBe(0)
    }
  }, 300_000)
})
