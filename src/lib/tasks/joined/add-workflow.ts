// `citc node add HOST…`: machines the user already has join the cluster as static nodes.
//   1. host keys: read from the management node, confirmed (or --host-key), pinned — never accepted silently
//   2. preflight, read-only, every problem of every machine at once (preflight.ts); nothing changed
//   3. the plan; confirm
//   4. the management node serves them (joined-management.yml)
//   5. the cluster's limits.yaml gains them (static:), slurm.conf follows (restart, then reconfigure):
//      before slurmd starts there, since a slurmd whose NodeName slurmctld does not know exits
//   6. node.yml configures them over SSH; the munge key is proved (munge -n here, unmunge there)
//   7. each is IDLE, and a one-task job on it proves it
// A failure after 5 leaves the machines in the configuration, not yet registered: a re-run converges.
import {existsSync} from 'node:fs'
import {resolve} from 'node:path'

import {clusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {managedHere} from '../../cluster/management-node.js'
import {CitcError, usageError} from '../../errors.js'
import {confirmOrRefuse, promptsOf, type Io} from '../../io.js'
import type {StaticNodeSpec} from '../../slurm/limits-types.js'
import {clusterWorkflow, type Step, type WorkflowContext} from '../workflow.js'
import {withJoinedSession, type JoinedSession} from './joined-session.js'
import {playbookRunFor, runMachinesPlaybook, runManagementPlaybook, type JoinedMachine} from './joined-playbooks.js'
import {checkPinned, defaultKeyPath, JOINED_KNOWN_HOSTS, onMachine, pinHostKeys, scanHostKey, type MachineLogin, type ScannedKey} from './machine-access.js'
import {defaultNodeName, nodeHardware, PORTS, preflight, slurmdPackageFor, type Problem} from './preflight.js'
import {parseProbe, PROBE_SCRIPT, type MachineFacts, type Reach} from './probe.js'
import {applyStoredLimits, readStoredLimits, storedLimits, withJoined} from './stored-limits.js'
import {clusterFacts, controllerAddressFor, probeFromManagement, proveMunge, waitIdleAndProve, type ClusterFacts} from './cluster-side.js'

export interface NodeAddInput {
  cluster?: string
  hosts: string[]
  name?: string
  user: string
  port: number
  key?: string
  /** Fingerprints given up front: none, or one per host in the same order. */
  hostKeys: string[]
  partition?: string
  features: string[]
  shared: 'nfs' | 'none'
  adopt: boolean
  dryRun: boolean
  wait: boolean
}

interface Candidate {
  host: string
  name: string
  login: MachineLogin
  key: ScannedKey
  facts?: MachineFacts
  slurmdReach?: Reach
  /** The management node's clock at the middle of the probe, epoch seconds. */
  mgmtNow?: number
  rejoin: boolean
}

interface AddContext extends WorkflowContext, JoinedSession {
  io: Io
  input: NodeAddInput
  record: ClusterRecord
  dir: string
  limitsText: string
  stored: StaticNodeSpec[]
  ctl?: ClusterFacts
  controllerAddr?: string
  candidates: Candidate[]
  specs?: StaticNodeSpec[]
}

export async function runNodeAdd(io: Io, input: NodeAddInput, dataDir: string) {
  if (input.hosts.length === 0) throw usageError('no machine given', 'name one or more machines: citc node add HOST…')
  if (new Set(input.hosts).size !== input.hosts.length) throw usageError('a machine is named twice', 'name each machine once')
  if (input.name && input.hosts.length > 1) throw usageError('--name goes with one machine', 'add the machines one at a time to name each, or let citc name them after their host names')
  if (input.hostKeys.length > 0 && input.hostKeys.length !== input.hosts.length) {
    throw usageError(`${input.hosts.length} machines and ${input.hostKeys.length} --host-key: one --host-key per machine, in the same order`, 'or leave --host-key out and confirm each fingerprint on a terminal')
  }
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  if (!managedHere(record)) {
    throw new CitcError('usage', `citc node add joins machines to local clusters only in this version; ${name} is a ${record.provider} cluster`, {
      hint: 'a cloud cluster needs a route both ways between its VPC and the machine (a VPN), which citc does not build yet',
    })
  }
  const keyPath = input.key === undefined ? defaultKeyPath() : resolve(input.key)
  if (!existsSync(keyPath)) throw usageError(`--key: ${keyPath} does not exist`, 'pass the private key that logs in to the machine')
  const paths = registry.paths(name)

  return clusterWorkflow({paths, command: 'citc node add', renderer: io.renderer, lock: {wait: input.wait, timeoutMs: 30 * 60_000}, log: {kind: 'node-add'}}, (wf) =>
    withJoinedSession(wf, record, 'node-add', async (session) => {
      const limitsText = readStoredLimits(paths.dir)
      const stored = storedLimits(limitsText, record)
      checkPartition(input.partition, stored.partitions, record)
      const ctx: AddContext = {
        ...wf.context,
        ...session,
        io,
        input,
        record,
        dir: paths.dir,
        limitsText,
        stored: stored.staticNodes,
        candidates: input.hosts.map((host) => ({
          host,
          name: input.name ?? '',
          login: {host, port: input.port, user: input.user, keyPath, knownHosts: `${session.workDir}/known_hosts`},
          key: {algorithm: '', blob: '', fingerprint: ''},
          rejoin: false,
        })),
      }
      return wf.guard(async () => {
        await wf.steps([readCluster, hostKeys, probeMachines], ctx)
        const problems = checkAll(ctx)
        if (problems.length > 0) {
          throw new CitcError('invalidInput', `${problems.length === 1 ? 'a machine cannot' : 'machines cannot'} join ${record.name}; nothing was changed:\n${problems.map((p) => `  ${p.host}: ${p.message}\n    → ${p.fix}`).join('\n')}`, {
            details: {problems},
          })
        }
        ctx.specs = ctx.candidates.map((c) => specFor(ctx, c))
        if (!io.json) io.log(describeAdd(ctx).join('\n'))
        const doc = {cluster: record.name, dryRun: input.dryRun, nodes: ctx.specs.map(nodeDoc)}
        if (input.dryRun) return {...doc, applied: false}
        await confirmOrRefuse(io, `Join ${ctx.specs.map((s) => s.name).join(', ')} to ${record.name}?`)
        wf.signal.throwIfAborted()
        await wf.steps([serveAndConfigure, configureMachines, proveKeys, waitIdle], ctx)
        io.note(`Joined: ${ctx.specs.map((s) => s.name).join(', ')}. Full log: ${ctx.log}`)
        return {...doc, applied: true}
      })
    }),
  )
}

/** --partition must name one of the cluster's partitions (limits.yaml's, or finish's default one). */
function checkPartition(partition: string | undefined, names: string[], record: ClusterRecord): void {
  if (partition === undefined) return
  if (!names.includes(partition)) {
    throw usageError(`--partition ${partition}: ${record.name} has no such partition (it has ${names.join(', ')})`, 'name one of those, or add the partition under partitions: in limits.yaml and run citc finish first')
  }
}

const readCluster: Step<AddContext> = {
  title: (ctx) => `Read ${ctx.record.name}: Slurm version, nodes, directory users`,
  run: async (ctx) => {
    ctx.ctl = await clusterFacts(ctx.transport, ctx.controller, ctx.signal)
  },
}

const hostKeys: Step<AddContext> = {
  title: 'Check each machine’s SSH host key',
  run: async (ctx, task) => {
    for (const [i, c] of ctx.candidates.entries()) {
      c.key = await scanHostKey(ctx.transport, c.host, c.login.port, ctx.signal)
      const before = ctx.stored.find((s) => s.address === c.host && s.ssh.port === c.login.port)
      // A key pinned earlier holds (a machine whose key changed must be removed and added again), and so does one given now.
      const pinned = [before?.ssh.hostKey, ctx.input.hostKeys[i]].filter((k): k is string => Boolean(k))
      for (const p of pinned) checkPinned(c.login, c.key, p)
      if (pinned.length === 0) await confirmKey(ctx.io, c, task)
    }
    // This run's known_hosts: citc's pinned keys plus the ones just confirmed. citc's own file
    // gets them only once the machines have joined (a dry run leaves it as it is).
    await pinHostKeys(ctx.transport, ctx.candidates[0].login.knownHosts, ctx.candidates.map((c) => ({host: c.host, port: c.login.port, key: c.key})))
  },
}

async function confirmKey(io: Io, c: Candidate, task: {output: string}): Promise<void> {
  const shown = `${c.host}:${c.login.port} shows host key ${c.key.fingerprint} (${c.key.algorithm})`
  if (!io.interactive) {
    throw new CitcError('usage', `${shown}; citc pins a machine's host key only once it is confirmed`, {
      hint: `check the fingerprint on the machine (ssh-keygen -lf /etc/ssh/ssh_host_${c.key.algorithm.replace(/^ssh-|-.*$/g, '')}_key.pub) and pass --host-key ${c.key.fingerprint}`,
    })
  }
  task.output = shown
  const ok = await promptsOf(io).confirm({message: `${shown}. Is this the machine's key? (check with ssh-keygen -lf on the machine)`, default: false})
  if (!ok) throw new CitcError('cancelled', `host key of ${c.host} not confirmed; nothing was changed`)
}

const probeMachines: Step<AddContext> = {
  title: 'Check each machine (read-only): OS, Slurm, clock, accounts, hardware, ports both ways',
  run: async (ctx) => {
    // The management node's address on the way to each machine: one for all (SlurmctldHost names one).
    const known: {name: string; controller: string}[] = [...ctx.stored]
    for (const c of ctx.candidates) {
      ctx.controllerAddr = await controllerAddressFor(ctx.transport, c.host, known)
      known.push({name: c.host, controller: ctx.controllerAddr})
    }
    const ports = [PORTS.slurmctld, PORTS.ldap, ...(ctx.input.shared === 'nfs' ? [PORTS.nfs] : []), PORTS.srunFirst]
    await Promise.all(
      ctx.candidates.map(async (c) => {
        const before = Date.now() / 1000
        const r = await onMachine(ctx.transport, c.login, ['sh', '-s', '--', ctx.controllerAddr!, ...ports.map(String)], {stdin: PROBE_SCRIPT, timeoutMs: 60_000, signal: ctx.signal, algorithm: c.key.algorithm})
        const after = Date.now() / 1000
        c.facts = parseProbe(r.stdout)
        // The machine read its clock during the probe: compare it with ours at the probe's middle.
        c.mgmtNow = (before + after) / 2
        c.name ||= defaultNodeName(c.facts.hostname)
        const stored = ctx.stored.find((s) => s.name === c.name)
        c.rejoin = stored !== undefined && stored.address === c.host
        c.slurmdReach = await probeFromManagement(ctx.transport, c.host, PORTS.slurmd)
      }),
    )
  },
}

function checkAll(ctx: AddContext): Problem[] {
  const problems: Problem[] = []
  const names = new Map<string, string>()
  for (const c of ctx.candidates) {
    const other = names.get(c.name)
    if (other) problems.push({host: c.host, message: `its node name ${c.name} is also ${other}'s`, fix: 'add one of them on its own with --name'})
    names.set(c.name, c.host)
    problems.push(
      ...preflight({
        host: c.host,
        name: c.name,
        cluster: ctx.record.name,
        facts: c.facts!,
        controller: {...ctx.ctl!, now: c.mgmtNow!},
        nodeNames: ctx.ctl!.nodeNames,
        rejoin: c.rejoin,
        directory: ctx.ctl!.directory,
        adopt: ctx.input.adopt,
        shared: ctx.input.shared,
        controllerAddr: ctx.controllerAddr!,
        slurmdReach: c.slurmdReach!,
      }),
    )
  }
  return problems
}

function specFor(ctx: AddContext, c: Candidate): StaticNodeSpec {
  const before = ctx.stored.find((s) => s.name === c.name)
  const f = c.facts!
  return {
    name: c.name,
    address: c.host,
    controller: ctx.controllerAddr!,
    ssh: {user: c.login.user, port: c.login.port, hostKey: c.key.fingerprint, key: c.login.keyPath},
    hardware: nodeHardware(f),
    slurmVersion: f.slurmdVersion ?? ctx.ctl!.version,
    shared: ctx.input.shared,
    ...(ctx.input.partition ? {partitions: [ctx.input.partition]} : before?.partitions ? {partitions: before.partitions} : {}),
    ...(ctx.input.features.length > 0 ? {features: ctx.input.features} : before?.features ? {features: before.features} : {}),
    ...(before?.weight === undefined ? {} : {weight: before.weight}),
    where: `citc node add ${c.host}`,
  }
}

function describeAdd(ctx: AddContext): string[] {
  const lines = [`Joining ${ctx.specs!.length} machine(s) to ${ctx.record.name} (slurmctld ${ctx.ctl!.version} at ${ctx.controllerAddr}):`]
  ctx.candidates.forEach((c, i) => {
    const s = ctx.specs![i]
    const h = s.hardware
    const pkg = slurmdPackageFor(c.facts!, ctx.ctl!)
    lines.push(
      `  ${s.name}  ${c.login.user}@${c.host}:${c.login.port}  ${c.facts!.osName}, ${c.facts!.arch}${c.rejoin ? '  (joined before: re-applied)' : ''}`,
      `    slurm.conf: NodeName=${s.name} NodeAddr=${s.address} CPUs=${h.sockets * h.coresPerSocket * h.threadsPerCore} SocketsPerBoard=${h.sockets} CoresPerSocket=${h.coresPerSocket} ThreadsPerCore=${h.threadsPerCore} RealMemory=${h.realMemory}`,
      `    installs: slurmd ${pkg || '(the distribution’s)'}, munge with the cluster's key, nslcd → ldaps://${ctx.controllerAddr}/ (the cluster's CA), ${s.shared === 'nfs' ? `NFS ${ctx.controllerAddr}:/mnt/shared` : 'no shared filesystem (--shared none: jobs see the machine’s own /mnt/shared, if any)'}`,
    )
  })
  lines.push('  slurmctld restarts to learn the new nodes (running jobs keep running).')
  return lines
}

function nodeDoc(s: StaticNodeSpec) {
  const {where: _where, ...rest} = s
  return rest
}


function joinedMachines(ctx: AddContext): JoinedMachine[] {
  return ctx.candidates.map((c, i) => ({name: ctx.specs![i].name, login: c.login, slurmPackage: slurmdPackageFor(c.facts!, ctx.ctl!), shared: ctx.specs![i].shared}))
}

/**
 * Two things on the management node that do not depend on each other, at once: it serves the machines
 * (joined-management.yml: slapd on their network, the exports) and slurm.conf gains them (through the
 * cluster's limits.yaml; slurmctld restarts, then reconfigures). Both before node.yml starts slurmd.
 */
const serveAndConfigure: Step<AddContext> = {
  title: 'Serve the machines (directory on their network, exports) and add them to limits.yaml and slurm.conf (restart slurmctld, then reconfigure)',
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    const all = [...ctx.stored.filter((s) => !ctx.specs!.some((n) => n.name === s.name)), ...ctx.specs!]
    const serve = runManagementPlaybook(playbookRunFor(ctx, task), {
      joined_addresses: all.map((s) => s.address),
      controller_addr: ctx.controllerAddr!,
      shared_mode: all.some((s) => s.shared === 'nfs') ? 'nfs' : 'none',
    })
    const configure = applyStoredLimits({ctx, text: withJoined(ctx.limitsText, ctx.specs!), report: (m) => (task.output = m)})
    // Both settle before either failure is reported: nothing is left running behind the error.
    const [served, configured] = await Promise.allSettled([serve, configure])
    for (const r of [served, configured]) if (r.status === 'rejected') throw r.reason
    // Pinned for good only now that the machines are part of the cluster.
    await pinHostKeys(ctx.transport, JOINED_KNOWN_HOSTS, ctx.candidates.map((c) => ({host: c.host, port: c.login.port, key: c.key})))
  },
}

const configureMachines: Step<AddContext> = {
  title: 'Configure the machines over SSH (slurmd, munge, directory, shared filesystem)',
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    await runMachinesPlaybook(playbookRunFor(ctx, task), 'node.yml', joinedMachines(ctx), {
      controller_addr: ctx.controllerAddr,
      slurmctld_port: PORTS.slurmctld,
      shared_dir: '/mnt/shared',
      adopt: ctx.input.adopt,
      munge_key_src: '/etc/munge/munge.key',
      ldap_uri: `ldaps://${ctx.controllerAddr!.includes(':') ? `[${ctx.controllerAddr}]` : ctx.controllerAddr}/`,
      // citc proves the key itself in the next step, with what to do when it fails.
      munge_check: false,
    })
  },
}

const proveKeys: Step<AddContext> = {
  title: 'Prove the munge key: a credential made here is decoded on each machine',
  run: async (ctx) => {
    await Promise.all(ctx.candidates.map((c) => proveMunge(ctx.transport, c.login, ctx.signal)))
  },
}

const waitIdle: Step<AddContext> = {
  title: 'Wait until each machine is IDLE, and run a one-task job on each',
  run: async (ctx, task) => {
    await waitIdleAndProve(ctx.controller, ctx.transport, ctx.specs!.map((s) => s.name), {signal: ctx.signal, report: (m) => (task.output = m)})
  },
}

