// What `citc node add` asks of the management node: its Slurm and directory, the address the machines
// reach it on, ports it can reach on them, the munge proof, and the wait for a joined node to work.
import {CitcError, remoteError} from '../../errors.js'
import {sleep} from '../../proc.js'
import {Controller} from '../../slurm/controller.js'
import {SRUN_PORT_RANGE} from '../../slurm/render.js'
import type {StaticNodeSpec} from '../../slurm/limits-types.js'
import type {Transport} from '../../transport/types.js'
import {Directory, readLdapConfig} from '../../users/directory.js'
import {get} from '../../users/ldif.js'
import {onMachine, type MachineLogin} from './machine-access.js'
import type {ControllerFacts} from './preflight.js'
import type {Reach} from './probe.js'

export interface ClusterFacts extends Omit<ControllerFacts, 'now'> {
  nodeNames: ReadonlySet<string>
  /** Directory users: login → uid. */
  directory: ReadonlyMap<string, number>
}

export async function clusterFacts(t: Transport, controller: Controller, signal?: AbortSignal): Promise<ClusterFacts> {
  const v = await t.run(['slurmctld', '-V'], {timeoutMs: 20_000, signal})
  const version = /slurm(?:-wlm)?\s+(\d\S*)/.exec(v.stdout)?.[1]
  if (!version) throw remoteError(`cannot read slurmctld's version on ${t.description}: ${(v.stderr || v.stdout).trim()}`)
  const pkg = await t.run(['dpkg-query', '-W', '-f=${Version}', 'slurmctld'], {timeoutMs: 20_000, signal})
  if (!(await controller.ping())) {
    throw new CitcError('remote', 'slurmctld does not answer on the management node', {hint: 'start it (citc create re-run, or service slurmctld start) and try again'})
  }
  const nodeNames = new Set((await controller.nodes()).map((n) => n.name))
  const directory = new Map<string, number>()
  const ldap = await readLdapConfig(t)
  for (const e of await new Directory(t, ldap).search('(uidNumber=*)', ['uid', 'uidNumber'], {signal})) {
    const uid = get(e, 'uid')
    const n = Number(get(e, 'uidNumber'))
    if (uid && Number.isSafeInteger(n)) directory.set(uid, n)
  }
  return {version, ...(pkg.exitCode === 0 && pkg.stdout.trim() ? {packageVersion: pkg.stdout.trim()} : {}), nodeNames, directory}
}

/**
 * The management node's address on the way to the machine (its route's source): what the machine
 * reaches slurmctld, LDAP and NFS on. Every joined machine must use the same one (SlurmctldHost has one).
 */
export async function controllerAddressFor(t: Transport, host: string, known: readonly Pick<StaticNodeSpec, 'name' | 'controller'>[]): Promise<string> {
  const resolved = await t.run(['getent', 'ahostsv4', host], {timeoutMs: 20_000})
  const ip = /^(\d+\.\d+\.\d+\.\d+)/m.exec(resolved.stdout)?.[1]
  if (!ip) throw new CitcError('invalidInput', `${host} does not resolve to an IPv4 address on the management node; nothing was changed`, {hint: 'give the machine as an IPv4 address, or add it to /etc/hosts on the management node'})
  const route = await t.run(['ip', '-o', 'route', 'get', ip], {timeoutMs: 20_000})
  const src = /\bsrc\s+(\S+)/.exec(route.stdout)?.[1]
  if (!src) throw new CitcError('invalidInput', `the management node has no route to ${host} (${ip}); nothing was changed`, {hint: (route.stderr || route.stdout).trim() || 'check the network between them'})
  if (src.startsWith('127.') || ip.startsWith('127.')) {
    throw new CitcError('invalidInput', `${host} is the management node itself; nothing was changed`, {hint: 'join other machines; this one runs the cluster’s local nodes already'})
  }
  const other = known.find((s) => s.controller !== src)
  if (other) {
    throw new CitcError('invalidInput', `the management node reaches ${host} from ${src}, but other machines reach it at ${other.controller} (${other.name}); nothing was changed`, {
      hint: 'slurm.conf names one controller address: join machines that share a network with the others',
    })
  }
  return src
}

/** A TCP connect from the management node: open, refused (nothing listens, the path is open) or timeout (dropped). */
export async function probeFromManagement(t: Transport, host: string, port: number): Promise<Reach> {
  const r = await t.run(['timeout', '4', 'bash', '-c', 'exec 3<>"/dev/tcp/$0/$1"', host, String(port)], {timeoutMs: 15_000})
  if (r.exitCode === 0) return 'open'
  if (r.exitCode === 124) return 'timeout'
  return /refused/i.test(r.stderr) ? 'refused' : `error: ${r.stderr.trim().split('\n').at(-1)}`
}

/** A munge credential made on the management node must decode on the machine: the same key. */
export async function proveMunge(t: Transport, login: MachineLogin, signal?: AbortSignal): Promise<void> {
  const cred = await t.check(['munge', '-n'], {timeoutMs: 20_000, signal})
  const r = await onMachine(t, login, ['unmunge'], {stdin: cred.stdout, timeoutMs: 20_000, signal})
  if (r.exitCode !== 0) {
    throw new CitcError('remote', `${login.host} cannot decode the cluster's munge credentials: ${(r.stderr || r.stdout).trim().split('\n').at(-1)}`, {
      hint: `its munge key is not the cluster's, or munged is not running there: run citc node add ${login.host} again, then check "service munge status" on the machine`,
    })
  }
}

const settled = (state: string[]) => state.includes('IDLE') && !state.some((s) => ['DOWN', 'DRAIN', 'NOT_RESPONDING', 'FAIL', 'INVALID_REG'].includes(s))

/**
 * Wait (bounded) until every node registers IDLE, then prove them with one job of a task on each (its
 * output must name every machine); when that job fails, one job per node names the one that fails.
 */
export async function waitIdleAndProve(controller: Controller, t: Transport, names: string[], o: {signal?: AbortSignal; timeoutMs?: number; report?: (m: string) => void} = {}): Promise<void> {
  const timeoutMs = o.timeoutMs ?? 180_000
  const deadline = Date.now() + timeoutMs
  for (;;) {
    o.signal?.throwIfAborted()
    const states = await controller.nodes(names.join(','))
    const waiting = names.filter((n) => !states.some((s) => s.name === n && settled(s.state)))
    if (waiting.length === 0) break
    o.report?.(`waiting for ${waiting.join(', ')}`)
    if (Date.now() > deadline) {
      const why = waiting.map((n) => {
        const s = states.find((x) => x.name === n)
        return s ? `${n} ${s.state.join('+')}${s.reason ? ` (${s.reason})` : ''}` : `${n} unknown to slurmctld`
      })
      throw new CitcError('remote', `not IDLE within ${timeoutMs / 1000} s: ${why.join('; ')}`, {
        hint: `see citc nodes for their reasons, and slurmd's log on each machine (/var/log/slurm/slurmd-NAME.log)`,
      })
    }
    await sleep(1000)
  }
  o.report?.(`a one-task job on ${names.join(', ')}`)
  const all = await oneTaskEach(controller, t, names, o.signal)
  if (all.exitCode === 0 && names.every((n) => all.stdout.split('\n').includes(n))) return
  for (const n of names) {
    const r = await oneTaskEach(controller, t, [n], o.signal)
    if (r.exitCode !== 0) {
      throw new CitcError('remote', `${n} is IDLE, but a one-task job on it failed: ${(r.stderr || r.stdout).trim().split('\n').slice(-3).join(' ')}`, {
        hint: `srun needs the machine to reach the management node on ports ${SRUN_PORT_RANGE}; see slurmd's log on the machine (/var/log/slurm/slurmd-${n}.log)`,
      })
    }
  }
}

/** srun of one task on each of these nodes, printing its Slurm node name (a machine's host name may differ: --name). */
const oneTaskEach = (controller: Controller, t: Transport, names: string[], signal?: AbortSignal) =>
  t.run(controller.slurmArgv('srun', ['-w', names.join(','), `-N${names.length}`, `-n${names.length}`, '--job-name=citc-node-add', 'printenv', 'SLURMD_NODENAME']), {timeoutMs: 120_000, signal})
