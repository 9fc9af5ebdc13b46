// The machines fixture (test/helpers/machines.ts) proves what the `citc node add` tests rely on: two
// machines with their own hostnames and addresses, reachable over SSH with a pinned host key, talking
// TCP to each other and to the host; Slurm's node packages install from the apt cache with no network;
// a power cut and restart keeps the disk and the host key; a blocked port times out while a closed one
// is refused; and nothing is left on the host afterwards. Root only.
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {connect} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {clusterNetwork, hostSlurmVersion, machineRootfs, startMachine, type ClusterNetwork, type Machine} from './machines.js'
import {waitForAsync} from './wait.js'

const root = process.getuid?.() === 0

/** How a TCP connect from the host ends: accepted, refused, or nothing within timeoutMs. */
function connectOutcome(host: string, port: number, timeoutMs: number): Promise<'accepted' | 'refused' | 'timeout' | string> {
  return new Promise((resolve) => {
    const sock = connect({host, port})
    const timer = setTimeout(() => {
      sock.destroy()
      resolve('timeout')
    }, timeoutMs)
    sock.once('connect', () => {
      clearTimeout(timer)
      sock.destroy()
      resolve('accepted')
    })
    sock.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve(e.code === 'ECONNREFUSED' ? 'refused' : (e.code ?? e.message))
    })
  })
}

/** A python3 one-liner run inside a machine: connect to host:port, print what happened. */
const probe = (host: string, port: number) => [
  'python3',
  '-c',
  `import socket\ns=socket.socket(); s.settimeout(3)\ntry:\n  s.connect(("${host}", ${port})); print("accepted")\nexcept ConnectionRefusedError: print("refused")\nexcept OSError as e: print("error", e)`,
]

const links = (bridge: string) => execFileSync('ip', ['-o', 'link'], {encoding: 'utf8'}).split('\n').filter((l) => l.includes(bridge))

describe.skipIf(!root)('machines fixture', () => {
  const timings: Record<string, number> = {}
  let net: ClusterNetwork
  let rootfs: string
  let a: Machine
  let b: Machine
  let keyDir: string
  let version: string
  const shared = mkdtempSync(join(tmpdir(), 'citc-machines-shared-'))

  beforeAll(async () => {
    version = await hostSlurmVersion()
    let t = Date.now()
    rootfs = await machineRootfs()
    timings.rootfs = Date.now() - t
    keyDir = mkdtempSync(join(tmpdir(), 'citc-machines-key-'))
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-test', '-f', join(keyDir, 'id')])
    const authorizedKey = readFileSync(join(keyDir, 'id.pub'), 'utf8')
    net = await clusterNetwork()
    t = Date.now()
    a = await startMachine({net, name: 'ws1', index: 1, rootfs, authorizedKey, sharedDir: shared})
    timings.startA = Date.now() - t
    b = await startMachine({net, name: 'ws2', index: 2, rootfs, authorizedKey})
  }, 1_600_000)

  afterAll(async () => {
    await a?.destroy()
    await b?.destroy()
    await net?.close()
    rmSync(keyDir, {recursive: true, force: true})
    rmSync(shared, {recursive: true, force: true})
    console.log(`machines fixture timings (ms): ${JSON.stringify(timings)}`)
  })

  it('gives each machine its own hostname and address', async () => {
    expect((a.exec(['hostname'])).stdout.trim()).toBe('ws1')
    expect((b.exec(['hostname'])).stdout.trim()).toBe('ws2')
    expect(a.address).toBe(net.addrFor(1))
    // PID 1 of the machine is its own init, named so (Ansible then reports sysvinit as the service manager).
    expect((a.exec(['cat', '/proc/1/comm'])).stdout.trim()).toBe('init')
    expect((a.exec(['ip', '-4', '-o', 'addr', 'show', 'dev', 'eth0'])).stdout).toContain(`${a.address}/24`)
    expect((b.exec(['ip', '-4', '-o', 'addr', 'show', 'dev', 'eth0'])).stdout).toContain(`${b.address}/24`)
    expect(a.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/)
    expect(a.hostKeyFingerprint).not.toBe(b.hostKeyFingerprint)
    // The same as ssh-keygen's, read from inside the machine.
    const keygen = a.exec(['ssh-keygen', '-lf', '/etc/ssh/ssh_host_ed25519_key.pub'])
    expect(keygen.stdout.split(/\s+/)[1]).toBe(a.hostKeyFingerprint)
  })

  const ssh = (m: Machine, cmd: string) => {
    const known = join(keyDir, `known_hosts_${m.name}`)
    writeFileSync(known, `${m.address} ${m.hostKey}\n`)
    return spawnSync('ssh', ['-i', join(keyDir, 'id'), '-o', 'IdentitiesOnly=yes', '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${known}`, '-o', 'ConnectTimeout=10', `root@${m.address}`, cmd], {encoding: 'utf8', timeout: 30_000})
  }

  it('runs a command inside, bounded, and returns when it exits even if a daemon it started keeps its output', () => {
    const r = a.exec(['sh', '-c', 'echo out; echo err >&2; sleep 30 & exit 3'])
    expect(r).toMatchObject({status: 3, stdout: 'out\n', stderr: 'err\n'})
    expect(a.exec(['cat'], {input: 'in'}).stdout).toBe('in')
    const t = Date.now()
    expect(() => a.exec(['sleep', '30'], {timeoutMs: 1500})).toThrow(/ws1: sleep 30 did not finish within 1500 ms/)
    // Not the sleep's 30 s: a bound far from this machine's speed (5 s was close on a loaded one).
    expect(Date.now() - t).toBeLessThan(20_000)
  })

  it('lets the host in over SSH with the key it was given, checking the pinned host key', () => {
    const r = ssh(a, 'hostname')
    expect(r.stderr).toBe('')
    expect(r.stdout.trim()).toBe('ws1')
    // The other machine's key pinned for this address: refused, not accepted.
    const known = join(keyDir, 'known_hosts_wrong')
    writeFileSync(known, `${a.address} ${b.hostKey}\n`)
    const wrong = spawnSync('ssh', ['-i', join(keyDir, 'id'), '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', `UserKnownHostsFile=${known}`, `root@${a.address}`, 'true'], {encoding: 'utf8', timeout: 30_000})
    expect(wrong.status).not.toBe(0)
    expect(wrong.stderr).toMatch(/HOST IDENTIFICATION HAS CHANGED|Host key verification failed/)
  })

  it('lets machines reach each other and the host over TCP', async () => {
    expect((a.exec(probe(b.address, 22))).stdout.trim()).toBe('accepted')
    expect((b.exec(probe(a.address, 22))).stdout.trim()).toBe('accepted')
    // The host's address on the bridge: a closed port answers (refused), so the packets got there and back.
    expect((a.exec(probe(net.hostAddr, 9))).stdout.trim()).toBe('refused')
  })

  it('shows the shared directory (the NFS stand-in) at the same path', async () => {
    writeFileSync(join(shared, 'from-host'), 'hello\n')
    expect((a.exec(['cat', join(shared, 'from-host')])).stdout).toBe('hello\n')
  })

  it('installs the host’s slurmd version, munge and nslcd from the apt cache, with no network', async () => {
    // No route out: the machine cannot fetch anything, so this succeeds only from the cache.
    expect((a.exec(probe('192.0.2.1', 80))).stdout).not.toContain('accepted')
    const packages = [`slurmd=${version}`, `slurm-client=${version}`, 'libpmi2-0', 'munge', 'libnss-ldapd', 'nfs-common']
    const env = {DEBIAN_FRONTEND: 'noninteractive'}
    // With apt's default Recommends too: every archive is in the cache (checked, not installed).
    const all = a.exec(['apt-get', 'install', '-y', '--no-download', '--download-only', ...packages], {env})
    expect(all.stderr).not.toMatch(/^E:/m)
    expect(all.status).toBe(0)
    // As the playbook installs them (no Recommends, no apt-get update).
    const t = Date.now()
    const r = await a.execAsync(['apt-get', 'install', '-y', '--no-download', '--no-install-recommends', ...packages], {env, timeoutMs: 300_000})
    timings.aptInstall = Date.now() - t
    expect(r.stderr).not.toMatch(/^E:/m)
    expect(r.status).toBe(0)
    expect((a.exec(['dpkg-query', '-W', '-f=${Version}', 'slurmd'])).stdout).toBe(version)
  }, 320_000)

  it('comes back after a power cut with the same host key, address and disk', async () => {
    const fingerprint = a.hostKeyFingerprint
    const oldPid = a.pid
    await a.kill()
    expect(a.running).toBe(false)
    expect(existsSync(`/proc/${oldPid}`)).toBe(false)
    expect(links(net.bridge).some((l) => l.includes(`${net.bridge}v1`))).toBe(false)
    const t = Date.now()
    await a.start()
    timings.restartA = Date.now() - t
    expect(a.pid).not.toBe(oldPid)
    expect(a.hostKeyFingerprint).toBe(fingerprint)
    expect(ssh(a, 'hostname').stdout.trim()).toBe('ws1')
    expect((a.exec(['dpkg-query', '-W', '-f=${Version}', 'slurmd'])).stdout).toBe(version)
    // munge's package enabled it in rc2.d: the boot started it, as a Debian boot would.
    await waitForAsync('munged in ws1', async () => (await a.execAsync(['ps', '-eo', 'comm'])).stdout.split('\n').includes('munged'), 10_000, 200)
  }, 60_000)

  it('blocks an inbound port: a connect times out, while another closed port is refused at once', async () => {
    expect(await connectOutcome(b.address, 6818, 3000)).toBe('refused')
    await b.blockPort(6818)
    expect(await connectOutcome(b.address, 6818, 2000)).toBe('timeout')
    // 'refused' is the proof (a dropped packet gives 'timeout' after 3 s): no elapsed bound needed.
    expect(await connectOutcome(b.address, 6819, 3000)).toBe('refused')
    await b.unblockPort(6818)
    expect(await connectOutcome(b.address, 6818, 3000)).toBe('refused')
  })

  it('blocks an outbound port: the machine cannot reach it elsewhere', async () => {
    await b.blockPort(22, 'out')
    expect((b.exec(probe(a.address, 22))).stdout.trim()).toMatch(/^error/)
    await b.unblockPort(22, 'out')
    expect((b.exec(probe(a.address, 22))).stdout.trim()).toBe('accepted')
  })

  it('destroys a machine and the network leaving no process, link, mount or directory', async () => {
    const pids = [a.pid, b.pid]
    const dirs = [a.dir, b.dir]
    const bridge = net.bridge
    await a.destroy()
    await b.destroy()
    await net.close()
    for (const p of pids) expect(existsSync(`/proc/${p}`)).toBe(false)
    for (const d of dirs) expect(existsSync(d)).toBe(false)
    expect(links(bridge)).toEqual([])
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    for (const d of dirs) expect(mounts).not.toContain(d)
    // No process on this host still runs in a machine's root.
    const ps = execFileSync('ps', ['-eo', 'pid,args'], {encoding: 'utf8'})
    for (const d of dirs) expect(ps).not.toContain(d)
  })
})
