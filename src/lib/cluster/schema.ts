// cluster.yaml: what citc knows about one cluster. Strict: an unknown key is an error (a typo would
// otherwise be ignored silently); fields added later are declared here as optional.
import {isAbsolute} from 'node:path'

import {isMap, isScalar, LineCounter, parseDocument, visit, type Document, type Node as YamlNode} from 'yaml'
import {z} from 'zod'

import {InvalidInputError, type InputProblem} from '../errors.js'
import type {CommonCloudSettings} from '../providers/cloud-inputs.js'
import type {CloudSettings} from '../providers/cluster-view.js'
import {isCloud, PROVIDER_MODULES, PROVIDER_NAMES, type Provider} from '../providers/registry.js'
import {CLUSTER_NAME} from '../cluster-name.js'
import {FINGERPRINT} from '../ssh-fingerprint.js'
import {loneSurrogateProblem} from '../well-formed.js'

export {CLUSTER_NAME} from '../cluster-name.js'
/** OpenSSH's fingerprint of a host key: "SHA256:" and the base64 of the digest without padding. */
export const HOST_KEY_FINGERPRINT = FINGERPRINT

export const DEFAULT_SLURM_CONF = '/mnt/shared/etc/slurm/slurm.conf'
export const DEFAULT_PROGRAMS_DIR = '/usr/local/libexec/citc'

/** The address of a management node Terraform has not made yet (.invalid never resolves: RFC 2606). */
export const PENDING_HOST = 'pending.invalid'

export const clusterNameSchema = z
  .string()
  .regex(CLUSTER_NAME, 'must start with a lower-case letter and have at most 31 of a-z, 0-9 and "-"')

const absolutePath = z.string().min(1).refine((p) => isAbsolute(p), 'must be an absolute path')

export const mgmtSchema = z.strictObject({
  host: z.string().min(1),
  port: z.number().int().min(1).max(65_535).default(22),
  user: z.string().min(1),
  /** The admin's private key (absolute path; citc keeps its copy in keys/, mode 0600). None for local. */
  keyPath: absolutePath.optional(),
  /** Pinned host key of the management node: required unless the provider is local. */
  hostKeyFingerprint: z.string().regex(HOST_KEY_FINGERPRINT, 'must be "SHA256:" and 43 base64 characters (OpenSSH format)').optional(),
  /** The management node's short host name (Slurm's SlurmctldHost), when known. */
  hostname: z.string().min(1).optional(),
  /** Oracle: the management node's shape and availability domain, subtracted once from the limits. */
  shape: z.string().min(1).optional(),
  ad: z.number().int().min(1).optional(),
  /** Run commands that need root through `sudo -n` (cloud images log in as a user with passwordless sudo). */
  sudo: z.boolean().optional(),
})

export const slurmSchema = z.strictObject({
  confPath: absolutePath.default(DEFAULT_SLURM_CONF),
  programsDir: absolutePath.default(DEFAULT_PROGRAMS_DIR),
  /** How to restart slurmctld on the management node, as argv (default: the controller's own). */
  restartCommand: z.array(z.string().min(1)).min(1).optional(),
})

/**
 * What `citc create` chose for a cloud cluster (from flags, the wizard or --config): enough to render
 * its Terraform directory again (--resume, re-runs), to give Terraform the same credentials, and for
 * destroy's sweep. Never a secret: credentials are named (a profile, a key file's path), not copied.
 * These fields every cloud has; each provider module adds its own (CloudPart.settings).
 */
const commonCloudShape = {
  region: z.string().min(1),
  /** AWS/Google: the zone; Oracle: the availability domain number. */
  zone: z.string().min(1).optional(),
  /** The credential source chosen (CredentialSource.id, e.g. "profile:research", "env", "gcloud-adc"). */
  credentials: z.string().min(1).optional(),
  mgmtShape: z.string().min(1),
  imageOs: z.enum(['ubuntu-24.04', 'debian-12']).optional(),
  sshCidr: z.string().min(1).optional(),
  /** citc as installed on the management node (bin/run.js) and the node binary that runs it. */
  citcBin: absolutePath.optional(),
  nodeBin: absolutePath.optional(),
} satisfies {[K in keyof CommonCloudSettings]-?: z.ZodType<CommonCloudSettings[K]>}

export type {CloudSettings} from '../providers/cluster-view.js'

/**
 * The `cloud:` section by provider: a union keyed by cluster.yaml's existing `provider` field. A
 * provider without a cloud part (local) has no `cloud:` section.
 */
const providerSettingsSchema = z.discriminatedUnion(
  'provider',
  PROVIDER_MODULES.map((m) =>
    z.strictObject({
      provider: z.literal(m.name),
      ...(m.cloud ? {cloud: z.strictObject({...commonCloudShape, ...m.cloud.settings(z)}).optional()} : {}),
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
)

const recordSchema = z
  .strictObject({
    name: clusterNameSchema,
    provider: z.enum(PROVIDER_NAMES as [Provider, ...Provider[]]),
    createdAt: z.iso.datetime({offset: true}),
    /** created: made by `citc create`; registered: an existing cluster added with `citc cluster add`. */
    origin: z.enum(['created', 'registered']),
    mgmt: mgmtSchema,
    slurm: slurmSchema.prefault({}),
    /** Provider settings chosen at create time (e.g. suspendTime for local). */
    settings: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
    terraform: z.strictObject({outputs: z.record(z.string(), z.unknown())}).optional(),
    /** creating: `citc create` has not finished (a cloud cluster's address may not be known yet); absent: ready. */
    phase: z.enum(['creating', 'ready']).optional(),
    /** Cloud clusters made by `citc create`: checked against the provider's own schema below. */
    cloud: z.unknown().optional(),
  })
  .superRefine((r, ctx) => {
    const settings = providerSettingsSchema.safeParse(r.cloud === undefined ? {provider: r.provider} : {provider: r.provider, cloud: r.cloud}, {reportInput: true})
    if (!settings.success) for (const issue of settings.error.issues) ctx.addIssue(issue as z.core.$ZodRawIssue)
    if (isCloud(r.provider) && r.mgmt.keyPath === undefined) {
      ctx.addIssue({code: 'custom', path: ['mgmt', 'keyPath'], message: `is required for provider ${r.provider}`})
    }
    if (isCloud(r.provider) && r.mgmt.hostKeyFingerprint === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['mgmt', 'hostKeyFingerprint'],
        message: `is required for provider ${r.provider} (citc pins the management node's host key)`,
      })
    }
  })

type RecordFields = Omit<z.output<typeof recordSchema>, 'cloud'>
type RecordInputFields = Omit<z.input<typeof recordSchema>, 'cloud'>

/** A cluster.yaml after validation, defaults filled in. */
export type ClusterRecord = RecordFields & {cloud?: CloudSettings}
/** What may be written in cluster.yaml (defaults may be left out). */
export type ClusterRecordInput = RecordInputFields & {cloud?: CloudSettings}

/** cluster.yaml's schema: its `cloud:` section is its provider's (checked in superRefine, so every other field is still checked). */
export const clusterRecordSchema = recordSchema as unknown as z.ZodType<ClusterRecord, ClusterRecordInput>

/** file:line:col of the node at `path` in `doc` (or its nearest existing parent; a key for `key`). */
function locate(doc: Document, lc: LineCounter, file: string, path: PropertyKey[], key?: string): string {
  let node: YamlNode | null | undefined
  for (let n = path.length; n >= 0; n--) {
    const found = n === 0 ? doc.contents : doc.getIn(path.slice(0, n) as unknown[], true)
    if (found && typeof found === 'object' && 'range' in found) {
      node = found as YamlNode
      if (n === path.length && key !== undefined && isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && p.key.value === key)
        if (pair && isScalar(pair.key)) node = pair.key
      }
      break
    }
  }
  // No node at all (an empty file): the document's start, as every other file's problems are placed.
  const {line, col} = lc.linePos(node?.range?.[0] ?? 0)
  return `${file}:${line}:${col}`
}

/** file:line:col of the first alias whose anchor is missing, else of the first alias. */
function aliasWhere(doc: Document, lc: LineCounter, file: string): string {
  let first: number | undefined
  let unresolved: number | undefined
  visit(doc, {
    Alias(_, node) {
      first ??= node.range?.[0]
      if (node.resolve(doc) === undefined) {
        unresolved = node.range?.[0]
        return visit.BREAK
      }
      return undefined
    },
  })
  const {line, col} = lc.linePos(unresolved ?? first ?? 0)
  return `${file}:${line}:${col}`
}

const dotted = (path: PropertyKey[]) => path.map(String).join('.')

function problemFor(issue: z.core.$ZodIssue, doc: Document, lc: LineCounter, file: string): InputProblem[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      where: locate(doc, lc, file, issue.path, key),
      message: `${dotted([...issue.path, key])}: unknown key (a typo? citc does not ignore unknown keys)`,
    }))
  }
  const field = issue.path.length ? dotted(issue.path) : '(the document)'
  const missing = issue.code === 'invalid_type' && issue.input === undefined
  return [{where: locate(doc, lc, file, issue.path), message: `${field}: ${missing ? 'is required' : issue.message}`}]
}

/**
 * Parse and validate the text of a cluster.yaml. Every problem is reported with the file, line and
 * column and the dotted field, in one InvalidInputError (exit 3).
 */
export function parseClusterYaml(text: string, file: string): ClusterRecord {
  const lineCounter = new LineCounter()
  const doc = parseDocument(text, {lineCounter, prettyErrors: false})
  if (doc.errors.length) {
    throw new InvalidInputError(
      doc.errors.map((e) => {
        const {line, col} = lineCounter.linePos(e.pos[0])
        return {where: `${file}:${line}:${col}`, message: e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')}
      }),
      'cluster.yaml is written by citc: fix the line shown, or remove the cluster and add it again',
    )
  }
  // Text citc could not write back as it was read (the same check as every other YAML file: config/yaml.ts).
  const halves: InputProblem[] = []
  visit(doc, {
    Scalar(_, node) {
      const message = typeof node.value === 'string' ? loneSurrogateProblem(node.value) : undefined
      if (!message) return
      const {line, col} = lineCounter.linePos(node.range?.[0] ?? 0)
      halves.push({where: `${file}:${line}:${col}`, message})
    },
  })
  if (halves.length > 0) throw new InvalidInputError(halves, 'cluster.yaml is written by citc: fix the line shown, or remove the cluster and add it again')
  let value: unknown
  try {
    value = doc.toJS({maxAliasCount: 1000})
  } catch (error) {
    // An alias without its anchor, or aliases that expand beyond reason (the yaml library's guard).
    throw new InvalidInputError([{where: aliasWhere(doc, lineCounter, file), message: (error as Error).message}], 'cluster.yaml is written by citc: write the value out instead of the alias')
  }
  const result = clusterRecordSchema.safeParse(value, {reportInput: true})
  if (!result.success) {
    throw new InvalidInputError(
      result.error.issues.flatMap((issue) => problemFor(issue, doc, lineCounter, file)),
      'cluster.yaml is written by citc: fix the field shown, or remove the cluster and add it again',
    )
  }
  return result.data
}

/**
 * Validate a record about to be written (defaults filled in). A problem here comes from a flag or
 * from citc itself; it is reported against `where` (the cluster.yaml that would have been written).
 */
export function checkClusterRecord(record: unknown, where: string): ClusterRecord {
  const result = clusterRecordSchema.safeParse(record, {reportInput: true})
  if (result.success) return result.data
  throw new InvalidInputError(
    result.error.issues.flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((k) => ({where, message: `${dotted([...issue.path, k])}: unknown key`}))
        : [{where, message: `${issue.path.length ? dotted(issue.path) : '(the record)'}: ${issue.input === undefined && issue.code === 'invalid_type' ? 'is required' : issue.message}`}],
    ),
  )
}
