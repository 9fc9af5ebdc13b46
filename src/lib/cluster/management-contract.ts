// /etc/citc/cluster.json, the management node's contract: what a cluster's management node says about
// itself to the programs that run there. One versioned schema, written by one writer and read by one
// reader:
//   writer   playbooks/roles/citc_programs (Describe the cluster for the node programs), from the
//            variables citc passes: the cluster's (name, provider, paths) and `citc_node_driver`, the
//            provider's section — on clouds made from Terraform's outputs (providers/node-driver-vars.ts).
//   readers  the node programs (`citc node resume|suspend|fail`), add-user and `citc users` (over any
//            Transport), local create's preflight and the local image builder (handed it by the
//            workflows: the provider modules sit below this file) — all through readManagementContract or
//            readManagementContractFile, which say which file, which field and what to do when the file
//            is missing, from another citc version, or not what citc writes.
// The provider's section (`driver`) is what its node driver needs to start machines: subnet, image,
// the management node's identity, zone… Each provider module declares its own (nodeConfig, in
// providers/<name>/node-config.ts); this file names no provider. Nothing secret goes in this file
// (it is world-readable).
// Change a field's meaning or remove one: bump MANAGEMENT_CONTRACT_VERSION (and the role writes it).
import {readFileSync} from 'node:fs'

import {z} from 'zod'

import {CitcError} from '../errors.js'
import {CLUSTER_JSON} from './cluster-json.js'
import {clusterJsonStandInSchema} from '../stand-in.js'
import {markSectionChecked} from '../providers/driver-section.js'
import {PROVIDER_MODULES, providerModule, type NodeConfigs} from '../providers/registry.js'
import type {Transport} from '../transport/types.js'

export {CLUSTER_JSON} from './cluster-json.js'
/** The version this citc writes and reads. playbooks/roles/citc_programs writes the same number. */
export const MANAGEMENT_CONTRACT_VERSION = 1

const absolutePath = z.string().startsWith('/', 'must be an absolute path')

const commonFields = {
  version: z.literal(MANAGEMENT_CONTRACT_VERSION),
  /** The cluster's name (also the default Slurm account of its users). */
  name: z.string().min(1, 'must not be empty'),
  /** Where the shared filesystem is mounted: home/, apps/, etc/slurm/. */
  sharedDir: absolutePath,
  /** The user slurmctld runs the node programs as. */
  slurmUser: z.string().min(1, 'must not be empty'),
  programsDir: absolutePath,
  /** slurm.conf as slurmctld and scontrol read it (SLURM_CONF). */
  confPath: absolutePath,
  /** Where the node programs log every step. */
  elasticLog: absolutePath,
  /** The cluster's monitoring (issue #21), absent when it was created with --no-monitoring. */
  monitoring: z
    .object({
      /** The collector's directory: citc.prom (node-exporter's textfile directory), nodes.json (Prometheus's file_sd of the powered-on nodes), node-events.json (the node programs' counters). */
      dir: absolutePath,
      /** Prometheus on the management node, loopback only. */
      prometheusUrl: z.string().url(),
      /** The port of node-exporter on compute nodes (their private address), if the provider's images run it; absent: nodes.json stays empty (local nodes share this machine's kernel). */
      computeExporterPort: z.number().int().min(1).max(65535).optional(),
      /** Seconds between two collections. */
      every: z.number().int().min(5),
    })
    .optional(),
  /** Tests only (src/lib/stand-in.ts): the doubles a stand-in management node's drivers use. Never written by the role. */
  standIn: clusterJsonStandInSchema.optional(),
}
type CommonFields = z.output<z.ZodObject<typeof commonFields>>

/** cluster.json: the common fields, the provider's name and its section (its module's nodeConfig). */
export type ManagementContract = {[P in keyof NodeConfigs]: CommonFields & {provider: P; driver: NodeConfigs[P]}}[keyof NodeConfigs]
export type ManagementProvider = ManagementContract['provider']

/** Each provider's section's schema, built once when first needed (the union below builds them all). */
const sectionSchemas = new Map<string, z.ZodType>()
function sectionSchema(provider: string): z.ZodType {
  let schema = sectionSchemas.get(provider)
  if (!schema) sectionSchemas.set(provider, (schema = providerModule(provider).nodeConfig.schema(z)))
  return schema
}

let contractSchema: z.ZodType<ManagementContract> | undefined
/** One variant per provider module, keyed by `provider`. */
function managementContractSchema(): z.ZodType<ManagementContract> {
  contractSchema ??= z.discriminatedUnion(
    'provider',
    PROVIDER_MODULES.map((m) => z.object({...commonFields, provider: z.literal(m.name), driver: sectionSchema(m.name)})) as unknown as [z.ZodObject, ...z.ZodObject[]],
  ) as unknown as z.ZodType<ManagementContract>
  return contractSchema
}

// ---------------------------------------------------------------------------------------------
// Reading

/** Why cluster.json could not be used, with the file, the field and what to do (exit 4). */
export class ManagementContractError extends CitcError {
  constructor(
    message: string,
    readonly file: string,
    /** The fields that are wrong ("version", "driver.subnetId"), if the file could be read. */
    readonly fields: string[],
    /** The cluster the file names, when it names one (an older file still does). */
    readonly clusterName: string | undefined,
    hint: string,
  ) {
    super('remote', message, {hint, details: {file, fields, ...(clusterName ? {cluster: clusterName} : {})}})
    this.name = 'ManagementContractError'
  }
}

const rerun = (name: string | undefined) =>
  `re-run \`citc create --name ${name ?? '<cluster>'}\` where the cluster was created: its management playbook (re)writes this file`

function issueList(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(the whole file)'}: ${i.message}`).join('; ')
}

/**
 * cluster.json's text → the contract. `file` and `where` ("this machine", "root@mgmt") only name
 * the file in errors. Pure.
 */
export function parseManagementContract(text: string, file: string, where = 'this machine'): ManagementContract {
  const at = `${file} on ${where}`
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ManagementContractError(`${at} is not JSON (${(error as Error).message}): it is damaged`, file, [], undefined, rerun(undefined))
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ManagementContractError(`${at} is not a JSON object`, file, [], undefined, rerun(undefined))
  }
  const doc = value as Record<string, unknown>
  const name = typeof doc.name === 'string' && doc.name !== '' ? doc.name : undefined
  const version = doc.version
  if (version !== MANAGEMENT_CONTRACT_VERSION) {
    if (typeof version === 'number' && version > MANAGEMENT_CONTRACT_VERSION) {
      throw new ManagementContractError(
        `${at} was written by a newer citc (version ${version}; this citc reads version ${MANAGEMENT_CONTRACT_VERSION})`,
        file,
        ['version'],
        name,
        `run the citc version that set up the cluster${name ? ` ${name}` : ''} (on the management node and on your workstation), or ${rerun(name)} with this one`,
      )
    }
    // The layout before versions (citc 0.1): the same fields, a local cluster's driver overrides
    // under "local". A local cluster's node programs run the installed citc itself, so an upgrade
    // must not stop its power saving until create is re-run.
    if (version === undefined) {
      const {local, ...rest} = doc
      const r = managementContractSchema().safeParse({...rest, version: MANAGEMENT_CONTRACT_VERSION, driver: local ?? {}})
      if (r.success) return checked(r.data)
    }
    const was = version === undefined ? 'it has no "version"' : `version ${JSON.stringify(version)}`
    throw new ManagementContractError(
      `${at} was written by an older citc (${was}; this citc reads version ${MANAGEMENT_CONTRACT_VERSION})`,
      file,
      ['version'],
      name,
      rerun(name),
    )
  }
  const r = managementContractSchema().safeParse(doc)
  if (!r.success) {
    throw new ManagementContractError(
      `${at} is not what citc writes: ${issueList(r.error)}`,
      file,
      r.error.issues.map((i) => i.path.join('.')),
      name,
      rerun(name),
    )
  }
  return checked(r.data)
}

/** The driver's section was checked here with the file: its driver's factory does not check it again. */
function checked(contract: ManagementContract): ManagementContract {
  if (contract.driver !== null && typeof contract.driver === 'object') markSectionChecked(contract.driver)
  return contract
}

function missing(file: string, where: string): ManagementContractError {
  return new ManagementContractError(
    `${file} does not exist on ${where}: it is not a citc management node, or its setup did not finish`,
    file,
    [],
    undefined,
    rerun(undefined),
  )
}

/**
 * The citc cluster whose management node this machine is, by its cluster.json (undefined: none). A file
 * of another citc version still says whose machine it is (create rewrites it); one that names no
 * cluster is refused, with a way out that does not lead back here. Local create's preflight asks.
 */
export function clusterOnThisMachine(file = CLUSTER_JSON): string | undefined {
  try {
    return readManagementContractFile(file, {optional: true})?.name
  } catch (error) {
    if (!(error instanceof ManagementContractError)) throw error
    if (!error.clusterName) {
      throw new CitcError('invalidInput', error.message, {
        hint: `if no citc cluster lives on this machine any more, remove ${file}; if one does, destroy it first (citc destroy)`,
        details: error.details,
      })
    }
    return error.clusterName
  }
}

/** cluster.json through a Transport (this machine, or the management node over SSH). */
export async function readManagementContract(t: Transport, file = CLUSTER_JSON): Promise<ManagementContract> {
  const data = await t.readFile(file)
  if (data === undefined) throw missing(file, t.description)
  return parseManagementContract(data.toString('utf8'), file, t.description)
}

/**
 * cluster.json on this machine, synchronously (the node programs, the local preflight). With
 * `{optional: true}`, a missing file is undefined (no cluster lives here) instead of an error.
 */
export function readManagementContractFile(file: string, opts: {optional: true}): ManagementContract | undefined
export function readManagementContractFile(file?: string, opts?: {optional?: false}): ManagementContract
export function readManagementContractFile(file = CLUSTER_JSON, opts: {optional?: boolean} = {}): ManagementContract | undefined {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      if (opts.optional) return undefined
      throw missing(file, 'this machine')
    }
    throw new ManagementContractError(`cannot read ${file} on this machine: ${(error as Error).message}`, file, [], undefined, `it should be a file anyone may read (0644 root); ${rerun(undefined)}`)
  }
  return parseManagementContract(text, file)
}
