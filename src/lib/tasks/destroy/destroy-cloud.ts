// `citc destroy` for a cloud cluster, in this order:
//   1 every powered-up compute node powered down through the management node's own node program
//     (`<programsDir>/suspend <hostlist>`, as slurmctld would) — compute nodes are not in the
//     Terraform state; any failure there (dead management node or controller, a node program that
//     fails or hangs) is a warning, not a stop: step 2 finds their machines by tag;
//   2 compute instances still tagged with the cluster and unknown to the state, terminated — before
//     Terraform deletes the network, which the cloud refuses while machines still use it;
//   3 terraform destroy of everything the state knows;
//   4 a sweep by the cluster tag for what is left (images, snapshots, stray instances), deleted;
//   5 citc's state for the cluster deleted — only when all of that succeeded.
// A failed destroy keeps the state and says exactly what remains and how to retry.
// A cluster whose `terraform apply` never started (create stopped at init or plan, or --plan-only;
// the journal knows) has nothing in the cloud: it is forgotten without Terraform, the cloud CLI or
// credentials, and the output says so.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {Journal} from '../../cluster/journal.js'
import {withLock} from '../../cluster/lock.js'
import {clusterRegistry, type ClusterPaths} from '../../cluster/registry.js'
import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError, withRetry} from '../../errors.js'
import {confirmByTyping, type Io} from '../../io.js'
import {cloudInputsFor, cloudOf, PENDING_HOST, readClusterKeys, sweeperFor, SWEEP_TOOLS, terraformEnvFor} from '../../providers/cloud-cluster.js'
import {renderTerraformDir} from '../../providers/cloud.js'
import {describeResource, sweep, type SweepFilter, type SweepReport} from '../../providers/sweep.js'
import {Controller, isPoweredUp} from '../../slurm/controller.js'
import {compressHostlist} from '../../slurm/hostlist.js'
import {detectTerraform, Terraform, type ResourceEvent} from '../../tools/terraform.js'
import {withLog} from '../../transport/logged.js'
import {connectManagement} from '../../transport/management.js'
import {APPLY_STARTED} from '../create/create-cloud.js'
import {taskList, withInterrupts} from '../listr.js'

type StateFile = {resources?: Array<{mode?: string; type?: string; name?: string; module?: string; instances?: Array<{attributes?: {id?: unknown; name?: unknown}}>}>}

function readState(terraformDir: string): StateFile | undefined {
  const file = join(terraformDir, 'terraform.tfstate')
  if (!existsSync(file)) return {}
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StateFile
  } catch {
    return undefined
  }
}

/** Managed resources in a local Terraform state file ("aws_instance.mgmt", …); [] without one. */
export function stateResources(terraformDir: string): string[] {
  const state = readState(terraformDir)
  if (!state) return ['(terraform.tfstate could not be read)']
  return (state.resources ?? [])
    .filter((r) => r.mode === 'managed' && r.type && r.name)
    .map((r) => `${r.module ? `${r.module}.` : ''}${r.type}.${r.name}`)
    .sort()
}

/**
 * The cloud ids and names of everything the state manages (AWS i-…, an OCID, a Google name or
 * ".../instances/NAME"): the early sweep of compute instances must leave those to Terraform.
 */
export function stateIds(terraformDir: string): Set<string> {
  const ids = new Set<string>()
  for (const r of readState(terraformDir)?.resources ?? []) {
    for (const i of r.instances ?? []) {
      for (const v of [i.attributes?.id, i.attributes?.name]) {
        if (typeof v !== 'string' || v === '') continue
        ids.add(v)
        ids.add(v.slice(v.lastIndexOf('/') + 1))
      }
    }
  }
  return ids
}

/**
 * Did Terraform never start to apply for this cluster? Then nothing of it exists in the cloud. Only
 * when everything agrees: create did not finish, no address or outputs were recorded, the journal
 * has no apply (started or done), and no Terraform state holds a resource (a run by an older citc,
 * which did not journal the start, may have left one).
 */
export function applyNeverStarted(record: ClusterRecord, paths: ClusterPaths): boolean {
  if (!record.cloud || record.phase !== 'creating' || record.mgmt.host !== PENDING_HOST || record.terraform) return false
  const journal = new Journal(paths.journal).load()
  if (journal.done(APPLY_STARTED) || journal.done('apply')) return false
  return stateResources(paths.terraformDir).length === 0
}

/** Forget a cluster whose apply never started (see applyNeverStarted), under its lock. */
export async function forgetNeverApplied(io: Io, name: string, dataDir: string, command: string): Promise<string> {
  const registry = clusterRegistry(dataDir)
  const paths = registry.paths(name)
  await withLock(paths.dir, command, () => {
    // Checked again under the lock: a create may have got further meanwhile.
    if (!applyNeverStarted(registry.get(name), paths)) {
      throw new CitcError('usage', `${name}: terraform apply has started since`, {hint: `citc destroy ${name}`})
    }
    registry.remove(name)
  })
  const message = `Forgot ${name}: terraform apply never started for it, so nothing was made in the cloud; no Terraform, cloud CLI or credentials were needed.`
  io.log(message)
  return message
}

export interface DestroyCloudOptions {
  skipSweep: boolean
}

export async function destroyCloud(io: Io, name: string, dataDir: string, opts: DestroyCloudOptions) {
  const registry = clusterRegistry(dataDir)
  const record = registry.get(name)
  const {provider} = cloudOf(record)
  const paths = registry.paths(name)
  if (applyNeverStarted(record, paths)) {
    await confirmByTyping(io, name, `destroying cluster ${name} (terraform apply never started for it: only citc's state for it is deleted)`)
    await forgetNeverApplied(io, name, dataDir, 'citc destroy')
    return {destroyed: name, provider, applyStarted: false, poweredDown: [], terraform: {destroyed: 0, ran: false}, sweep: {skipped: true}, warnings: []}
  }
  await confirmByTyping(io, name, `destroying cluster ${name} (its compute nodes, everything Terraform made in ${provider}, and anything else tagged cluster=${name})`)
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const tfLog = join(paths.logsDir, `terraform-destroy-${stamp}.log`)
  const remoteLog = join(paths.logsDir, `destroy-${stamp}.log`)
  const sweepLog = join(paths.logsDir, `sweep-${stamp}.log`)
  const warnings: string[] = []
  const poweredDown: string[] = []
  let destroyed = 0
  let swept: SweepReport | undefined
  // The sweep that stopped the destroy (its failures are what remains).
  let stoppedBy: SweepReport | undefined
  // Where it got to (set inside the tasks), for saying what remains.
  const at: {stage: 'nodes' | 'instances' | 'terraform' | 'sweep' | 'forget'} = {stage: 'nodes'}
  const warn = (m: string) => {
    warnings.push(m)
    io.note(`warning: ${m}`)
  }

  const lookedFor = opts.skipSweep
    ? `--skip-sweep does not look for them: check the ${provider} console for instances tagged cluster=${name}, they may still run (and cost)`
    : 'the sweep looks for them by tag'

  try {
    await withLock(paths.dir, 'citc destroy', () =>
      withInterrupts(async (signal) => {
        /** Step 1: throws one line saying why when the nodes could not all be powered down. */
        const powerDownNodes = async (task: {title: string; output?: string}) => {
          let root
          try {
            root = withLog(await connectManagement(record, {asRoot: true, signal, readyTimeoutMs: 15_000}), remoteLog)
          } catch (error) {
            if (signal.aborted) throw error
            throw new Error(`the management node ${record.mgmt.host} cannot be reached (${firstLine(error)})`)
          }
          try {
            const controller = new Controller(root, {confPath: record.slurm.confPath})
            if (!(await controller.ping())) throw new Error('slurmctld on the management node does not answer')
            const up = (await controller.nodes()).filter(isPoweredUp).map((n) => n.name)
            if (up.length === 0) {
              task.title = 'Power down compute nodes: none running'
              return
            }
            const hostlist = compressHostlist(up)
            task.output = `${record.slurm.programsDir}/suspend ${hostlist}`
            const r = await root.run([`${record.slurm.programsDir}/suspend`, hostlist], {timeoutMs: 5 * 60_000, signal})
            if (r.exitCode !== 0) throw new Error(`powering down ${hostlist} failed (exit ${r.exitCode}: ${(r.stderr || r.stdout).trim().split('\n').slice(-1)[0] ?? ''})`)
            poweredDown.push(...up)
            task.title = `Powered down ${up.length} compute node(s): ${hostlist}`
          } finally {
            await root.close().catch(() => {})
          }
        }

        /** Steps 2 and 4: a sweep that could not list or delete everything stops the destroy. */
        const sweepOrThrow = async (filter: SweepFilter, report: (m: string) => void): Promise<SweepReport> => {
          const r = await sweep(sweeperFor(record, {logFile: sweepLog, signal}), report, filter)
          if (r.listError) {
            stoppedBy = r
            const tool = SWEEP_TOOLS[provider]
            throw new CitcError('remote', `the sweep for leftovers tagged cluster=${name} could not run: ${r.listError}`, {
              hint:
                `${/not installed/.test(r.listError) ? tool.install : `check the credentials and the log ${sweepLog}`}; ` +
                `or, having checked the ${provider} console for resources tagged cluster=${name} yourself, add --skip-sweep`,
            })
          }
          if (r.failed.length > 0) {
            stoppedBy = r
            throw new CitcError('remote', `the sweep could not delete: ${r.failed.map((f) => `${describeResource(f.resource)} (${f.error})`).join('; ')}`, {
              hint: `delete them in the ${provider} console or fix the cause (log: ${sweepLog}), then run \`citc destroy ${name}\` again`,
            })
          }
          return r
        }

        const tool = await detectTerraform({signal})
        const tf = new Terraform(tool, {dir: paths.terraformDir, logFile: tfLog, env: terraformEnvFor(record), signal, cloud: provider})
        await taskList(
          [
            {
              title: 'Power down every compute node (through the management node)',
              task: async (_, task) => {
                at.stage = 'nodes'
                if (record.mgmt.host === PENDING_HOST) {
                  task.title = 'Power down compute nodes: no management node was made (create stopped before apply)'
                  return
                }
                try {
                  await powerDownNodes(task)
                } catch (error) {
                  if (signal.aborted) throw error
                  warn(`${firstLine(error)}: its compute nodes were not powered down; ${lookedFor}`)
                  task.title = `Power down compute nodes: FAILED (${firstLine(error)})`
                }
              },
            },
            {
              title: `Terminate compute instances still tagged cluster=${name}`,
              skip: () => (opts.skipSweep ? 'skipped (--skip-sweep)' : false),
              task: async (_, task) => {
                at.stage = 'instances'
                const early = await sweepOrThrow({kinds: ['instance'], keep: stateIds(paths.terraformDir)}, (m) => (task.output = m))
                task.title = early.found.length === 0 ? 'Compute instances: none left running' : `Terminated ${early.deleted.map(describeResource).join(', ')}`
                swept = early
              },
            },
            {
              title: `${tool.binary} destroy`,
              task: async (_, task) => {
                at.stage = 'terraform'
                renderTerraformDir(paths.terraformDir, cloudInputsFor(record, readClusterKeys(paths)))
                if (!existsSync(join(paths.terraformDir, '.terraform'))) {
                  task.output = `${tool.binary} init`
                  await tf.init({signal})
                }
                const onResource = (e: ResourceEvent) => {
                  if (e.phase === 'start') task.output = `${e.address}: destroying…`
                  else if (e.phase === 'progress') task.output = `${e.address}: still destroying… (${e.elapsedS ?? '?'} s)`
                }
                const summary = await tf.destroy(onResource, {signal})
                destroyed = summary.destroyed
                task.title = `${tool.binary} destroy: ${summary.destroyed} destroyed`
              },
              rendererOptions: {outputBar: 1},
            },
            {
              title: `Sweep what is still tagged cluster=${name} (instances, images, snapshots)`,
              skip: () => (opts.skipSweep ? 'skipped (--skip-sweep)' : false),
              task: async (_, task) => {
                at.stage = 'sweep'
                const late = await sweepOrThrow({}, (m) => (task.output = m))
                swept = {found: [...(swept?.found ?? []), ...late.found], deleted: [...(swept?.deleted ?? []), ...late.deleted], failed: []}
                task.title = late.found.length === 0 ? `Sweep: nothing else tagged cluster=${name}` : `Sweep: deleted ${late.deleted.map(describeResource).join(', ')}`
              },
            },
            {
              title: `Forget cluster ${name}`,
              task: () => {
                at.stage = 'forget'
                registry.remove(name)
              },
            },
          ],
          io.renderer,
        ).run()
      }),
    )
  } catch (error) {
    if (!(error instanceof CitcError)) throw error
    const remains: string[] = []
    if (at.stage === 'nodes' || at.stage === 'instances' || at.stage === 'terraform') {
      const left = stateResources(paths.terraformDir)
      if (left.length > 0) remains.push(`Terraform still manages ${left.length} resource(s): ${left.join(', ')}`)
      if (at.stage !== 'terraform' && poweredDown.length === 0 && record.mgmt.host !== PENDING_HOST) remains.push(`compute nodes tagged cluster=${name} may still run`)
    }
    if (stoppedBy) {
      if (stoppedBy.listError) remains.push(`unknown: nothing tagged cluster=${name} could be listed`)
      for (const f of stoppedBy.failed) remains.push(describeResource(f.resource))
    }
    const what = remains.length > 0 ? `\nWhat remains: ${remains.join('; ')}.` : ''
    const kept = `citc's state for ${name} is kept (${paths.dir}).`
    if (error.kind === 'cancelled') {
      throw new CitcError('cancelled', `destroy interrupted${what}\n${kept}`, {hint: `run \`citc destroy ${name}\` again to finish it`})
    }
    throw new CitcError(error.kind, `destroy did not finish: ${error.message}${what}\n${kept}`, {
      hint: withRetry(error, `run \`citc destroy ${name}\` again (it picks up where this one stopped)`),
      details: {...error.details, remains, warnings, logs: {terraform: tfLog, sweep: sweepLog}},
    })
  }
  io.log(`Destroyed ${name}: ${poweredDown.length} compute node(s) powered down, ${destroyed} Terraform resource(s) destroyed${swept ? `, ${swept.deleted.length} leftover(s) swept` : ''}.`)
  for (const w of warnings) io.log(`  note: ${w}`)
  return {
    destroyed: name,
    provider,
    applyStarted: true,
    poweredDown,
    terraform: {destroyed, ran: true},
    sweep: swept ? {found: swept.found, deleted: swept.deleted} : {skipped: true},
    warnings,
  }
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0]
}
