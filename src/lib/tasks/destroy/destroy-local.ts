// `citc destroy` for a local cluster: every node powered down (by the node driver, so it works even
// when slurmctld is gone), then playbooks/teardown.yml stops the daemons citc started and removes the
// configuration, state and shared data it created. The cluster's state is deleted last, only after
// all that succeeded. apt packages stay.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {clusterRegistry} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import {confirmByTyping, type Io} from '../../io.js'
import {managedHere} from '../../cluster/management-node.js'
import {providerModule} from '../../providers/registry.js'
import {realContext} from '../../providers/types.js'
import {runPlaybook} from '../../tools/ansible.js'
import {localTransport} from '../../transport/local.js'
import {playbookVars, SHARED_DIR} from '../create/create-local.js'
import {readNodeHostConfig} from '../node/host-config.js'
import {driverFor, elasticLogger} from '../node/node-programs.js'
import {runManagementPlaybook} from '../joined/joined-playbooks.js'
import {releaseMachine} from '../joined/remove-workflow.js'
import {readStoredLimits, storedStaticNodes} from '../joined/stored-limits.js'
import {clusterWorkflow, type Step, type WorkflowContext} from '../workflow.js'

/** The driver as the node programs use it (cluster.json's overrides), or the provider's with its defaults if that is gone. */
async function nodeDriver(record: ClusterRecord) {
  try {
    return await driverFor(readNodeHostConfig())
  } catch {
    // cluster.json is gone: what it said, from the record (its overrides of the driver's settings are lost with it).
    const driver = await providerModule(record.provider).nodeDriver()
    return driver({cluster: record.name, sharedDir: SHARED_DIR, confPath: record.slurm.confPath, section: {}})
  }
}

export async function destroyLocal(io: Io, name: string, dataDir: string, packageRoot: string) {
  const registry = clusterRegistry(dataDir)
  const record = registry.get(name)
  if (!managedHere(record)) throw new CitcError('usage', `${name} is a ${record.provider} cluster, not a local one`)
  await confirmByTyping(io, name, `destroying cluster ${name} (its nodes, daemons, configuration and shared data on this machine)`)
  const stopped: string[] = []
  const released: string[] = []
  const warnings: string[] = []
  await clusterWorkflow(
    {
      paths: registry.paths(name),
      command: 'citc destroy',
      renderer: io.renderer,
      rewrap: (error, {logFile}) =>
        error.kind === 'cancelled'
          ? error
          : new CitcError(error.kind, `destroy did not finish: ${error.message}`, {
              hint: `the cluster's state is kept; fix the cause and run citc destroy ${name} again (log: ${logFile('teardown')})`,
              details: error.details,
            }),
    },
    async (wf) => {
      const ctx: DestroyLocalContext = {...wf.context, record, packageRoot, dir: registry.paths(name).dir, stopped, forget: () => registry.remove(name), released, warnings}
      await wf.steps([releaseJoined, powerDownNodes, teardown, checkNothingRuns, forget], ctx)
    },
  )
  for (const w of warnings) io.note(`warning: ${w}`)
  if (released.length > 0) io.log(`Released the joined machines: ${released.join(', ')}.`)
  io.log(`Destroyed ${name}. Packages installed with apt (slurm, munge, mariadb, slapd, nslcd, ansible-core, packer, mmdebstrap, prometheus, prometheus-node-exporter) stay installed.`)
  return {destroyed: name, poweredDown: stopped, packagesKept: true, releasedMachines: released, warnings}
}

interface DestroyLocalContext extends WorkflowContext {
  record: ClusterRecord
  /** The citc package on this machine: playbooks/teardown.yml. */
  packageRoot: string
  /** The cluster's state dir (the playbook's variables file goes there). */
  dir: string
  /** The nodes powered down (the result's poweredDown). */
  stopped: string[]
  /** Delete citc's state of the cluster. */
  forget: () => void
  /** Joined machines released, and the ones that could not be. */
  released: string[]
  warnings: string[]
}

/** The joined machines of the cluster's limits.yaml; one that cannot be read must not stop destroy: a warning. */
function joinedMachines(ctx: DestroyLocalContext) {
  try {
    return storedStaticNodes(readStoredLimits(ctx.dir), ctx.record)
  } catch (error) {
    const why = `cannot read the joined machines from ${ctx.dir}/limits.yaml (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); stop slurmd and remove /etc/munge/munge.key on them by hand`
    if (!ctx.warnings.includes(why)) ctx.warnings.push(why)
    return []
  }
}

/** Joined machines (citc node add) are released as `citc node remove` does, each said out loud; one that cannot be reached is a warning. */
const releaseJoined: Step<DestroyLocalContext> = {
  title: 'Release the joined machines (slurmd stopped, the cluster’s key and settings removed over SSH)',
  skip: (ctx) => (joinedMachines(ctx).length === 0 ? 'no joined machines' : false),
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    const joined = joinedMachines(ctx)
    const workDir = mkdtempSync(join(tmpdir(), 'citc-destroy-'))
    const run = {transport: localTransport(), packageRoot: ctx.packageRoot, baseVars: playbookVars(ctx.record, ctx.packageRoot), workDir, logFile: ctx.logFile('teardown'), signal: ctx.signal, onTask: (t: string) => (task.output = t)}
    try {
      for (const s of joined) {
        try {
          await releaseMachine(run, s)
          ctx.released.push(s.name)
        } catch (error) {
          ctx.warnings.push(`${s.name} (${s.address}) was not cleaned: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}; stop slurmd and remove /etc/munge/munge.key there by hand`)
        }
      }
      await runManagementPlaybook(run, {joined_addresses: [], controller_addr: joined[0].controller, shared_mode: 'none'})
    } finally {
      rmSync(workDir, {recursive: true, force: true})
    }
    task.title = `Released ${ctx.released.length} of ${joined.length} joined machine(s): ${joined.map((s) => s.name).join(', ')}`
  },
}

const powerDownNodes: Step<DestroyLocalContext> = {
  title: 'Power down every compute node',
  run: async (ctx, task) => {
    const driver = await nodeDriver(ctx.record)
    const running = (await driver.list()).map((i) => i.name)
    const log = elasticLogger('/var/log/citc/elastic.log', 'citc-destroy')
    const ctxLog = (m: string) => {
      log(m)
      task.output = m
    }
    const outcomes = await driver.suspend(
      running.map((n) => ({name: n, shape: 'unknown'})),
      realContext(ctxLog, 5 * 60_000),
    )
    const failed = outcomes.filter((o) => !o.ok)
    if (failed.length > 0) throw new CitcError('remote', `could not stop ${failed.map((f) => `${f.name} (${f.error})`).join(', ')}`)
    ctx.stopped.push(...running)
    task.title = `Powered down ${running.length} running node(s)`
  },
}

const teardown: Step<DestroyLocalContext> = {
  title: 'Stop the daemons and remove what citc created (playbooks/teardown.yml)',
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    const varsFile = join(ctx.dir, 'ansible-vars.json')
    writeFileSync(varsFile, JSON.stringify(playbookVars(ctx.record, ctx.packageRoot), null, 2), {mode: 0o600})
    await runPlaybook(localTransport(), {
      playbookPath: join(ctx.packageRoot, 'playbooks', 'teardown.yml'),
      extraVarsPath: varsFile,
      logFile: ctx.logFile('teardown'),
      onTask: (t) => {
        task.output = t
      },
      signal: ctx.signal,
    })
  },
}

const checkNothingRuns: Step<DestroyLocalContext> = {
  title: 'Check that nothing is left running',
  run: async (ctx) => {
    const left = await (await nodeDriver(ctx.record)).list()
    if (left.length > 0) throw new CitcError('remote', `nodes still running: ${left.map((i) => i.name).join(', ')}`)
  },
}

const forget: Step<DestroyLocalContext> = {
  title: (ctx) => `Forget cluster ${ctx.record.name}`,
  run: (ctx) => ctx.forget(),
}
