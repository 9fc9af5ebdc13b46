// `citc create --provider aws|google|oracle`: Terraform builds the network, the shared filesystem and
// the management node; citc then configures that node over SSH with its own playbooks.
//
// Steps (each a task with its duration, journaled so `--resume` continues where a run stopped —
// Ctrl-C included — and a plain re-run converges):
//   1 render   keys (admin + the management node's ed25519 host key, pinned in cluster.yaml before any
//              connection) and the Terraform working dir in the cluster's state dir
//   2 plan     terraform init, plan -out, a summary of the plan, a confirmation (--yes);
//              --plan-only stops here
//   3 apply    terraform apply of exactly that plan, the resource being created as task output
//   4 outputs  terraform output -json → cluster.yaml; wait for SSH (bounded backoff, host key pinned)
//   5 setup    Node.js/ansible-core (apt), citc itself (its bundle with node_modules built here →
//              upload → unpacked with no network), then management.yml run on the node
//              (ansible-playbook there, over SSH); every wait on the node's network is bounded
//   6 finish   slurm.conf from the limits, if any were given
//   7 image    the first compute-node image, built with Packer on the management node (as local
//              create does; cloud-image-steps.ts): skipped when the current one has the same inputs
// Where: render, init, plan, apply and outputs in cloud-terraform-steps.ts; SSH, tools and citc's
// install in cloud-management-node-steps.ts; the playbook and finish steps in management-steps.ts
// (shared with local create); registering the cluster in register-cloud-cluster.ts.
//
// The journal records "apply-started" before Terraform may create anything, and keeps it across a
// plain re-run's reset: destroy trusts its absence to forget a cluster without Terraform.
//
// A stand-in management node (the tests' sshd on loopback) is reached through CreateCloudOptions.
// standIn — set by create's hidden --stand-in file (src/lib/stand-in.ts), never by the environment or
// by Terraform outputs.
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {clusterRegistry} from '../../cluster/registry.js'
import {CitcError, usageError, withRetry} from '../../errors.js'
import {confirmOrRefuse, type Io} from '../../io.js'
import {terraformEnvFor} from '../../providers/cloud-cluster.js'
import type {ManagementNodeStandIn} from '../../stand-in.js'
import type {CloudProvider} from '../../providers/cloud.js'
import {cloudModule} from '../../providers/registry.js'
import {describePlan, detectTerraform, Terraform, type PlanSummary} from '../../tools/terraform.js'
import {shellQuote} from '../../shell-quote.js'
import {sshArgs} from '../../transport/ssh-command.js'
import type {ResolvedCloudCreate} from './cloud-wizard.js'
import {generateFromLimits} from '../finish/generate-config.js'
import {clusterWorkflow} from '../workflow.js'
import {type CloudCreateContext, connected} from './cloud-create-context.js'
import {closeSession, configureCloudNode, connectToNode, installCitc, installNodeAndAnsible} from './cloud-management-node-steps.js'
import {APPLY_STARTED, PLAN_FILE, PLAN_STEPS, readOutputs, terraformApply} from './cloud-terraform-steps.js'
import {createImageSteps} from '../rebuild-image/image-steps.js'
import {cloudImageContext} from './cloud-image-steps.js'
import {applyLimits} from './management-steps.js'
import {checkExisting, registerNew, updateExisting} from './register-cloud-cluster.js'
import {sshExposureWarning} from './ssh-cidr.js'

export interface CreateCloudOptions {
  name: string
  /** A new cluster's answers; undefined when continuing or re-running an existing one. */
  resolved?: ResolvedCloudCreate
  /** Limits given on this run (a new cluster's come in resolved). */
  limits?: {text: string; file: string}
  suspendTime?: number
  /** --no-monitoring (false) for a new cluster; undefined: on. */
  monitoring?: boolean
  resume: boolean
  planOnly: boolean
  sshTimeoutS: number
  packageRoot: string
  /** A management node that is not the machine Terraform made (the tests' sshd on loopback): create's hidden --stand-in. */
  standIn?: ManagementNodeStandIn
}

/** Steps 3-6, after the confirmation. */
const APPLY_STEPS = [terraformApply, readOutputs, connectToNode, installNodeAndAnsible, installCitc, configureCloudNode, applyLimits<CloudCreateContext>()]

export async function createCloud(io: Io, opts: CreateCloudOptions, dataDir: string) {
  const registry = clusterRegistry(dataDir)
  const name = opts.name
  const exists = registry.has(name)
  if (!exists && !opts.resolved) throw new CitcError('noCluster', `no cluster named "${name}" to continue`, {hint: 'start it with `citc create --provider …` (without --resume)'})
  if (!exists && opts.resume) throw new CitcError('noCluster', `no cluster named "${name}" to continue`, {hint: 'start it without --resume'})
  const provider = (exists ? registry.get(name).provider : opts.resolved!.provider) as CloudProvider
  const limits = opts.limits ?? opts.resolved?.limits
  // Limits are checked before anything happens (exit 3, nothing changed).
  if (limits) generateFromLimits({provider, clusterId: name, limitsText: limits.text, limitsFile: limits.file})
  // Without a terminal, applying needs --yes: say so before anything is created.
  if (!opts.planOnly && !io.yes && !io.interactive) {
    throw usageError('creating cloud resources needs a confirmation, and there is no terminal to ask on', 'pass --yes (or look first with --plan-only)')
  }
  const tool = await detectTerraform()
  // An existing cluster's record is changed only under its lock (below); a new one is made here (its
  // directory, where the lock lives, does not exist before).
  if (exists) checkExisting(opts, registry)
  else registerNew(io, opts.resolved!, {suspendTime: opts.suspendTime, monitoring: opts.monitoring}, registry)
  // Said once per run, before the plan is confirmed, when a new cluster's SSH is open to everyone (its
  // range is fixed once made: a re-run or --resume cannot change it, so it is not repeated there).
  const warnings = exists ? [] : [sshExposureWarning(opts.resolved!.cloud.sshCidr)].filter((w) => w !== undefined)
  for (const w of warnings) io.note(`warning: ${w}`)

  const paths = registry.paths(name)
  const resumeHint = `citc create --name ${name} --resume continues where it stopped`
  return clusterWorkflow(
    {
      paths,
      command: 'citc create',
      renderer: io.renderer,
      // Re-running every step does not forget that Terraform may have made something.
      journal: {resume: opts.resume, reset: !opts.resume && exists, keep: [APPLY_STARTED]},
      rewrap: (error, {interrupted}) =>
        interrupted
          ? new CitcError('cancelled', 'create interrupted', {hint: resumeHint})
          : new CitcError(error.kind, error.message, {hint: withRetry(error, resumeHint), details: error.details}),
    },
    async (wf) => {
      if (exists) updateExisting(io, opts, registry)
      const limitsPath = join(paths.dir, 'limits.yaml')
      if (limits) writeFileSync(limitsPath, limits.text, {mode: 0o600})
      const record = () => registry.get(name)
      const ctx: CloudCreateContext = {
        ...wf.context,
        name,
        provider,
        paths,
        record,
        update: (change) => registry.update(name, change),
        tool,
        tf: new Terraform(tool, {dir: paths.terraformDir, logFile: wf.logFile('terraform'), env: terraformEnvFor(record()), signal: wf.signal, hints: cloudModule(provider).cloud.errorHints}),
        plan: wf.journal.data<PlanSummary>('plan'),
        opts,
        node: {},
        ansibleLog: wf.logFile('ansible'),
        root: () => connected(ctx.node).root,
        limits: () => (existsSync(limitsPath) ? {file: limits?.file ?? limitsPath, text: readFileSync(limitsPath, 'utf8')} : undefined),
      }
      await wf.steps(PLAN_STEPS, ctx)
      if (opts.planOnly) return planOnlyResult(io, ctx, warnings)
      // The confirmation is not a failed step: a refusal keeps its own message (no --resume hint).
      if (!ctx.doneEarlier('apply') && ctx.plan) {
        for (const l of planLines(ctx.plan)) io.note(l)
        if (!ctx.plan.empty) await confirmOrRefuse(io, `Apply this plan in ${provider} (${describePlan(ctx.plan)})? The resources cost money until \`citc destroy ${name}\`.`)
      }
      wf.cleanup(() => closeSession(ctx.node))
      await wf.steps(APPLY_STEPS, ctx)
      // The first compute-node image (or a new one when what goes into it changed): new nodes boot it.
      const imageCtx = await wf.guard(() => cloudImageContext(wf, ctx))
      await wf.steps(createImageSteps(), imageCtx)
      return readyResult(io, ctx, existsSync(limitsPath), imageCtx.built?.name, warnings)
    },
  )
}

/** The plan for people: one line, and the resources by type. */
function planLines(plan: PlanSummary): string[] {
  const lines = [`Terraform plan: ${describePlan(plan)}`]
  for (const [type, addresses] of Object.entries(plan.byType)) lines.push(`  ${String(addresses.length).padStart(3)} × ${type}`)
  return lines
}

/** --plan-only: the plan shown, nothing created; --resume --yes applies it. */
function planOnlyResult(io: Io, ctx: CloudCreateContext, warnings: string[]) {
  for (const l of ctx.plan ? planLines(ctx.plan) : []) io.log(l)
  io.log(`Nothing was created. Apply it with: citc create --name ${ctx.name} --resume --yes`)
  return {
    cluster: ctx.name,
    provider: ctx.provider,
    terraformDir: ctx.paths.terraformDir,
    planFile: join(ctx.paths.terraformDir, PLAN_FILE),
    plan: ctx.plan ?? null,
    terraform: {binary: ctx.tool.binary, version: ctx.tool.version},
    hostKeyFingerprint: ctx.record().mgmt.hostKeyFingerprint,
    // What stderr said as "warning: …" (under --json, the notes are not shown).
    warnings,
  }
}

/** The cluster marked ready, and how to reach and use it. */
function readyResult(io: Io, ctx: CloudCreateContext, hasLimits: boolean, image: string | undefined, warnings: string[]) {
  const {name} = ctx
  const r = ctx.update((x) => {
    x.phase = 'ready'
  })
  // What `citc ssh` runs: the known_hosts file the SSH step wrote in this run (it runs in every run).
  if (!ctx.node.knownHosts) throw new Error('cloud create: the cluster is ready before the SSH step wrote its known_hosts')
  const sshCommand = shellQuote(['ssh', ...sshArgs({...r.mgmt, keyPath: r.mgmt.keyPath!}, ctx.node.knownHosts)])
  io.log(
    [
      `Cluster ${name} is ready. Management node: ${r.mgmt.user}@${r.mgmt.host}${r.mgmt.port !== 22 ? ` (port ${r.mgmt.port})` : ''}`,
      ...(image ? [`New compute nodes start from image ${image} (\`citc rebuild-image -c ${name}\` builds another).`] : []),
      '',
      `  citc ssh -c ${name}                    # a shell on the management node (host key pinned)`,
      `  ${sshCommand}`,
      hasLimits
        ? `  citc status -c ${name}                 # the controller and every node`
        : `  citc finish -c ${name} --limits limits.yaml   # which shapes, how many nodes at most`,
      `  citc add-user -c ${name} …             # users`,
      `  citc destroy ${name}                   # take it all away again (nodes, Terraform, leftovers)`,
    ].join('\n'),
  )
  return {
    cluster: name,
    provider: ctx.provider,
    mgmt: {host: r.mgmt.host, port: r.mgmt.port, user: r.mgmt.user, hostKeyFingerprint: r.mgmt.hostKeyFingerprint},
    sshCommand,
    terraformDir: ctx.paths.terraformDir,
    outputs: r.terraform?.outputs ?? {},
    image,
    logs: {terraform: ctx.logFile('terraform'), ansible: ctx.ansibleLog},
    steps: ctx.journal.steps().map((s) => s.step),
    warnings,
  }
}
