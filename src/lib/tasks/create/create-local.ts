// `citc create` for a provider whose management node is this machine (ManagementNodeKind
// 'this-machine': local): it becomes the management node of an elastic Slurm cluster whose compute
// nodes are slurmd processes started on demand. The same management playbook
// that cloud management nodes run, with a local connection; then finish with the chosen limits.
// Every step but the last is journaled (register, ansible, playbook, finish): a re-run converges,
// `--resume` skips what is done. The playbook and finish steps are cloud create's too (management-steps.ts).
import {writeFileSync} from 'node:fs'
import {hostname} from 'node:os'
import {join} from 'node:path'

import {clusterOnThisMachine} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import {monitoringOn, monitoringSettings} from '../../providers/monitoring-setting.js'
import {checkPreflight, gatherFacts} from '../../providers/local/preflight.js'
import type {Provider} from '../../providers/registry.js'
import {Controller} from '../../slurm/controller.js'
import {run, which} from '../../tools/exec.js'
import {localTransport} from '../../transport/local.js'
import type {Transport} from '../../transport/types.js'
import {generateFromLimits} from '../finish/generate-config.js'
import {createImageSteps} from '../rebuild-image/image-steps.js'
import {createImageContext} from '../rebuild-image/rebuild-image.js'
import {clusterWorkflow, type Step} from '../workflow.js'
import {applyLimits, configureManagementNode, type ManagementContext} from './management-steps.js'

export const SHARED_DIR = '/mnt/shared'
export const LOCAL_CONF_PATH = `${SHARED_DIR}/etc/slurm/slurm.conf`
const DEFAULT_SUSPEND_TIME = 60

export interface CreateLocalInput {
  name: string
  /** The provider (one whose management node is this machine). */
  provider: Provider
  limitsText: string
  limitsFile: string
  /** Seconds idle before power-down; undefined keeps the cluster's (60 for a new one). */
  suspendTime?: number
  /** --no-monitoring (false): a new cluster without Prometheus and the collector; undefined: on. */
  monitoring?: boolean
  force: boolean
  resume: boolean
  /** The citc package on this machine: its bin/run.js runs the node programs, its playbooks/ configure. */
  packageRoot: string
}

export async function createLocal(io: Io, input: CreateLocalInput, dataDir: string) {
  const registry = clusterRegistry(dataDir)
  // Validate the limits before anything else (exit 3, nothing changed).
  generateFromLimits({provider: input.provider, clusterId: input.name, limitsText: input.limitsText, limitsFile: input.limitsFile})
  const notes = checkPreflight(await gatherFacts(clusterOnThisMachine), input.name, input.force, input.monitoring !== false)
  for (const n of notes) io.note(n)

  const exists = registry.has(input.name)
  if (exists && registry.get(input.name).provider !== input.provider) {
    throw new CitcError('invalidInput', `cluster ${input.name} exists and is not a ${input.provider} cluster`, {hint: 'choose another --name'})
  }
  io.note(
    `This machine (${hostname()}) becomes the management node of cluster ${input.name}: citc installs Slurm, munge, MariaDB and OpenLDAP ` +
      `${input.monitoring === false ? '' : '(and Prometheus with node-exporter, on loopback only) '}with apt, starts their services, and runs compute nodes as slurmd processes here.`,
  )
  if (!exists) await confirmOrRefuse(io, `Create ${input.provider} cluster ${input.name} on this machine?`)

  if (!exists) {
    registry.create({
      name: input.name,
      provider: input.provider,
      createdAt: new Date().toISOString(),
      origin: 'created',
      mgmt: {host: 'localhost', port: 22, user: 'root', hostname: hostname()},
      slurm: {confPath: LOCAL_CONF_PATH},
      settings: {suspendTime: input.suspendTime ?? DEFAULT_SUSPEND_TIME, ...monitoringSettings(input.monitoring)},
    })
  }
  const paths = registry.paths(input.name)
  return clusterWorkflow(
    {
      paths,
      command: 'citc create',
      renderer: io.renderer,
      journal: {resume: input.resume, reset: !input.resume && exists},
      rewrap: (error, {interrupted, logFile}) => {
        const resumeHint = `citc create --name ${input.name} --resume continues where it stopped`
        if (interrupted) return new CitcError('cancelled', 'create interrupted', {hint: resumeHint})
        return new CitcError(error.kind, error.message, {
          hint: `${error.hint ? error.hint + '; then ' : ''}${resumeHint} (Ansible log: ${logFile('ansible')})`,
          details: error.details,
        })
      },
    },
    async (wf) => {
      // A re-run with another --suspend-time changes it (finish writes it into slurm.conf): under the
      // lock, as every write of the cluster's state.
      const suspendTime = input.suspendTime
      if (exists && suspendTime !== undefined && registry.get(input.name).settings?.suspendTime !== suspendTime) {
        registry.update(input.name, (r) => {
          r.settings = {...r.settings, suspendTime}
        })
      }
      const record = registry.get(input.name)
      writeFileSync(join(paths.dir, 'limits.yaml'), input.limitsText, {mode: 0o600})
      const ansibleLog = wf.logFile('ansible')
      const transport = await wf.connect(async () => localTransport(), {log: 'create'})
      wf.journal.markDone('register')
      const limits = {file: input.limitsFile, text: input.limitsText}
      const ctx: LocalCreateContext = {...wf.context, record: () => record, root: () => transport, ansibleLog, limits: () => limits, dir: paths.dir, packageRoot: input.packageRoot}
      await wf.steps(LOCAL_CREATE_STEPS, ctx)
      // The first compute-node image (or a new one when what goes into it changed): nodes boot it.
      const imageCtx = await createImageContext(wf, {record, management: transport, clusterDir: paths.dir})
      await wf.steps(createImageSteps(), imageCtx)

      const next: Array<[string, string]> = [
        [`citc status -c ${input.name}`, 'the controller and every node'],
        [`citc add-user NAME --key ~/.ssh/id_ed25519.pub -c ${input.name}`, 'a directory user who can submit jobs'],
        // Nodes boot the cluster's image: they share only the shared filesystem with this machine.
        [`sbatch --wait -N2 -D ${SHARED_DIR} --wrap 'srun hostname'`, `runs on two nodes started for it (output in ${SHARED_DIR})`],
        [`citc destroy ${input.name}`, 'take it all away again'],
      ]
      const width = Math.max(...next.map(([c]) => c.length))
      io.log(
        [
          `Cluster ${input.name} is ready. This machine is its management node; compute nodes start when jobs need them`,
          `and stop after ${record.settings?.suspendTime ?? DEFAULT_SUSPEND_TIME} s idle. Next:`,
          ...next.map(([c, why]) => `  ${c.padEnd(width)}  # ${why}`),
        ].join('\n'),
      )
      return {cluster: input.name, provider: input.provider, confPath: record.slurm.confPath, ansibleLog, image: imageCtx.built?.name, steps: wf.journal.steps().map((s) => s.step)}
    },
  )
}

interface LocalCreateContext extends ManagementContext {
  /** The cluster's state dir (the playbook's variables file goes there). */
  dir: string
  packageRoot: string
}

const installAnsible: Step<LocalCreateContext> = {
  title: 'Install Ansible (ansible-core) if missing',
  journal: 'ansible',
  run: async (ctx, task) => {
    if (!(await which('ansible-playbook'))) {
      task.output = 'apt-get install -y ansible-core'
      await aptInstall(['ansible-core'], ctx.signal, ctx.ansibleLog)
    }
  },
}

/** management.yml with a local connection: this machine is the management node. */
const configureThisMachine = configureManagementNode<LocalCreateContext>({
  title: 'Configure the management node (playbooks/management.yml)',
  prepare: (ctx) => {
    const extraVarsPath = join(ctx.dir, 'ansible-vars.json')
    writeFileSync(extraVarsPath, JSON.stringify(playbookVars(ctx.record(), ctx.packageRoot), null, 2), {mode: 0o600})
    return {transport: localTransport(), playbookPath: join(ctx.packageRoot, 'playbooks', 'management.yml'), extraVarsPath}
  },
  done: ({ok, changed}) => `Configure the management node (ok=${ok} changed=${changed})`,
})

const ensureAccounting: Step<LocalCreateContext> = {
  title: (ctx) => `Accounting: the cluster and its default account "${ctx.record().name}" in slurmdbd`,
  run: (ctx) => ensureAccount(ctx.root(), ctx.record()),
}

/** The journal names (register, ansible, playbook, finish) are what existing clusters' --resume reads. */
const LOCAL_CREATE_STEPS = [installAnsible, configureThisMachine, applyLimits<LocalCreateContext>(), ensureAccounting]

/** The variables the management playbook takes (group_vars/all.yml documents them). */
export function playbookVars(record: ClusterRecord, packageRoot: string) {
  return {
    provider: record.provider,
    cluster_name: record.name,
    citc_bin: join(packageRoot, 'bin', 'run.js'),
    citc_node_bin: process.execPath,
    citc_monitoring: monitoringOn(record),
  }
}

async function aptInstall(packages: string[], signal: AbortSignal, logFile: string) {
  const env = {DEBIAN_FRONTEND: 'noninteractive'}
  const update = await run('apt-get', ['update', '-qq'], {env, signal, logFile})
  if (update.exitCode !== 0) throw new CitcError('remote', `apt-get update failed: ${update.stderr.trim().split('\n').at(-1)}`)
  const r = await run('apt-get', ['install', '-y', '-qq', ...packages], {env, signal, logFile})
  if (r.exitCode !== 0) throw new CitcError('remote', `apt-get install ${packages.join(' ')} failed: ${r.stderr.trim().split('\n').at(-1)}`)
}

/**
 * Users need an association to submit (AccountingStorageEnforce=associations): make sure slurmdbd
 * knows the cluster and its default account, which `citc add-user` puts users under.
 */
async function ensureAccount(transport: Transport, record: ClusterRecord) {
  const name = record.name
  const controller = new Controller(transport, {confPath: record.slurm.confPath, restartCommand: record.slurm.restartCommand})
  const sacctmgr = (args: string[]) => transport.run(controller.slurmArgv('sacctmgr', ['-i', ...args]), {timeoutMs: 60_000})
  const clusters = await sacctmgr(['-n', '-P', 'show', 'cluster', 'format=cluster'])
  if (!clusters.stdout.split('\n').includes(name)) await transport.check(controller.slurmArgv('sacctmgr', ['-i', 'add', 'cluster', name]))
  const accounts = await sacctmgr(['-n', '-P', 'show', 'account', name, 'format=account'])
  if (!accounts.stdout.split('\n').includes(name)) {
    await transport.check(controller.slurmArgv('sacctmgr', ['-i', 'add', 'account', name, `Cluster=${name}`, `Description=citc cluster ${name}`, 'Organization=citc']))
  }
}
