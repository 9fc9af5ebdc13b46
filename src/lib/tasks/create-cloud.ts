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
//
// The journal records "apply-started" before Terraform may create anything, and keeps it across a
// plain re-run's reset: destroy trusts its absence to forget a cluster without Terraform.
//
// A stand-in management node (the tests' sshd on loopback) is reached through CreateCloudOptions.
// standIn — set by create's hidden flags, never by the environment or by Terraform outputs.
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'

import {Journal} from '../cluster/journal.js'
import {withLock} from '../cluster/lock.js'
import {clusterRegistry, type ClusterPaths} from '../cluster/registry.js'
import type {ClusterRecord} from '../cluster/schema.js'
import {CitcError, InvalidInputError, usageError, withRetry} from '../errors.js'
import {confirmOrRefuse, type Io} from '../io.js'
import {cloudInputsFor, cloudOf, defaultMgmtUser, KEY_FILES, PENDING_HOST, readClusterKeys, terraformEnvFor} from '../providers/cloud-cluster.js'
import {readClusterOutputs, renderTerraformDir, tfvarsFor, type CloudProvider} from '../providers/cloud.js'
import {cloudModule} from '../providers/registry.js'
import {Controller} from '../slurm/controller.js'
import {PlaybookError, runPlaybook} from '../tools/ansible.js'
import {nodeDriverVars} from '../cluster/management-contract.js'
import {bundleCitc} from '../tools/bundle.js'
import {describePlan, detectTerraform, Terraform, type PlanSummary, type ResourceEvent} from '../tools/terraform.js'
import {withLog} from '../transport/logged.js'
import {asRootOn, writeKnownHosts} from '../transport/management.js'
import {generateEd25519KeyPair, type SshTransport} from '../transport/ssh/index.js'
import type {Transport} from '../transport/types.js'
import {locateProblems, type ResolvedCloudCreate} from './create/cloud-wizard.js'
import {finishUnattended} from './finish/apply-config.js'
import {generateFromLimits, requestFor} from './finish/generate-config.js'
import {taskList, withInterrupts} from './listr.js'
import {DEFAULT_REMOTE_PREFIX, installedPackage, installPackage, installTools, remoteCitcBin, remoteNodeBin, waitForCloudInit, waitForSsh} from './mgmt-setup.js'

export const PLAN_FILE = 'citc.tfplan'

/**
 * A management node that is not the machine Terraform made: the tests' sshd on loopback (a free
 * port, this machine's own filesystem, whose services management.yml would reconfigure). Given by
 * create's hidden flags (--mgmt-ssh-port, --mgmt-prefix, --mgmt-playbook); users never need them.
 */
export interface StandInManagementNode {
  /** SSH port instead of 22 (recorded in cluster.yaml, so every later command uses it too). */
  sshPort?: number
  /** Where citc is installed instead of DEFAULT_REMOTE_PREFIX. */
  citcPrefix?: string
  /** A playbook file here, uploaded and run instead of management.yml. */
  playbook?: string
}

/** The journal step written just before `terraform apply` starts (see the header). */
export const APPLY_STARTED = 'apply-started'

export interface CreateCloudOptions {
  name: string
  /** A new cluster's answers; undefined when continuing or re-running an existing one. */
  resolved?: ResolvedCloudCreate
  /** Limits given on this run (a new cluster's come in resolved). */
  limits?: {text: string; file: string}
  suspendTime?: number
  resume: boolean
  planOnly: boolean
  sshTimeoutS: number
  packageRoot: string
  standIn?: StandInManagementNode
}

const STEPS = ['render', 'init', 'plan', 'apply-started', 'apply', 'outputs', 'ssh', 'tools', 'install', 'playbook', 'finish'] as const
type Step = (typeof STEPS)[number]

/** The keys of a new cluster, generated here, and its inputs checked before anything is written. */
function prepareNew(r: ResolvedCloudCreate, paths: ClusterPaths) {
  const admin = generateEd25519KeyPair(`citc-admin@${r.name}`)
  const host = generateEd25519KeyPair(`citc-host@${r.name}-mgmt`)
  const draft = {
    name: r.name,
    provider: r.provider,
    createdAt: new Date().toISOString(),
    origin: 'created' as const,
    cloud: r.cloud,
    mgmt: {host: PENDING_HOST, port: 22, user: 'root', keyPath: join(paths.keysDir, KEY_FILES.admin), hostKeyFingerprint: host.fingerprint},
  } as ClusterRecord
  // The inputs as Terraform will get them: every problem reported now, by flag or config line.
  const inputs = cloudInputsFor(draft, {sshPublicKey: admin.publicKey, sshHostKey: host.privateKey, sshHostKeyPublic: host.publicKey})
  try {
    tfvarsFor(inputs)
  } catch (error) {
    if (error instanceof InvalidInputError) throw new InvalidInputError(locateProblems(error.problems, r.configWhere), error.hint)
    throw error
  }
  return {admin, host}
}

/** The plan for people: one line, and the resources by type. */
export function planLines(plan: PlanSummary): string[] {
  const lines = [`Terraform plan: ${describePlan(plan)}`]
  for (const [type, addresses] of Object.entries(plan.byType)) lines.push(`  ${String(addresses.length).padStart(3)} × ${type}`)
  return lines
}

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

  if (!exists) {
    const r = opts.resolved!
    const paths = registry.paths(name)
    const {admin, host} = prepareNew(r, paths)
    const imageOs = r.cloud.imageOs
    const oracleAd = cloudModule(provider).availabilityDomains ? Number(r.cloud.zone) : undefined
    registry.create(
      {
        name,
        provider,
        createdAt: new Date().toISOString(),
        origin: 'created',
        phase: 'creating',
        mgmt: {
          host: PENDING_HOST,
          port: 22,
          user: defaultMgmtUser(imageOs),
          keyPath: join(paths.keysDir, KEY_FILES.admin),
          // Pinned now: the first connection already checks it.
          hostKeyFingerprint: host.fingerprint,
          hostname: 'mgmt',
          shape: r.cloud.mgmtShape,
          ...(oracleAd ? {ad: oracleAd} : {}),
          sudo: true,
        },
        cloud: r.cloud,
        ...(opts.suspendTime ? {settings: {suspendTime: opts.suspendTime}} : {}),
      },
      () => {
        registry.writeKey(name, KEY_FILES.admin, admin.privateKey)
        registry.writeKey(name, KEY_FILES.adminPublic, `${admin.publicKey}\n`)
        registry.writeKey(name, KEY_FILES.hostKey, host.privateKey)
        registry.writeKey(name, KEY_FILES.hostKeyPublic, `${host.publicKey}\n`)
      },
    )
    io.note(`Cluster ${name}: state in ${paths.dir}; the management node's host key is pinned (${host.fingerprint}).`)
  } else {
    const record = registry.get(name)
    cloudOf(record)
    if (opts.resolved && opts.resolved.provider !== record.provider) {
      throw usageError(`cluster ${name} exists and is a ${record.provider} cluster`, 'choose another --name, or leave --provider out to continue it')
    }
    if (!opts.resume) io.note(`Cluster ${name} exists: re-running every step with its recorded settings (they converge).`)
    // The one setting that may change after create: finish applies it (with the limits).
    if (opts.suspendTime && Number(record.settings?.suspendTime) !== opts.suspendTime) {
      registry.update(name, (r) => {
        r.settings = {...r.settings, suspendTime: opts.suspendTime!}
      })
      io.note(`SuspendTime is now ${opts.suspendTime} s (slurm.conf gets it when finish runs).`)
    }
  }

  const paths = registry.paths(name)
  return withLock(paths.dir, 'citc create', () =>
    withInterrupts(async (signal) => {
      const journal = new Journal(paths.journal).load()
      if (!opts.resume && exists) {
        // Re-running every step does not forget that Terraform may have made something.
        const started = journal.done(APPLY_STARTED)
        journal.reset()
        if (started) journal.markDone(APPLY_STARTED)
      }
      const limitsPath = join(paths.dir, 'limits.yaml')
      if (limits) writeFileSync(limitsPath, limits.text, {mode: 0o600})
      const stamp = new Date().toISOString().replace(/[:.]/g, '-')
      const tfLog = join(paths.logsDir, `terraform-${stamp}.log`)
      const ansibleLog = join(paths.logsDir, `ansible-${stamp}.log`)
      const remoteLog = join(paths.logsDir, `create-${stamp}.log`)
      const record = () => registry.get(name)
      const tf = new Terraform(tool, {dir: paths.terraformDir, logFile: tfLog, env: terraformEnvFor(record()), signal, cloud: provider})
      const skip = (step: Step) => (opts.resume && journal.done(step) ? 'done in an earlier run (--resume)' : false)
      let plan: PlanSummary | undefined = journal.data<PlanSummary>('plan')
      const resumeHint = `citc create --name ${name} --resume continues where it stopped`

      const fail = (error: unknown): never => {
        if (signal.aborted || (error instanceof CitcError && error.kind === 'cancelled')) {
          throw new CitcError('cancelled', 'create interrupted', {hint: resumeHint})
        }
        if (error instanceof CitcError) {
          throw new CitcError(error.kind, error.message, {hint: withRetry(error, resumeHint), details: error.details})
        }
        throw error
      }

      // ---- 1-2: render, init, plan --------------------------------------------------------
      try {
        await taskList(
          [
            {
              title: 'Render the Terraform working directory',
              task: (_, task) => {
                const r = renderTerraformDir(paths.terraformDir, cloudInputsFor(record(), readClusterKeys(paths)))
                task.title = `Render the Terraform working directory (${r.files.length} files in ${paths.terraformDir})`
                journal.markDone('render')
              },
            },
            {
              title: `${tool.binary} init`,
              skip: () => (opts.resume && journal.done('init') && existsSync(join(paths.terraformDir, '.terraform')) ? 'done in an earlier run (--resume)' : false),
              task: async (_, task) => {
                await tf.init({signal, onLine: (l) => l.trim() && (task.output = l.trim())})
                journal.markDone('init')
              },
            },
            {
              title: `${tool.binary} plan`,
              // Once applied, a plan is not needed to continue; otherwise always plan afresh (a plan
              // saved before an interrupted apply would be stale).
              skip: () => skip('apply'),
              task: async (_, task) => {
                plan = await tf.plan(PLAN_FILE, {signal, onLine: (l) => l.trim() && (task.output = l.trim())})
                journal.markDone('plan', plan)
                task.title = `${tool.binary} plan: ${describePlan(plan)}`
              },
            },
          ],
          io.renderer,
        ).run()
      } catch (error) {
        fail(error)
      }

      if (opts.planOnly) {
        for (const l of plan ? planLines(plan) : []) io.log(l)
        io.log(`Nothing was created. Apply it with: citc create --name ${name} --resume --yes`)
        return {
          cluster: name,
          provider,
          terraformDir: paths.terraformDir,
          planFile: join(paths.terraformDir, PLAN_FILE),
          plan: plan ?? null,
          terraform: {binary: tool.binary, version: tool.version},
          hostKeyFingerprint: record().mgmt.hostKeyFingerprint,
        }
      }

      if (!(opts.resume && journal.done('apply')) && plan) {
        for (const l of planLines(plan)) io.note(l)
        if (!plan.empty) await confirmOrRefuse(io, `Apply this plan in ${provider} (${describePlan(plan)})? The resources cost money until \`citc destroy ${name}\`.`)
      }

      // ---- 3-6: apply, outputs and SSH, setup, finish -----------------------------------------
      let ssh: SshTransport | undefined
      let root: Transport | undefined
      // Root without the command log: ansible-playbook's output has its own log (ansibleLog).
      let rootUnlogged: Transport | undefined
      let uploadDir: string | undefined
      const installed: string[] = []
      try {
        await taskList(
          [
            {
              title: `${tool.binary} apply`,
              skip: () => skip('apply'),
              task: async (_, task) => {
                const onResource = (e: ResourceEvent) => {
                  if (e.phase === 'start') task.output = `${e.address}: ${e.action === 'delete' ? 'destroying' : e.action === 'create' ? 'creating' : e.action}…`
                  else if (e.phase === 'progress') task.output = `${e.address}: still ${e.action === 'create' ? 'creating' : e.action}… (${e.elapsedS ?? '?'} s)`
                  else if (e.phase === 'complete') task.output = `${e.address}: done${e.elapsedS !== undefined ? ` after ${e.elapsedS} s` : ''}`
                }
                journal.markDone(APPLY_STARTED)
                const summary = await tf.apply(PLAN_FILE, onResource, {signal})
                journal.markDone('apply', summary)
                task.title = `${tool.binary} apply: ${summary.added} added, ${summary.changed} changed, ${summary.destroyed} destroyed`
              },
              rendererOptions: {outputBar: 1},
            },
            {
              title: 'Read the Terraform outputs into cluster.yaml',
              task: async (_, task) => {
                const outputs = await tf.output({signal})
                const o = readClusterOutputs(provider, outputs)
                const port = opts.standIn?.sshPort ?? o.mgmt.port
                registry.update(name, (r) => {
                  r.mgmt.host = o.mgmt.host
                  r.mgmt.port = port
                  r.mgmt.user = o.mgmt.user
                  r.mgmt.hostname = o.mgmt.hostname
                  r.mgmt.sudo = o.mgmt.user !== 'root'
                  r.terraform = {outputs: o.all}
                })
                journal.markDone('outputs')
                task.title = `Management node: ${o.mgmt.user}@${o.mgmt.host}${port !== 22 ? `:${port}` : ''}`
              },
            },
            {
              title: 'Wait for SSH (host key pinned)',
              task: async (_, task) => {
                const r = record()
                task.title = `Wait for SSH on ${r.mgmt.host}:${r.mgmt.port} (host key ${r.mgmt.hostKeyFingerprint} pinned)`
                ssh = await waitForSsh({
                  host: r.mgmt.host,
                  port: r.mgmt.port,
                  user: r.mgmt.user,
                  privateKey: r.mgmt.keyPath!,
                  hostKeyFingerprint: r.mgmt.hostKeyFingerprint!,
                  timeoutMs: opts.sshTimeoutS * 1000,
                  signal,
                  report: (m) => (task.output = m),
                })
                rootUnlogged = asRootOn(r, ssh)
                root = withLog(rootUnlogged, remoteLog)
                task.output = 'waiting for cloud-init to finish'
                await waitForCloudInit(root, {signal})
                await writeKnownHosts(r, paths)
                journal.markDone('ssh')
              },
            },
            {
              title: 'Install Node.js and ansible-core on the management node (apt)',
              skip: () => skip('tools'),
              task: async (_, task) => {
                installed.push(...(await installTools(root!, {signal, onOutput: (l) => (task.output = l)})))
                task.title = installed.length > 0 ? `Installed ${installed.join(', ')} on the management node` : 'Node.js and ansible-core: already on the management node'
                journal.markDone('tools')
              },
            },
            {
              title: 'Install citc on the management node',
              skip: () => skip('install'),
              task: async (_, task) => {
                const prefix = opts.standIn?.citcPrefix ?? DEFAULT_REMOTE_PREFIX
                task.output = 'bundling citc with its dependencies'
                const pkg = await bundleCitc(opts.packageRoot, join(paths.dir, 'package'), signal)
                if (await installedPackage(root!, prefix, pkg.sha256)) {
                  task.title = `citc ${pkg.version}: already installed on the management node (${prefix})`
                } else {
                  uploadDir ??= await makeUploadDir(ssh!)
                  const remoteTgz = `${uploadDir}/${basename(pkg.file)}`
                  task.output = `uploading ${basename(pkg.file)} (${(pkg.bytes / 1e6).toFixed(1)} MB, ${pkg.dependencies} dependencies)`
                  await ssh!.writeFile(remoteTgz, readFileSync(pkg.file), {mode: 0o644, signal})
                  await installPackage(root!, {prefix, tarball: remoteTgz, sha256: pkg.sha256, signal, onOutput: (l) => (task.output = l)})
                  task.title = `Installed citc ${pkg.version} on the management node (${prefix}, no registry needed)`
                }
                const nodeBin = await remoteNodeBin(root!)
                registry.update(name, (r) => {
                  r.cloud = {...r.cloud!, citcBin: remoteCitcBin(prefix), nodeBin}
                })
                journal.markDone('install')
              },
            },
            {
              title: 'Configure the management node (management.yml)',
              skip: () => skip('playbook'),
              task: async (_, task) => {
                const r = record()
                const prefix = opts.standIn?.citcPrefix ?? DEFAULT_REMOTE_PREFIX
                uploadDir ??= await makeUploadDir(ssh!)
                let playbookPath = `${prefix}/lib/node_modules/citc/playbooks/management.yml`
                const standInPlaybook = opts.standIn?.playbook
                if (standInPlaybook) {
                  playbookPath = `${uploadDir}/${basename(standInPlaybook)}`
                  await ssh!.writeFile(playbookPath, readFileSync(standInPlaybook), {mode: 0o644})
                }
                const varsPath = `${uploadDir}/vars.json`
                await ssh!.writeFile(varsPath, JSON.stringify(cloudPlaybookVars(r), null, 2), {mode: 0o600})
                try {
                  const result = await runPlaybook(rootUnlogged!, {playbookPath, extraVarsPath: varsPath, logFile: ansibleLog, onTask: (t) => (task.output = t), signal})
                  const stats = Object.values(result.recap)[0]
                  task.title = `Configured the management node (${basename(playbookPath)}: ok=${stats?.ok ?? 0} changed=${stats?.changed ?? 0} failed=0)`
                } catch (error) {
                  if (error instanceof PlaybookError) {
                    const last = error.result.lastLines.slice(-8).map((l) => `  ${l}`).join('\n')
                    throw new CitcError('remote', `${error.message}${last ? `\nlast lines of its output:\n${last}` : ''}`, {
                      hint: `read the failed task's output in ${ansibleLog}, fix the cause (on the node: \`citc ssh -c ${name}\`)`,
                      details: error.details,
                    })
                  }
                  throw error
                }
                journal.markDone('playbook')
              },
              rendererOptions: {outputBar: 1},
            },
            {
              title: 'Write slurm.conf from the limits and start slurmctld (finish)',
              skip: () => {
                if (opts.resume && journal.done('finish')) return 'done in an earlier run (--resume)'
                return existsSync(limitsPath) ? false : 'no node limits given: set them later with `citc finish --limits limits.yaml`'
              },
              task: async (_, task) => {
                const r = record()
                const controller = new Controller(root!, {confPath: r.slurm.confPath, restartCommand: r.slurm.restartCommand})
                const text = readFileSync(limitsPath, 'utf8')
                const {plan: finishPlan, result} = await finishUnattended({
                  transport: root!,
                  controller,
                  request: requestFor(r, limits?.file ?? limitsPath, text),
                  signal,
                  report: (m) => (task.output = m),
                })
                task.title = finishPlan.changed ? `Configuration applied (${result?.action})` : 'Configuration already up to date'
                journal.markDone('finish')
              },
            },
          ],
          io.renderer,
        ).run()
      } catch (error) {
        fail(error)
      } finally {
        if (uploadDir && ssh) await ssh.run(['rm', '-rf', uploadDir], {timeoutMs: 30_000}).catch(() => {})
        await ssh?.close()
      }

      const r = registry.update(name, (x) => {
        x.phase = 'ready'
      })
      const sshCommand = `ssh -i ${r.mgmt.keyPath} -o UserKnownHostsFile=${join(paths.keysDir, KEY_FILES.knownHosts)} -o StrictHostKeyChecking=yes${r.mgmt.port !== 22 ? ` -p ${r.mgmt.port}` : ''} ${r.mgmt.user}@${r.mgmt.host}`
      io.log(
        [
          `Cluster ${name} is ready. Management node: ${r.mgmt.user}@${r.mgmt.host}${r.mgmt.port !== 22 ? ` (port ${r.mgmt.port})` : ''}`,
          '',
          `  citc ssh -c ${name}                    # a shell on the management node (host key pinned)`,
          `  ${sshCommand}`,
          existsSync(limitsPath)
            ? `  citc status -c ${name}                 # the controller and every node`
            : `  citc finish -c ${name} --limits limits.yaml   # which shapes, how many nodes at most`,
          `  citc add-user -c ${name} …             # users`,
          `  citc destroy ${name}                   # take it all away again (nodes, Terraform, leftovers)`,
        ].join('\n'),
      )
      return {
        cluster: name,
        provider,
        mgmt: {host: r.mgmt.host, port: r.mgmt.port, user: r.mgmt.user, hostKeyFingerprint: r.mgmt.hostKeyFingerprint},
        sshCommand,
        terraformDir: paths.terraformDir,
        outputs: r.terraform?.outputs ?? {},
        logs: {terraform: tfLog, ansible: ansibleLog},
        steps: journal.steps().map((s) => s.step),
      }
    }),
  )
}

/** A private directory on the management node for what citc uploads (the login user's, 0700). */
async function makeUploadDir(ssh: SshTransport): Promise<string> {
  const r = await ssh.check(['mktemp', '-d', '/tmp/citc-upload.XXXXXXXX'], {timeoutMs: 60_000})
  return r.stdout.trim()
}

/** The variables management.yml gets on a cloud (group_vars/all.yml documents the common ones). */
export function cloudPlaybookVars(record: ClusterRecord) {
  const outputs = record.terraform?.outputs ?? {}
  return {
    provider: record.provider,
    cluster_name: record.name,
    citc_bin: record.cloud?.citcBin,
    citc_node_bin: record.cloud?.nodeBin,
    mgmt_hostname: record.mgmt.hostname ?? 'mgmt',
    // The cluster network's side of the management node: where slapd listens for the compute nodes.
    mgmt_private_ip: outputs.mgmt_private_ip,
    // The filesystem role mounts it at /mnt/shared (and records it in /etc/fstab).
    shared_fs_host: outputs.shared_fs_host,
    shared_fs_path: outputs.shared_fs_path,
    shared_fs_type: outputs.shared_fs_type,
    shared_fs_mount_options: outputs.shared_fs_mount_options,
    // The provider's section of /etc/citc/cluster.json: what its node driver needs (subnet, image, zone…).
    citc_node_driver: nodeDriverVars(record.provider, outputs),
  }
}

