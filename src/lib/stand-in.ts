// The stand-in: the one seam through which tests and benchmarks put doubles where citc talks to real
// machines and clouds. A real user never gives one, and without one citc behaves as it always does.
// docs/stand-ins.md describes it for a reader; this file is its only definition.
//
// It is a JSON file (a StandIn), given in one of these ways:
//   `citc create … --stand-in FILE`             (hidden flag) managementNode: an sshd on loopback
//                                                 stands in for the machine Terraform made;
//                                                 addressEcho: the URL the wizard's SSH question asks
//                                                 for this machine's public address;
//   `citc rebuild-image … --stand-in FILE`      (hidden flag) managementNode.imageRoot only: where that
//                                                 node keeps images.json and the build files;
//   `citc node resume|suspend|fail HOSTLIST --stand-in FILE`
//                                               (hidden flag) clusterJson: another cluster.json than
//                                                 /etc/citc/cluster.json; driver: see below;
//   `citc metrics collect … --stand-in FILE`    (hidden flag) clusterJson only: the collector's cluster.json;
//   `citc doctor -c NAME --stand-in FILE`        (hidden flag) clusterJson: the monitoring checks' cluster.json;
//   `citc doctor --security -c NAME --stand-in FILE` (hidden flag) securityRoot: the management node's
//                                                 files the security checks examine, under a directory;
// and cluster.json itself may hold `"standIn": {"driver": {…}}`: node programs that slurmctld starts
// (with no flag, and an environment of its own) on a stand-in management node find the doubles there.
// A flag's driver part wins over cluster.json's, field by field.
//
// The driver part points a cloud node driver at the fake clouds (test/doubles/cloud-api) and shortens its
// limits; or the local node driver (and a local cluster's finish) at stand-in GPUs (gpuRoot). The AWS and Google SDKs read their metadata service's address only from the environment
// (AWS_EC2_METADATA_SERVICE_ENDPOINT, GCE_METADATA_HOST): citc writes no environment variable, so
// whoever starts the process sets those, and the driver refuses a stand-in whose metadata endpoint
// the environment does not carry (it would otherwise ask the real one, 169.254.169.254).
import {readFileSync} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {z} from 'zod'

import {usageError} from './errors.js'

/** A management node that is not the machine Terraform made (create-cloud.ts). */
export interface ManagementNodeStandIn {
  /** SSH port instead of 22 (recorded in cluster.yaml, so every later command uses it too). */
  sshPort?: number
  /** Where citc is installed instead of /opt/citc. */
  citcPrefix?: string
  /** A playbook file here, uploaded and run instead of management.yml. */
  playbook?: string
  /** The image builds' files on the node (work dir, images.json, compute host keys, munge key) under this directory instead of /. */
  imageRoot?: string
}

/** What a cloud node driver takes from a stand-in (providers/cloud-driver.ts cloudDriverFactory). */
export interface DriverStandIn {
  /** The doubles' root URLs: `api` instead of the cloud's API, `metadata` instead of its metadata service. */
  endpoints?: {api?: string; metadata?: string}
  /** images.json elsewhere than /etc/citc/images.json. */
  imagesJson?: string
  /** One API call's time limit (each cloud's default otherwise). */
  requestTimeoutMs?: number
  /**
   * The node programs' state directory instead of /var/lib/citc/node-programs (Oracle keeps its session
   * token there between runs, providers/oracle/session-cache.ts). A stand-in with doubles' endpoints and
   * no stateDir keeps none, so a test never writes to this machine's own.
   */
  stateDir?: string
  /** The driver core's limits (cloud-driver.ts CLOUD_DRIVER_DEFAULTS otherwise). */
  rate?: {perSecond: number; burst: number}
  concurrency?: number
  retryBudgetMs?: number
  /**
   * The local provider: where this machine's NVIDIA GPUs are (proc/driver/nvidia/gpus, dev/nvidia*, the
   * driver's user-space) instead of / — a tree of stand-in files on a machine without GPUs. Read by the
   * local node driver, and by finish on a local cluster for its shape catalogue (from cluster.json).
   */
  gpuRoot?: string
}

export interface StandIn {
  managementNode?: ManagementNodeStandIn
  /**
   * create's wizard: the HTTP echo asked for this machine's public address (tasks/create/ssh-cidr.ts)
   * instead of https://checkip.amazonaws.com/ — a test's own (a data: URL needs no server), never the internet.
   */
  addressEcho?: string
  /** The node programs' cluster.json instead of /etc/citc/cluster.json. */
  clusterJson?: string
  driver?: DriverStandIn
  /**
   * `citc doctor --security`: the files it examines on the management node (/etc/citc, /etc/slurm,
   * /etc/munge/munge.key, /etc/exports*, the shared filesystem and its homes) under this directory
   * instead of / — a planted tree on a machine whose own must not be touched. Sockets stay this machine's.
   */
  securityRoot?: string
}

const absolute = () => z.string().startsWith('/', 'must be an absolute path')

const driverSchema = z
  .object({
    endpoints: z.object({api: z.string().url().optional(), metadata: z.string().url().optional()}).strict().optional(),
    imagesJson: absolute().optional(),
    stateDir: absolute().optional(),
    requestTimeoutMs: z.number().int().positive().optional(),
    rate: z.object({perSecond: z.number().positive(), burst: z.number().min(1)}).strict().optional(),
    concurrency: z.number().int().positive().optional(),
    retryBudgetMs: z.number().int().nonnegative().optional(),
    gpuRoot: absolute().optional(),
  })
  .strict() satisfies z.ZodType<DriverStandIn>

/** cluster.json's `standIn`: the driver part only (the file's other readers have no flag to give). */
export const clusterJsonStandInSchema = z.object({driver: driverSchema.optional()}).strict()

const fileSchema = z
  .object({
    managementNode: z
      .object({sshPort: z.number().int().min(1).max(65535).optional(), citcPrefix: z.string().min(1).optional(), playbook: z.string().min(1).optional(), imageRoot: z.string().min(1).optional()})
      .strict()
      .optional(),
    addressEcho: z.string().url().optional(),
    clusterJson: z.string().min(1).optional(),
    driver: driverSchema.optional(),
    securityRoot: z.string().min(1).optional(),
  })
  .strict() satisfies z.ZodType<StandIn>

/** A stand-in from its JSON text; relative paths in it are relative to the file. Throws what is wrong, where. */
export function parseStandIn(text: string, file: string): StandIn {
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch (error) {
    throw usageError(`--stand-in ${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
  }
  const r = fileSchema.safeParse(doc)
  if (!r.success) throw usageError(`--stand-in ${file}: ${r.error.issues.map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`).join('; ')}`)
  const s: StandIn = r.data
  const here = (p: string | undefined) => p && resolve(dirname(resolve(file)), p)
  return {
    ...s,
    ...(s.managementNode ? {managementNode: {...s.managementNode, playbook: here(s.managementNode.playbook), imageRoot: here(s.managementNode.imageRoot)}} : {}),
    ...(s.clusterJson ? {clusterJson: here(s.clusterJson)} : {}),
    ...(s.securityRoot ? {securityRoot: here(s.securityRoot)} : {}),
  }
}

/** The stand-in file a --stand-in flag names. */
export function readStandInFile(file: string): StandIn {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw usageError(`--stand-in ${file}: ${error instanceof Error ? error.message : String(error)}`)
  }
  return parseStandIn(text, file)
}
