// Machines joining a local cluster, for real: `citc node add` over SSH with Ansible to two "machines"
// made of namespaces on this host (test/helpers/machines.ts: their own network on a bridge, hostname,
// mounts and PIDs, a Debian 12 root filesystem with sshd and the packages in its apt cache), each
// becoming an IDLE static node that runs jobs next to the cluster's elastic local nodes; the
// preflight's refusals; a wrong munge key as the node's reason; a power cut; remove; destroy.
// The shared filesystem: this kernel has no NFS, so /mnt/shared is bind-mounted into the machines as
// the STAND-IN for the NFS mount, and the machines join with --shared none.
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {citc} from '../helpers/cli.js'
import {clusterNetwork, machineRootfs, startMachine, type ClusterNetwork, type Machine} from '../helpers/machines.js'
import {nodeStartDiagnosis, sh, until} from '../helpers/slurm-shell.js'
import {lockSystem} from '../helpers/system-lock.js'

const NAME = 'hyb'
const USER = 'hilda'
const HOME = `/mnt/shared/home/${USER}`
const work = mkdtempSync(join(tmpdir(), 'citc-joined-e2e-'))
const LIMITS = join(work, 'limits.yaml')
const KEY = join(work, 'id_ed25519')
const env = {CITC_DATA_DIR: join(work, 'data')}
const STORED_LIMITS = join(work, 'data', 'clusters', NAME, 'limits.yaml')

let net: ClusterNetwork | undefined
const machines: Machine[] = []
let release: (() => void) | undefined

const nodeLine = (name: string) => sh('scontrol', ['show', 'node', name, '-o']).stdout
// PLANNED: the backfill scheduler has a pending job in mind for the node; it is idle all the same.
const nodeState = (name: string) => (/State=(\S+)/.exec(nodeLine(name))?.[1] ?? '').replace('+PLANNED', '')
const add = (args: string[]) => citc(['node', 'add', '-c', NAME, '--key', KEY, '--shared', 'none', '--yes', ...args], {env, timeoutMs: 900_000})

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the joined-machines e2e test must run as root (as CI does)')
  const lock = await lockSystem('joined-machines e2e test')
  release = () => lock.release()
  if (spawnSync('getent', ['passwd', USER]).status === 0) throw new Error(`a user ${USER} exists on this machine already: this test creates one`)
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-joined-e2e', '-f', KEY])
  writeFileSync(LIMITS, '# two elastic local nodes next to the joined machines\nlocal.small: 2\n')
  const rootfs = await machineRootfs()
  net = await clusterNetwork()
  const publicKey = readFileSync(`${KEY}.pub`, 'utf8')
  for (const [i, name] of ['ws1', 'ws2', 'odd'].entries()) {
    machines.push(await startMachine({net, name, index: i + 2, rootfs, authorizedKey: publicKey, sharedDir: '/mnt/shared'}))
  }
  const r = await citc(['create', '--provider', 'local', '--name', NAME, '--suspend-time', '30', '--limits', LIMITS, '--yes'], {env, timeoutMs: 900_000})
  if (r.code !== 0) throw new Error(`create failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
  const u = await citc(['add-user', USER, '-c', NAME, '--first-name', 'Hilda', '--surname', 'Geiringer', '--key', `${KEY}.pub`, '--yes'], {env, timeoutMs: 300_000})
  if (u.code !== 0) throw new Error(`add-user failed (${u.code}):\n${u.stdout}\n${u.stderr}`)
}, 60 * 60_000)

afterAll(async () => {
  if (existsSync(join(work, 'data', 'clusters', NAME))) await citc(['destroy', NAME, '--yes'], {env, timeoutMs: 600_000})
  for (const m of machines) await m.destroy()
  await net?.close()
  rmSync(work, {recursive: true, force: true})
  release?.()
}, 15 * 60_000)

describe('machines join a local cluster (citc node add / remove)', () => {
  it('refuses a host key that is not the one given, and changes nothing', async () => {
    const [ws1] = machines
    const before = readFileSync('/etc/slurm/slurm.conf', 'utf8')
    const wrong = 'SHA256:' + 'A'.repeat(43)
    const r = await add([ws1.address, '--name', 'ws1', '--host-key', wrong])
    expect(r.code).not.toBe(0)
    expect(r.stderr).toContain(ws1.hostKeyFingerprint)
    expect(r.stderr).toMatch(/host key/i)
    expect(readFileSync('/etc/slurm/slurm.conf', 'utf8')).toBe(before)
    expect(ws1.exec(['sh', '-c', 'test -e /etc/munge/munge.key && echo key || echo none']).stdout.trim()).toBe('none')
  }, 120_000)

  it('without a terminal, a machine whose key was never confirmed is refused with its fingerprint', async () => {
    const [ws1] = machines
    const r = await add([ws1.address, '--name', 'ws1'])
    expect(r.code).toBe(2)
    expect(r.stderr).toContain(`--host-key ${ws1.hostKeyFingerprint}`)
  }, 120_000)

  it('preflight names every problem of a machine at once and changes nothing', async () => {
    const odd = machines[2]
    // A slurmd newer than the controller (a stand-in binary printing 23.11), an existing slurm.conf,
    // a clock 10 minutes ahead (a stand-in `date`: time namespaces do not move CLOCK_REALTIME), and
    // slurmd's port dropped by the machine's firewall.
    odd.exec(['sh', '-c', [
      'mkdir -p /etc/slurm /usr/local/bin',
      'echo "ClusterName=other" > /etc/slurm/slurm.conf',
      'printf "#!/bin/sh\\necho slurm 23.11.4\\n" > /usr/local/bin/slurmd',
      `printf '#!/bin/sh\\nif [ "$1" = +%%s ]; then echo $(( $(/bin/date +%%s) + 600 )); else exec /bin/date "$@"; fi\\n' > /usr/local/bin/date`,
      'chmod +x /usr/local/bin/slurmd /usr/local/bin/date',
    ].join(' && ')])
    await odd.blockPort(6818)
    const before = readFileSync('/etc/slurm/slurm.conf', 'utf8')
    const r = await add([odd.address, '--host-key', odd.hostKeyFingerprint])
    expect(r.code, r.stderr).toBe(3)
    expect(r.stderr).toMatch(/slurmd 23\.11\.4 is newer than the cluster's slurmctld 22\.05/)
    expect(r.stderr).toMatch(/already has \/etc\/slurm \(slurm\.conf\)/)
    expect(r.stderr).toMatch(/--adopt/)
    // 600 s ahead, read in whole seconds against the middle of the probe: 599 to 601.
    expect(r.stderr).toMatch(/clock is (599|60[01]) s away/)
    expect(r.stderr).toMatch(new RegExp(`cannot reach slurmd's port ${odd.address.replace(/\./g, '\\.')}:6818 \\(timeout\\)`))
    expect(r.stderr).toMatch(/allow TCP from .* port 6818 on the machine's firewall/)
    expect(readFileSync('/etc/slurm/slurm.conf', 'utf8')).toBe(before)
    expect(existsSync(STORED_LIMITS) ? readFileSync(STORED_LIMITS, 'utf8') : '').not.toMatch(/static:/)
  }, 180_000)

  it('two machines join: IDLE, a two-node job prints both names, a directory user writes to their home', async () => {
    const [ws1, ws2] = machines
    // One --host-key per machine, in the order the machines are given.
    const short = await add([ws1.address, ws2.address, '--host-key', ws1.hostKeyFingerprint])
    expect(short.code).toBe(2)
    expect(short.stderr).toMatch(/one --host-key per machine/)
    // --dry-run: the checks and the plan, nothing changed (no key pinned, no slurm.conf change).
    const confBefore = readFileSync('/etc/slurm/slurm.conf', 'utf8')
    const dry = await add([ws1.address, ws2.address, '--host-key', ws1.hostKeyFingerprint, '--host-key', ws2.hostKeyFingerprint, '--dry-run', '--json'])
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.json()).toMatchObject({applied: false, nodes: [{name: 'ws1', address: ws1.address, ssh: {hostKey: ws1.hostKeyFingerprint}}, {name: 'ws2'}]})
    expect(readFileSync('/etc/slurm/slurm.conf', 'utf8')).toBe(confBefore)
    expect(existsSync('/etc/citc/joined/known_hosts')).toBe(false)
    expect(ws1.exec(['sh', '-c', 'test -e /etc/citc-joined && echo marked || echo none']).stdout.trim()).toBe('none')

    const r = await add([ws1.address, ws2.address, '--host-key', ws1.hostKeyFingerprint, '--host-key', ws2.hostKeyFingerprint])
    if (r.code !== 0) throw new Error(`node add failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
    for (const m of [ws1, ws2]) expect(nodeState(m.name)).toBe('IDLE')
    const conf = readFileSync('/etc/slurm/slurm.conf', 'utf8')
    expect(conf).toMatch(/^NodeName=ws1 NodeAddr=10\.\S+ CPUs=\d+ .*Features="static" Weight=1$/m)
    expect(conf).toMatch(/^SuspendExcNodes=ws1,ws2$/m)
    expect(conf).toMatch(new RegExp(`^SlurmctldHost=\\S+\\(${net!.hostAddr.replace(/\./g, '\\.')}\\)$`, 'm'))
    expect(readFileSync(STORED_LIMITS, 'utf8')).toMatch(/static:\n\s+ws1:/)

    const both = sh('srun', ['-N2', '-w', 'ws1,ws2', 'hostname'], {timeoutMs: 120_000})
    expect(both.status, both.stderr).toBe(0)
    expect(both.stdout.split('\n').filter(Boolean).sort()).toEqual(['ws1', 'ws2'])

    rmSync(`${HOME}/on-ws2.txt`, {force: true})
    const job = sh('sbatch', ['--wait', '-w', 'ws2', '-N1', '-o', `${HOME}/job.out`, '--wrap', `id -un > ${HOME}/on-ws2.txt; hostname >> ${HOME}/on-ws2.txt`], {user: USER, timeoutMs: 180_000})
    expect(job.status, job.stderr).toBe(0)
    expect(readFileSync(`${HOME}/on-ws2.txt`, 'utf8').split('\n').slice(0, 2)).toEqual([USER, 'ws2'])
  }, 900_000)

  it('adding a joined machine again changes nothing', async () => {
    const [ws1] = machines
    const before = readFileSync('/etc/slurm/slurm.conf', 'utf8')
    const r = await add([ws1.address, '--name', 'ws1', '--json'])
    if (r.code !== 0) throw new Error(`node add again failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
    expect(readFileSync('/etc/slurm/slurm.conf', 'utf8')).toBe(before)
    expect(nodeState('ws1')).toBe('IDLE')
  }, 600_000)

  it('status shows joined machines next to the elastic nodes', async () => {
    const r = await citc(['nodes', '-c', NAME, '--json'], {env})
    expect(r.code).toBe(0)
    const nodes = r.json().nodes as {name: string; kind: string; address?: string}[]
    expect(nodes.find((n) => n.name === 'ws1')).toMatchObject({kind: 'joined', address: machines[0].address})
    expect(nodes.find((n) => n.name === 'hyb-local-small-0001')).toMatchObject({kind: 'local'})
  }, 120_000)

  it('joined machines are never powered down while idle elastic nodes are', async () => {
    const elastic = sh('srun', ['-N1', '-w', 'hyb-local-small-0001', 'true'], {timeoutMs: 120_000})
    expect(elastic.status, `${elastic.stderr}\n${elastic.status === 0 ? '' : nodeStartDiagnosis('hyb-local-small-0001')}`).toBe(0)
    await until('the elastic node to power down after its idle time', 240_000, () => nodeState('hyb-local-small-0001').includes('POWERED_DOWN'))
    expect(nodeState('ws1')).toBe('IDLE')
    expect(nodeState('ws2')).toBe('IDLE')
  }, 300_000)

  it('a machine that loses power comes back IDLE by itself', async () => {
    const ws1 = machines[0]
    const started = () => /SlurmdStartTime=(\S+)/.exec(nodeLine('ws1'))?.[1] ?? ''
    const before = started()
    await ws1.kill() // every process of the machine at once, as a power cut
    await ws1.start() // its disk (the overlay's upper layer) kept: munge and slurmd start at boot
    await until('ws1 to register again after its boot', 240_000, () => started() !== before && nodeState('ws1') === 'IDLE')
    const r = sh('srun', ['-w', 'ws1', '-N1', 'hostname'], {timeoutMs: 120_000})
    expect(r.status, r.stderr).toBe(0)
    expect(r.stdout.trim()).toBe('ws1')
  }, 600_000)

  it('a wrong munge key shows as the node’s reason, with what to do', async () => {
    const ws2 = machines[1]
    ws2.exec(['sh', '-c', 'dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null && chmod 0400 /etc/munge/munge.key && chown munge:munge /etc/munge/munge.key && service munge restart && service slurmd restart'])
    // slurmd cannot fetch its configuration now: slurmctld finds the node not responding when it
    // next contacts it — its periodic ping, or at once for a job.
    sh('srun', ['-w', 'ws2', '-N1', '--immediate=30', 'true'], {timeoutMs: 60_000})
    type Row = {name: string; hint?: string; reason?: string}
    let r: Row | undefined
    await until('citc nodes to show the munge problem', 240_000, () => {
      const n = spawnSync(process.execPath, [join(import.meta.dirname, '..', '..', 'bin', 'run.js'), 'nodes', '-c', NAME, '--json'], {env: {...process.env, ...env}, encoding: 'utf8'})
      r = (JSON.parse(n.stdout).nodes as Row[]).find((x) => x.name === 'ws2')
      return /munge/i.test(`${r?.reason ?? ''} ${r?.hint ?? ''}`)
    })
    expect(`${r?.reason ?? ''} ${r?.hint ?? ''}`).toMatch(/citc node add/)
    // Joining again puts the cluster's key back.
    const again = await add([ws2.address, '--name', 'ws2'])
    if (again.code !== 0) throw new Error(`node add ws2 again failed (${again.code}):\n${again.stdout}\n${again.stderr}`)
    expect(nodeState('ws2')).toBe('IDLE')
  }, 600_000)

  it('remove waits for a running job; --force requeues one', async () => {
    const job = sh('sbatch', ['-w', 'ws2', '-N1', '--parsable', '--wrap', 'sleep 20'], {user: USER})
    expect(job.status, job.stderr).toBe(0)
    const id = job.stdout.trim()
    await until('the job to run', 60_000, () => sh('squeue', ['-h', '-j', id, '-o', '%T']).stdout.trim() === 'RUNNING')
    const r = await citc(['node', 'remove', 'ws2', '-c', NAME, '--yes', '--json'], {env, timeoutMs: 600_000})
    if (r.code !== 0) throw new Error(`node remove failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
    expect(sh('sacct', ['-j', id, '-X', '-n', '-o', 'State']).stdout.trim()).toBe('COMPLETED')
    expect(readFileSync('/etc/slurm/slurm.conf', 'utf8')).not.toMatch(/NodeName=ws2/)
    expect(machines[1].exec(['sh', '-c', 'test -e /etc/munge/munge.key && echo key || echo none']).stdout.trim()).toBe('none')
    expect(machines[1].exec(['sh', '-c', 'pidof slurmd || echo none']).stdout.trim()).toBe('none')

    const held = sh('sbatch', ['-w', 'ws1', '-N1', '--parsable', '--wrap', 'sleep 300'], {user: USER})
    const heldId = held.stdout.trim()
    await until('the long job to run', 60_000, () => sh('squeue', ['-h', '-j', heldId, '-o', '%T']).stdout.trim() === 'RUNNING')
    const forced = await citc(['node', 'remove', 'ws1', '-c', NAME, '--force', '--yes', '--json'], {env, timeoutMs: 600_000})
    if (forced.code !== 0) throw new Error(`node remove --force failed (${forced.code}):\n${forced.stdout}\n${forced.stderr}`)
    expect(forced.json().requeued).toEqual([heldId])
    sh('scancel', [heldId])
  }, 900_000)

  it('destroy releases the joined machines', async () => {
    const ws1 = machines[0]
    const again = await add([ws1.address, '--name', 'ws1', '--host-key', ws1.hostKeyFingerprint])
    if (again.code !== 0) throw new Error(`node add ws1 failed (${again.code}):\n${again.stdout}\n${again.stderr}`)
    const r = await citc(['destroy', NAME, '--yes'], {env, timeoutMs: 600_000})
    if (r.code !== 0) throw new Error(`destroy failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
    expect(r.stdout).toMatch(/Released the joined machines: ws1/)
    expect(ws1.exec(['sh', '-c', 'test -e /etc/munge/munge.key && echo key || echo none']).stdout.trim()).toBe('none')
    expect(ws1.exec(['sh', '-c', 'pidof slurmd || echo none']).stdout.trim()).toBe('none')
  }, 900_000)
})
