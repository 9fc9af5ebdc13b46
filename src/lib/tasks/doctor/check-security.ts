// `citc doctor --security -c NAME`: what on the cluster's management node could let someone read or
// reach what they should not — listening sockets, secret files readable by others, secret files' modes
// and owners, homes open to others, NFS exports that do not squash root. Run where the node is (this
// machine for a local cluster, else over SSH), as root there: the collector (security-collect.ts)
// gathers the facts in one script, the checks (security-checks.ts) judge them.
import {posix} from 'node:path'

import {managedHere} from '../../cluster/management-node.js'
import {CLUSTER_JSON, readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import {isCloud} from '../../providers/registry.js'
import type {Transport} from '../../transport/types.js'
import {readStoredLimits, storedStaticNodes} from '../joined/stored-limits.js'
import {withManagementNode} from '../management-session.js'
import {collectSecurityFacts} from './security-collect.js'
import {type SecurityCheck, securityChecks, type SecurityContext, type SecurityLayout} from './security-checks.js'

export type {SecurityCheck, SecurityItem} from './security-checks.js'

export interface SecurityReport {
  cluster: string
  /** Where it was checked: "this machine", "admin@203.0.113.5:22". */
  where: string
  provider: string
  ok: boolean
  checks: SecurityCheck[]
  /** What the report assumed (cluster.json unreadable: the defaults taken). */
  notes: string[]
  /** The scan's bounds: entries looked at, its cap, whether it stopped there, how many secrets contents were compared with. */
  scan?: {entries: number; cap: number; capped: boolean; secretsCompared: number}
}

const DEFAULT_SHARED = '/mnt/shared'

const firstLine = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0]
const fail = (cluster: string, where: string, provider: string, summary: string, hint?: string): SecurityReport => ({
  cluster,
  where,
  provider,
  ok: false,
  checks: [{name: 'collector', ok: false, summary, items: [], notes: hint ? [hint] : []}],
  notes: [],
})

export interface SecurityOptions {
  /** Tests (the stand-in's securityRoot): the node's files under this directory instead of /. */
  root?: string
  /** The node's cluster.json instead of <root>/etc/citc/cluster.json (the stand-in's clusterJson). */
  clusterJson?: string
  maxFiles?: number
}

/** The node's paths, under `root`: the shared directory and Slurm user from cluster.json, the homes from ldap.json (defaults when absent). */
async function layoutOn(t: Transport, root: string, o: SecurityOptions, record: ClusterRecord): Promise<{layout: SecurityLayout; slurmUser: string; notes: string[]}> {
  const at = (p: string) => (root === '' ? p : posix.join(root, p))
  const notes: string[] = []
  let sharedDir = DEFAULT_SHARED
  // As the playbooks choose it (group_vars slurm_user): root where the management node is this machine.
  let slurmUser = managedHere(record) ? 'root' : 'slurm'
  const contractFile = o.clusterJson ?? at(CLUSTER_JSON)
  try {
    const c = await readManagementContract(t, contractFile)
    sharedDir = c.sharedDir
    slurmUser = c.slurmUser
    if (c.name !== record.name) notes.push(`${contractFile} on ${t.description} describes cluster ${c.name}, not ${record.name}: is this ${record.name}'s management node? (\`citc cluster list\` shows each cluster's address)`)
  } catch (error) {
    notes.push(`${firstLine(error)}: assumed the shared filesystem at ${DEFAULT_SHARED} and Slurm user ${slurmUser}`)
  }
  let homeDir = posix.join(sharedDir, 'home')
  try {
    const text = (await t.readFile(at('/etc/citc/ldap.json')))?.toString('utf8')
    const h = text ? (JSON.parse(text) as {homeDir?: unknown}).homeDir : undefined
    if (typeof h === 'string' && h.startsWith('/')) homeDir = h
  } catch {
    // no or unreadable ldap.json: the homes where citc makes them
  }
  return {
    slurmUser,
    notes,
    layout: {
      etcCitc: at('/etc/citc'),
      etcSlurm: at('/etc/slurm'),
      secretsDir: at('/etc/citc/secrets'),
      mungeKey: at('/etc/munge/munge.key'),
      slurmdbdConf: at('/etc/slurm/slurmdbd.conf'),
      sharedDir: at(sharedDir),
      sharedSlurmdbdConf: at(posix.join(sharedDir, 'etc/slurm/slurmdbd.conf')),
      homeDir: at(homeDir),
    },
  }
}

/** The checks on a node already reached (as root). */
export async function checkSecurityVia(t: Transport, record: ClusterRecord, joined: boolean, o: SecurityOptions = {}, signal?: AbortSignal): Promise<SecurityReport> {
  const root = o.root ?? ''
  const {layout, slurmUser, notes} = await layoutOn(t, root, o, record)
  const created = record.origin === 'created' && isCloud(record.provider)
  const ctx: SecurityContext = {cluster: record.name, provider: record.provider, thisMachine: managedHere(record), joined, slurmUser, layout, ...(created ? {cloudSharedFs: true} : {})}
  const facts = await collectSecurityFacts(t, layout, {exportsRoot: root, ...(o.maxFiles ? {maxFiles: o.maxFiles} : {}), ...(signal ? {signal} : {})})
  const checks = securityChecks(facts, ctx)
  return {
    cluster: record.name,
    where: t.description,
    provider: record.provider,
    ok: checks.every((c) => c.ok),
    checks,
    notes,
    scan: {entries: facts.scanned, cap: facts.cap, capped: facts.capped, secretsCompared: facts.secretsCompared},
  }
}

/** Whether machines joined the cluster (its stored limits.yaml's static: section). */
function hasJoined(dir: string, record: ClusterRecord): boolean {
  const text = readStoredLimits(dir)
  if (text === '') return false
  try {
    return storedStaticNodes(text, record).length > 0
  } catch {
    // A stored file finish would refuse: judge by its text (a static: section names machines).
    return /^static:\s*\n\s+-/m.test(text)
  }
}

/** `citc doctor --security -c NAME`: never throws for what it finds; an unreachable node is a failed check. */
export async function checkSecurity(dataDir: string, name: string, o: SecurityOptions = {}): Promise<SecurityReport> {
  const registry = clusterRegistry(dataDir)
  const record = registry.get(registry.resolveName(name))
  const where = managedHere(record) ? 'this machine' : `${record.mgmt.user}@${record.mgmt.host}:${record.mgmt.port}`
  if (record.mgmt.host === PENDING_HOST) return fail(record.name, where, record.provider, 'the management node is not made yet', `continue its create: citc create --name ${record.name} --resume`)
  const joined = hasJoined(registry.paths(record.name).dir, record)
  return withManagementNode(
    record,
    {command: 'citc doctor --security', asRoot: true, unreachable: (error) => fail(record.name, where, record.provider, `the management node cannot be reached: ${firstLine(error)}`, error instanceof CitcError ? error.hint : undefined)},
    async (t, signal) => {
      try {
        return await checkSecurityVia(t, record, joined, o, signal)
      } catch (error) {
        if (signal.aborted) throw error
        return fail(record.name, t.description, record.provider, `the collector failed on ${t.description}: ${firstLine(error)}`, error instanceof CitcError ? error.hint : undefined)
      }
    },
  )
}

/** The report for people, in doctor's layout: each check, its findings with their fixes (ok items listed for sockets and secret files). */
export function securityLines(r: SecurityReport): string[] {
  const pad = ''.padEnd(19)
  const lines = [`Security of cluster ${r.cluster} (${r.where}):`]
  for (const c of r.checks) {
    lines.push(`${c.ok ? '✓' : '✗'} ${c.name.padEnd(19)} ${c.summary}`)
    for (const i of c.items) {
      lines.push(`  ${pad} ${i.ok ? '✓' : '✗'} ${i.subject}: ${i.summary}`)
      if (!i.ok && i.fix) lines.push(`  ${pad}     fix: ${i.fix}`)
    }
    for (const n of c.notes) lines.push(`  ${pad} (${n})`)
  }
  for (const n of r.notes) lines.push(`(${n})`)
  const bad = r.checks.filter((c) => !c.ok)
  lines.push('', bad.length ? `The security of ${r.cluster} needs attention: ${bad.map((c) => c.name).join(', ')}.` : `No finding on ${r.cluster}.`)
  return lines
}
