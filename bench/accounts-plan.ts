// `citc accounts apply` at scale, against the real slurmdbd and directory of a local citc cluster:
// 1,000 accounts (10 parents bench-p01..p10, 990 children bench-a0001..a0990), each with limits
// (GrpTRESMins cpu, MaxJobs) and 10 users, 10,000 users bench-u00001.. in LDAP. Times
//   (a) the first apply (creates everything),
//   (b) a re-run that changes nothing, --dry-run (goal: < 10 s; plan.ops must be empty),
//   (c) an apply after changing one limit (1 op),
// and, to split citc's time from the tools', the raw queries a plan makes (sacctmgr ×3, ldapsearch).
// Then removes everything it made (sacctmgr delete user/account, ldapdelete) and checks the counts are
// back to what they were.
//
// It CHANGES THE CLUSTER (adds and removes LDAP entries, Slurm accounts and users), so it runs only as
// root on the cluster's management node (local provider), with both flags:
//   npx tsx bench/accounts-plan.ts --cluster NAME --yes-i-know-it-changes-the-cluster
// After an interrupted run: the same flags plus --cleanup-only removes bench-* accounts/users/entries.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {userDn, userLdif} from '../src/lib/users/ldif.js'
import {check, CITC, managementNodeOf, median, run, type Run, seconds} from './child.js'

const PARENTS = 10
const ACCOUNTS = 1000 // parents included
const USERS_PER_ACCOUNT = 10
const USERS = ACCOUNTS * USERS_PER_ACCOUNT
const FIRST_UID = 200_001
const RUNS = 3
const CHUNK = 500 // names per sacctmgr delete / ldap call

// ---- arguments -------------------------------------------------------------------------------
const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(name)
const value = (name: string) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const cluster = value('--cluster') ?? value('-c')
if (!cluster || !flag('--yes-i-know-it-changes-the-cluster')) {
  console.error(
    'usage: npx tsx bench/accounts-plan.ts --cluster NAME --yes-i-know-it-changes-the-cluster [--cleanup-only]\n' +
      `It adds ${USERS} LDAP users and ${ACCOUNTS} Slurm accounts to the cluster, then removes them.`,
  )
  process.exit(2)
}

// ---- child processes, every one bounded ------------------------------------------------------

const slurmEnv = {...process.env, SLURM_CONF: '/etc/slurm/slurm.conf'}
const sacctmgr = (args: string[], timeoutMs = 300_000) => check('sacctmgr', args, {env: slurmEnv, timeoutMs})
const citc = (args: string[], timeoutMs = 30 * 60_000) => run(process.execPath, [CITC, ...args], {timeoutMs})

const s = seconds
const chunks = <T>(xs: T[], n: number): T[][] => Array.from({length: Math.ceil(xs.length / n)}, (_, i) => xs.slice(i * n, (i + 1) * n))

// ---- the cluster: must be a citc cluster, and this machine its management node ---------------
const contract = await managementNodeOf(cluster)
slurmEnv.SLURM_CONF = contract.confPath
const ldap = JSON.parse(readFileSync('/etc/citc/ldap.json', 'utf8')) as {uri: string; peopleDn: string; adminDn: string; adminPasswordFile: string; usersGid?: number; homeDir?: string}
const bind = ['-x', '-H', ldap.uri, '-D', ldap.adminDn, '-y', ldap.adminPasswordFile]

const pad = (n: number, w: number) => String(n).padStart(w, '0')
const userName = (i: number) => `bench-u${pad(i, 5)}` // 1-based
const parentName = (p: number) => `bench-p${pad(p, 2)}` // 1-based
const childName = (c: number) => `bench-a${pad(c, 4)}` // 1-based
const users = Array.from({length: USERS}, (_, i) => userName(i + 1))
const parents = Array.from({length: PARENTS}, (_, i) => parentName(i + 1))
const children = Array.from({length: ACCOUNTS - PARENTS}, (_, i) => childName(i + 1))

// ---- counts (the cleanup check) --------------------------------------------------------------
interface Counts {
  accounts: number
  users: number
  assocs: number
  people: number
  benchAccounts: number
  benchUsers: number
  benchPeople: number
}
const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '')
async function counts(): Promise<Counts> {
  const [acc, usr, assoc, people] = await Promise.all([
    sacctmgr(['-nP', 'show', 'account', 'format=Account']),
    sacctmgr(['-nP', 'show', 'user', 'format=User']),
    sacctmgr(['-nP', 'show', 'assoc', `cluster=${cluster}`, 'format=Account,User']),
    check('ldapsearch', [...bind, '-LLL', '-o', 'ldif-wrap=no', '-b', ldap.peopleDn, '(objectClass=posixAccount)', 'uid'], {timeoutMs: 120_000}),
  ])
  const a = lines(acc.stdout)
  const u = lines(usr.stdout)
  const p = lines(people.stdout).filter((l) => l.startsWith('uid: '))
  return {
    accounts: a.length,
    users: u.length,
    assocs: lines(assoc.stdout).length,
    people: p.length,
    benchAccounts: a.filter((x) => x.startsWith('bench-')).length,
    benchUsers: u.filter((x) => x.startsWith('bench-')).length,
    benchPeople: p.filter((x) => x.startsWith('uid: bench-')).length,
  }
}

// ---- cleanup: what this bench made, by name (never the file-driven prune: it keeps the default account)
async function cleanup(): Promise<void> {
  const t0 = performance.now()
  const now = await counts()
  if (now.benchUsers > 0) {
    const have = new Set(lines((await sacctmgr(['-nP', 'show', 'user', 'format=User'])).stdout))
    for (const c of chunks(users.filter((u) => have.has(u)), CHUNK)) await sacctmgr(['-i', 'delete', 'user', 'where', `name=${c.join(',')}`])
  }
  if (now.benchAccounts > 0) {
    const have = new Set(lines((await sacctmgr(['-nP', 'show', 'account', 'format=Account'])).stdout))
    for (const group of [children, parents]) {
      for (const c of chunks(group.filter((a) => have.has(a)), CHUNK)) await sacctmgr(['-i', 'delete', 'account', 'where', `name=${c.join(',')}`])
    }
  }
  if (now.benchPeople > 0) {
    // -c: go on past entries that are not there (exit 32 for those).
    const r = await run('ldapdelete', [...bind, '-c'], {input: users.map((u) => userDn(u, ldap.peopleDn)).join('\n') + '\n', timeoutMs: 300_000})
    if (r.code !== 0 && r.code !== 32) throw new Error(`ldapdelete exited ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join('\n')}`)
  }
  console.log(`cleanup                                   ${s(performance.now() - t0)}`)
}

if (flag('--cleanup-only')) {
  await cleanup()
  const after = await counts()
  console.log(`after cleanup: ${JSON.stringify(after)}`)
  process.exit(after.benchAccounts + after.benchUsers + after.benchPeople === 0 ? 0 : 1)
}

const before = await counts()
if (before.benchAccounts + before.benchUsers + before.benchPeople > 0) {
  console.error(`the cluster has bench-* accounts, users or directory entries already (${JSON.stringify(before)}): run with --cleanup-only first`)
  process.exit(1)
}
console.log(`cluster ${cluster}: ${before.accounts} accounts, ${before.users} users, ${before.assocs} associations, ${before.people} directory users before (node ${process.version})`)

// ---- accounts.yaml ---------------------------------------------------------------------------
const childrenPer = Math.ceil(children.length / PARENTS) // 99
function accountsYaml(changedMaxJobs?: number): string {
  const out: string[] = ['accounts:']
  let u = 0
  const usersOf = () => Array.from({length: USERS_PER_ACCOUNT}, () => users[u++]).join(', ')
  parents.forEach((p, pi) => {
    out.push(`  ${p}:`, `    description: bench parent ${pi + 1}`, `    limits: {GrpTRESMins: {cpu: ${10_000_000 + pi}}, MaxJobs: 500}`, `    users: [${usersOf()}]`)
    for (let c = pi * childrenPer; c < Math.min((pi + 1) * childrenPer, children.length); c++) {
      const maxJobs = c === 499 && changedMaxJobs !== undefined ? changedMaxJobs : 10 + (c % 40)
      out.push(`  ${children[c]}:`, `    parent: ${p}`, `    limits: {GrpTRESMins: {cpu: ${100_000 + c}}, MaxJobs: ${maxJobs}}`, `    users: [${usersOf()}]`)
    }
  })
  if (u !== USERS) throw new Error(`placed ${u} users, expected ${USERS}`)
  return out.join('\n') + '\n'
}

const dir = mkdtempSync(join(tmpdir(), 'citc-bench-accounts-'))
const file = join(dir, 'accounts.yaml')
interface ApplyDoc {
  changed: boolean
  applied: boolean
  plan: {ops: {op: string; line: string}[]; refused: unknown[]}
}
async function apply(extra: string[]): Promise<{ms: number; doc: ApplyDoc}> {
  const r = await citc(['accounts', 'apply', '-c', cluster!, '--file', file, '--yes', '--json', ...extra])
  if (r.code !== 0) throw new Error(`citc accounts apply ${extra.join(' ')} exited ${r.code}:\n${(r.stdout + r.stderr).trim().split('\n').slice(-15).join('\n')}`)
  return {ms: r.ms, doc: JSON.parse(r.stdout) as ApplyDoc}
}

const summary: [string, string, string][] = []
let failed = false
try {
  // ---- 10,000 directory users, one ldapadd -----------------------------------------------------
  const home = ldap.homeDir ?? '/home'
  const ldif = users
    .map((u, i) =>
      userLdif({username: u, firstName: 'Bench', surname: `User ${i + 1}`, uidNumber: FIRST_UID + i, gidNumber: ldap.usersGid ?? 100, homeDirectory: `${home}/${u}`, loginShell: '/bin/bash'}, ldap.peopleDn),
    )
    .join('')
  const add = await check('ldapadd', bind, {input: ldif, timeoutMs: 600_000})
  console.log(`ldapadd ${USERS} users (one call)              ${s(add.ms)}`)
  summary.push(['ldapadd 10,000 users', s(add.ms), 'one call'])

  // ---- (a) the first apply ---------------------------------------------------------------------
  writeFileSync(file, accountsYaml())
  const first = await apply([])
  const opsByKind = Object.entries(first.doc.plan.ops.reduce<Record<string, number>>((m, o) => ((m[o.op] = (m[o.op] ?? 0) + 1), m), {}))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ')
  console.log(`(a) first apply                            ${s(first.ms)}  ops ${first.doc.plan.ops.length} (${opsByKind}), applied ${first.doc.applied}`)
  if (!first.doc.applied) throw new Error('the first apply did not apply')
  summary.push(['(a) first apply (create all)', s(first.ms), `${first.doc.plan.ops.length} ops`])

  // ---- (b) no change, --dry-run ---------------------------------------------------------------
  const noChange: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const r = await apply(['--dry-run'])
    if (r.doc.plan.ops.length !== 0) throw new Error(`no-change plan has ${r.doc.plan.ops.length} ops, e.g. ${r.doc.plan.ops.slice(0, 3).map((o) => o.line).join('; ')}`)
    noChange.push(r.ms)
  }
  console.log(`(b) no-change --dry-run                    median ${s(median(noChange))}  (${noChange.map(s).join(', ')})  ops 0  goal < 10 s: ${median(noChange) < 10_000 ? 'met' : 'MISSED'}`)
  summary.push(['(b) no-change plan (--dry-run)', s(median(noChange)), `0 ops, goal < 10 s ${median(noChange) < 10_000 ? 'met' : 'MISSED'}`])

  // What a plan reads, each alone (the same argv citc runs), to split tool time from citc time.
  const q = (await import('../src/lib/accounts/sacctmgr-state.js')).stateQueries(cluster.toLowerCase())
  const raw: [string, () => Promise<Run>][] = [
    ['sacctmgr show assoc (WOPLimits)', () => sacctmgr(q.assoc)],
    ['sacctmgr show account', () => sacctmgr(q.account)],
    ['sacctmgr show user', () => sacctmgr(q.user)],
    ['ldapsearch People (listUsers)', () => check('ldapsearch', [...bind, '-LLL', '-o', 'ldif-wrap=no', '-b', ldap.peopleDn, '-s', 'sub', '(objectClass=posixAccount)', 'uid', 'uidNumber', 'gidNumber', 'cn', 'givenName', 'sn', 'homeDirectory', 'loginShell'], {timeoutMs: 120_000})],
    ['squeue (active jobs)', () => check('squeue', ['--noheader', '--states=PENDING,RUNNING,SUSPENDED,COMPLETING,CONFIGURING', '--format=%i|%a|%u|%T|%r'], {env: slurmEnv, timeoutMs: 60_000})],
  ]
  for (const [label, fn] of raw) {
    const ms: number[] = []
    let size = 0
    for (let i = 0; i < RUNS; i++) {
      const r = await fn()
      ms.push(r.ms)
      size = lines(r.stdout).length
    }
    console.log(`    raw: ${label.padEnd(34)} median ${s(median(ms))}  (${size} lines)`)
  }
  const bare = await run(process.execPath, [CITC, '--version'], {timeoutMs: 60_000})
  console.log(`    citc --version (CLI start)                ${s(bare.ms)}`)

  // ---- (c) one limit changed: 1 op, applied (alternating values so each run is 1 op) -------------
  const oneDry: number[] = []
  const oneApply: number[] = []
  for (let i = 0; i < RUNS; i++) {
    writeFileSync(file, accountsYaml(1000 + i))
    const dry = await apply(['--dry-run'])
    if (dry.doc.plan.ops.length !== 1) throw new Error(`one-limit plan has ${dry.doc.plan.ops.length} ops: ${dry.doc.plan.ops.slice(0, 3).map((o) => o.line).join('; ')}`)
    oneDry.push(dry.ms)
    const r = await apply([])
    if (r.doc.plan.ops.length !== 1 || !r.doc.applied) throw new Error(`one-limit apply: ${r.doc.plan.ops.length} ops, applied ${r.doc.applied}`)
    if (i === 0) console.log(`    the op: ${r.doc.plan.ops[0].line}`)
    oneApply.push(r.ms)
  }
  console.log(`(c) one limit changed, --dry-run           median ${s(median(oneDry))}  (${oneDry.map(s).join(', ')})  ops 1`)
  console.log(`(c) one limit changed, apply (+ verify)    median ${s(median(oneApply))}  (${oneApply.map(s).join(', ')})  ops 1`)
  summary.push(['(c) one limit changed, plan', s(median(oneDry)), '1 op'])
  summary.push(['(c) one limit changed, apply', s(median(oneApply)), '1 op, plan + apply + verify'])
} catch (error) {
  failed = true
  console.error(`FAILED: ${(error as Error).message}`)
} finally {
  rmSync(dir, {recursive: true, force: true})
  try {
    await cleanup()
  } catch (error) {
    failed = true
    console.error(`cleanup FAILED: ${(error as Error).message}\nrun again with --cleanup-only`)
  }
}

const after = await counts()
const same = (['accounts', 'users', 'assocs', 'people'] as const).every((k) => after[k] === before[k]) && after.benchAccounts + after.benchUsers + after.benchPeople === 0
console.log(`after cleanup: ${after.accounts} accounts, ${after.users} users, ${after.assocs} associations, ${after.people} directory users: ${same ? 'as before' : 'NOT as before'}`)
if (!same) failed = true

console.log(`\n${'step'.padEnd(34)} ${'time'.padStart(9)}  notes`)
for (const [a, b, c] of summary) console.log(`${a.padEnd(34)} ${b.padStart(9)}  ${c}`)
process.exit(failed ? 1 : 0)
