// limits.yaml's `static:` section: machines that already exist and joined the cluster (`citc node add`).
// Pure: the section's YAML in, StaticNodeSpec[] out, every problem located (file:line:col path: message)
// and added to the caller's list, so limits.ts reports them with the rest of the file's.
import {isIP} from 'node:net'

import {isMap, isScalar, type Node as YamlNode} from 'yaml'
import {z} from 'zod'

import type {InputProblem} from '../errors.js'
import type {StaticNodeSpec} from '../slurm/limits-types.js'
import {MAX_WEIGHT} from '../slurm/nodes.js'
import {FINGERPRINT} from '../ssh-fingerprint.js'
import {keyText, showValue as show, type YamlFile, type YamlPath, zodProblems} from './yaml.js'

/** A joined machine's Slurm NodeName (and the name `citc node add --name` takes). */
export const STATIC_NODE_NAME = /^[a-z][a-z0-9-]{0,39}$/
/** The keys of one entry, in the order citc writes them (limits-static-edit.ts). */
export const STATIC_KEYS = ['address', 'controller', 'ssh', 'hardware', 'slurmVersion', 'shared', 'partitions', 'features', 'weight'] as const
export const STATIC_SSH_KEYS = ['user', 'port', 'hostKey', 'key'] as const
export const STATIC_HARDWARE_KEYS = ['sockets', 'coresPerSocket', 'threadsPerCore', 'realMemory'] as const
/** The first feature of every joined machine (jobs may ask for it: --constraint static). */
export const STATIC_FEATURE = 'static'

const SLURM_NAME = /^[A-Za-z0-9_.-]+$/
/** A DNS name: labels of letters, digits and inner "-", dot-separated, 253 characters at most. */
const DNS_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/
/** A POSIX user name as useradd accepts it. */
const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/
const SLURM_VERSION = /^\d+\.\d+(\.\d+)?$/

/** An IPv4 or IPv6 address, or a DNS name. */
export const isHostOrIp = (s: string): boolean => isIP(s) !== 0 || DNS_NAME.test(s)

const host = (what: string) =>
  z
    .string({error: (iss) => `${what} must be an IPv4 or IPv6 address or a DNS name, not ${show(iss.input)}`})
    .refine(isHostOrIp, {error: (iss) => `${JSON.stringify(iss.input)} is not an IPv4 or IPv6 address or a DNS name; write ${what} as e.g. 10.0.0.5 or ws1.lab.example`})

const whole = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) => {
  const message = (iss: {input?: unknown}) => `${what} must be a whole number from ${min}${max === Number.MAX_SAFE_INTEGER ? ' up' : ` to ${max}`}, not ${show(iss.input)}`
  return z.number({error: message}).int({error: message}).min(min, {error: message}).max(max, {error: message})
}

const slurmName = (what: 'partition' | 'feature') =>
  z.string({error: (iss) => `a ${what} name must be text, not ${show(iss.input)}`}).regex(SLURM_NAME, {
    error: (iss) => `${JSON.stringify(iss.input)} is not a valid Slurm ${what} name; use only letters, digits, "_", "." and "-" (no commas, spaces or "=")`,
  })

const staticSchema = z.strictObject({
  address: host('address'),
  controller: host('controller'),
  ssh: z.strictObject(
    {
      user: z
        .string({error: (iss) => `ssh.user must be a user name such as root, not ${show(iss.input)}`})
        .regex(USER_NAME, {error: (iss) => `${JSON.stringify(iss.input)} is not a user name; write the account citc logs in as, e.g. root`}),
      port: whole('ssh.port', 1, 65_535),
      hostKey: z
        .string({error: (iss) => `ssh.hostKey must be a fingerprint "SHA256:…", not ${show(iss.input)}`})
        .regex(FINGERPRINT, {error: (iss) => `${JSON.stringify(iss.input)} is not an OpenSSH fingerprint; write "SHA256:" and 43 base64 characters, as ssh-keygen -lf prints it`}),
      // The private key's path on the management node (node add's --key), for remove and destroy.
      key: z
        .string({error: (iss) => `ssh.key must be the absolute path of a private key, not ${show(iss.input)}`})
        .regex(/^\/\S*$/, {error: (iss) => `${JSON.stringify(iss.input)} is not an absolute path; write the private key's path, e.g. /root/.ssh/id_ed25519`})
        .optional(),
    },
    {error: (iss) => `ssh must be a map such as {user: root, port: 22, hostKey: "SHA256:…"}, not ${show(iss.input)}`},
  ),
  hardware: z.strictObject(
    {
      sockets: whole('sockets', 1),
      coresPerSocket: whole('coresPerSocket', 1),
      threadsPerCore: whole('threadsPerCore', 1),
      realMemory: whole('realMemory (MiB)', 1),
    },
    {error: (iss) => `hardware must be a map such as {sockets: 1, coresPerSocket: 4, threadsPerCore: 2, realMemory: 15000}, not ${show(iss.input)}`},
  ),
  slurmVersion: z
    .string({error: (iss) => `slurmVersion must be text such as "22.05.8", not ${show(iss.input)}`})
    .regex(SLURM_VERSION, {error: (iss) => `${JSON.stringify(iss.input)} is not a Slurm version; write it as slurmd -V prints it, e.g. "22.05.8"`})
    .optional(),
  shared: z.enum(['nfs', 'none'], {error: (iss) => `shared must be nfs or none, not ${show(iss.input)}`}).optional(),
  partitions: z.array(slurmName('partition'), {error: (iss) => `partitions must be a list such as [compute], not ${show(iss.input)}`}).optional(),
  features: z.array(slurmName('feature'), {error: (iss) => `features must be a list such as [bigmem], not ${show(iss.input)}`}).optional(),
  weight: whole('weight (Slurm uses lower weights first)', 1, MAX_WEIGHT).optional(),
})

export const staticKeysAt = (path: YamlPath): readonly string[] | undefined => {
  if (path[0] !== 'static') return undefined
  if (path.length === 2) return STATIC_KEYS
  if (path.length === 3 && path[2] === 'ssh') return STATIC_SSH_KEYS
  if (path.length === 3 && path[2] === 'hardware') return STATIC_HARDWARE_KEYS
  return undefined
}

export interface StaticPartitionRef {
  name: string
  path: YamlPath
}

/**
 * Read `static:`. Partition names it lists are appended to `refs` (checked with the shapes' own
 * references: defined under partitions:, or made when there is no such section).
 */
export function readStaticNodes(
  yaml: YamlFile,
  opts: {clusterId?: string},
  refs: StaticPartitionRef[],
  problems: InputProblem[],
): StaticNodeSpec[] {
  const section = yaml.node(['static'])
  if (section === undefined || (isScalar(section) && section.value === null)) return []
  if (!isMap(section)) {
    problems.push(yaml.problem(['static'], `static must be a map of machine names to their settings (citc node add writes it), not ${show(plainAt(yaml, ['static']))}`))
    return []
  }
  const out: StaticNodeSpec[] = []
  const addresses = new Map<string, {name: string; where: string}>()
  for (const pair of section.items) {
    const name = keyText(pair.key) ?? ''
    const path: YamlPath = ['static', name]
    if (!STATIC_NODE_NAME.test(name)) {
      problems.push(yaml.problem(path, `${JSON.stringify(name)} is not a valid name for a joined machine; use a lower-case letter, then up to 39 lower-case letters, digits and "-" (e.g. ws1)`))
    } else if (opts.clusterId !== undefined && (name === opts.clusterId || name.startsWith(`${opts.clusterId}-`))) {
      problems.push(yaml.problem(path, `"${name}" could be one of the cluster's own node names (they start with "${opts.clusterId}-"); give the machine another name`))
    }
    const node: YamlNode | undefined = yaml.node(path)
    if (!isMap(node)) {
      problems.push(yaml.problem(path, `a joined machine's settings must be a map (address, controller, ssh, hardware, …), not ${show(plainAt(yaml, path))}`))
      continue
    }
    const plain = plainAt(yaml, path) as Record<string, unknown>
    for (const [i, p] of (Array.isArray(plain.partitions) ? (plain.partitions as unknown[]) : []).entries()) {
      if (typeof p === 'string' && SLURM_NAME.test(p) && (plain.partitions as unknown[]).indexOf(p) === i) refs.push({name: p, path: [...path, 'partitions', i]})
    }
    const result = staticSchema.safeParse(plain, {reportInput: true})
    if (!result.success) {
      problems.push(...zodProblems(result.error.issues, yaml, {prefix: path, keysAt: staticKeysAt}))
      continue
    }
    const v = result.data
    for (const key of ['partitions', 'features'] as const) {
      v[key]?.forEach((item, i, list) => {
        if (list.indexOf(item) !== i) problems.push(yaml.problem([...path, key, i], `${JSON.stringify(item)} is listed twice; remove one`))
      })
    }
    v.features?.forEach((f, i) => {
      if (f === STATIC_FEATURE) problems.push(yaml.problem([...path, 'features', i], `every joined machine has the feature "${STATIC_FEATURE}" already; remove it here`))
    })
    const where = yaml.where(path)
    const sameAddress = addresses.get(v.address.toLowerCase())
    if (sameAddress) {
      problems.push(yaml.problem([...path, 'address'], `${v.address} is already the address of "${sameAddress.name}" (${sameAddress.where}); one machine joins once, under one name`))
    } else {
      addresses.set(v.address.toLowerCase(), {name, where})
    }
    // One key order, optional ones only when given: the same file always gives the same JSON.
    out.push({
      name,
      address: v.address,
      controller: v.controller,
      ssh: {user: v.ssh.user, port: v.ssh.port, hostKey: v.ssh.hostKey, ...(v.ssh.key === undefined ? {} : {key: v.ssh.key})},
      hardware: {sockets: v.hardware.sockets, coresPerSocket: v.hardware.coresPerSocket, threadsPerCore: v.hardware.threadsPerCore, realMemory: v.hardware.realMemory},
      ...(v.slurmVersion === undefined ? {} : {slurmVersion: v.slurmVersion}),
      shared: v.shared ?? 'nfs',
      ...(v.partitions ? {partitions: [...new Set(v.partitions)]} : {}),
      ...(v.features ? {features: [...new Set(v.features)]} : {}),
      ...(v.weight === undefined ? {} : {weight: v.weight}),
      where,
    })
  }
  // slurm.conf has one SlurmctldHost: every machine must reach the management node at the same address.
  const first = out[0]
  for (const n of out.slice(1)) {
    if (n.controller !== first.controller) {
      problems.push(
        yaml.problem(
          ['static', n.name, 'controller'],
          `every joined machine must reach the management node at one address (slurm.conf has one SlurmctldHost), but "${first.name}" (${first.where}) uses ${first.controller}; use ${first.controller} here too, or an address every machine can reach`,
        ),
      )
    }
  }
  return out
}

function plainAt(yaml: YamlFile, path: YamlPath): unknown {
  let v: unknown = yaml.value
  for (const seg of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[seg] : undefined
  return v
}
