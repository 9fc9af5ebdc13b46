// Accounting on a real local cluster: citc create (slurmctld, slurmdbd + MariaDB, slapd), users,
// `citc accounts apply` of a tree with limits, jobs charged to accounts, `citc usage`, a GrpTRESMins
// budget used up holding the next job with Slurm's reason, prune refusing an account with a running
// job, bad accounts files refused at file:line:col with nothing changed, add-user --account, and
// remove-user with and without running jobs. sacctmgr load against the real slurmdbd: free text with
// "#" and backslashes, a bad line and a parent removed since the plan (nothing added), an account
// pruned and declared again. Usage checked against sacct's own ElapsedRaw × NNodes, priced by the
// cluster's own prices.yaml. Long: it starts real services. Every wait is bounded.
import {execFileSync, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseAccounts} from '../../src/lib/accounts/parse.js'
import {planAccounts} from '../../src/lib/accounts/plan.js'
import {opLine} from '../../src/lib/accounts/render.js'
import {AccountsStore, batches} from '../../src/lib/accounts/slurmdbd.js'
import {readManagementContract} from '../../src/lib/cluster/management-contract.js'
import {localTransport} from '../../src/lib/transport/local.js'
import {citc} from '../helpers/cli.js'
import {sh, until} from '../helpers/slurm-shell.js'
import {portAccepts} from '../helpers/net.js'
import {lockSystem} from '../helpers/system-lock.js'

const NAME = 'acct'
const USERS = ['ada', 'bea', 'cyd'] as const
const home = (u: string) => `/mnt/shared/home/${u}`
const work = mkdtempSync(join(tmpdir(), 'citc-accounting-e2e-'))
const env = {CITC_DATA_DIR: join(work, 'data')}


/** Submit a batch job as `user`; its id. */
function submit(user: string, args: string[]): string {
  const r = sh('sbatch', ['-D', home(user), '-o', '/dev/null', ...args], {user})
  if (r.status !== 0) throw new Error(`sbatch as ${user} failed: ${r.stderr}`)
  return /Submitted batch job (\d+)/.exec(r.stdout)![1]
}

const jobLine = (id: string) => sh('squeue', ['-h', '-j', id, '-o', '%T|%r|%a']).stdout.trim()

/** Everything slurmdbd holds for the cluster, as text: what "nothing changed" compares. */
const accountingDump = () =>
  sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `cluster=${NAME}`, 'format=account,user,parentname,fairshare,grptresmins,grptres,maxjobs,maxsubmitjobs,maxwall,qos']).stdout +
  sh('sacctmgr', ['-n', '-P', 'show', 'user', 'format=user,defaultaccount']).stdout

/** The accounts of this cluster as citc's own code reads them (the store `accounts apply` uses). */
async function openStore(): Promise<AccountsStore> {
  const t = localTransport()
  return AccountsStore.open(t, (await readManagementContract(t)).confPath)
}

/** The plan `accounts apply` would make for `text` against what slurmdbd holds now. */
async function planFor(store: AccountsStore, text: string) {
  const desired = parseAccounts(text, {file: 'plan.yaml', tres: await store.tres(), qos: await store.qos(), directoryUsers: [...USERS]})
  return planAccounts(desired, await store.state(), {prune: false, clusterDefaultAccount: NAME, runningJobs: []})
}

const accountRecords = () => sh('sacctmgr', ['-n', '-P', 'show', 'account', 'format=account']).stdout.split('\n').filter(Boolean)

const file = (name: string, text: string) => {
  const p = join(work, name)
  writeFileSync(p, text)
  return p
}

// The tree of the issue, with a 1 CPU-minute budget on physics (a 65-s job on a 1-CPU node uses it up).
const TREE = `accounts:
  physics:
    description: Physics department
    limits: {GrpTRESMins: {cpu: 1}, MaxJobs: 10}
    users: [ada]
  physics-lab:
    parent: physics
    users: [bea]
  chemistry:
    description: Chemistry department
    users: [cyd]
`

let release: (() => void) | undefined

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('the accounting e2e test must run as root (as CI does)')
  const lock = await lockSystem('accounting e2e test')
  release = () => lock.release()
  for (const u of USERS) if (spawnSync('getent', ['passwd', u]).status === 0) throw new Error(`a user ${u} exists on this machine already: this test creates one`)
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'e2e', '-f', join(work, 'key')])
  writeFileSync(join(work, 'limits.yaml'), 'local.small: 2\n')
}, 60 * 60_000)

afterAll(async () => {
  if (existsSync(join(work, 'data', 'clusters', NAME))) await citc(['destroy', NAME, '--yes'], {env, timeoutMs: 300_000})
  rmSync(work, {recursive: true, force: true})
  release?.()
})

describe('accounts, usage and users on a real cluster', () => {
  it('creates a cluster and its users', async () => {
    // Without monitoring (issue #21): this test needs none, and it proves --no-monitoring leaves it all out.
    const r = await citc(['create', '--provider', 'local', '--name', NAME, '--suspend-time', '60', '--limits', join(work, 'limits.yaml'), '--no-monitoring', '--yes'], {env, timeoutMs: 900_000})
    if (r.code !== 0) throw new Error(`create failed (${r.code}):\n${r.stdout}\n${r.stderr}`)
    expect(JSON.parse(readFileSync('/etc/citc/cluster.json', 'utf8')).monitoring).toBeUndefined()
    expect([await portAccepts(9090), await portAccepts(9100), existsSync('/etc/init.d/citc-prometheus'), existsSync('/var/lib/citc/metrics')]).toEqual([false, false, false, false])
    for (const u of USERS) {
      const a = await citc(['add-user', u, '--first-name', u, '--surname', 'Test', '--key', join(work, 'key.pub'), '-c', NAME], {env})
      expect(a.code, a.stderr).toBe(0)
    }
  }, 900_000)

  it('refuses bad accounts files at file:line:col, and changes nothing', async () => {
    const before = accountingDump()
    const cases: [string, string, RegExp][] = [
      ['unknown-user.yaml', 'accounts:\n  physics:\n    users: [ada, zed]\n', /unknown-user\.yaml:3:18 .*user "zed" is not in the cluster.s directory/],
      ['unknown-tres.yaml', 'accounts:\n  physics:\n    limits: {GrpTRESMins: {cpux: 10}}\n', /unknown-tres\.yaml:3:28 .*unknown TRES "cpux"; did you mean "cpu"/],
      ['cycle.yaml', 'accounts:\n  a:\n    parent: b\n  b:\n    parent: a\n', /cycle\.yaml:\d+:\d+ .*(cycle|circle|loop)/i],
      ['bad-number.yaml', 'accounts:\n  physics:\n    limits: {MaxJobs: -3}\n', /bad-number\.yaml:3:\d+ .*MaxJobs/],
      ['injection.yaml', 'accounts:\n  "physics,root":\n    users: [ada]\n', /injection\.yaml:2:3 /],
      ['typo.yaml', 'accounts:\n  physics:\n    limit: {MaxJobs: 3}\n', /typo\.yaml:3:5 .*did you mean "limits"/],
    ]
    for (const [name, text, message] of cases) {
      const r = await citc(['accounts', 'apply', '-c', NAME, '--file', file(name, text), '--yes'], {env})
      expect(r.code, `${name}: ${r.stderr}`).toBe(3)
      expect(r.stderr).toMatch(message)
      expect(r.stderr).toMatch(/nothing was changed/)
    }
    const missing = await citc(['accounts', 'apply', '-c', NAME, '--file', join(work, 'nope.yaml'), '--yes'], {env})
    expect(missing.code).toBe(3)
    expect(missing.stderr).toMatch(/nope\.yaml.*no such file/)
    expect(accountingDump()).toBe(before)
  }, 120_000)

  it('applies a tree with limits and users, verifies it, and a re-run changes nothing', async () => {
    const tree = file('accounts.yaml', TREE)
    const dry = await citc(['accounts', 'apply', '-c', NAME, '--file', tree, '--dry-run'], {env})
    expect(dry.code, dry.stderr).toBe(0)
    expect(dry.stdout).toContain('+ account physics-lab (parent physics)')
    expect(accountingDump()).not.toMatch(/physics/)

    const r = await citc(['accounts', 'apply', '-c', NAME, '--file', tree, '--yes', '--json'], {env})
    expect(r.code, r.stderr).toBe(0)
    expect(r.json()).toMatchObject({cluster: NAME, changed: true, applied: true, warnings: []})
    const assoc = sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', `cluster=${NAME}`, 'format=account,user,parentname,grptresmins,maxjobs', 'WOPLimits']).stdout
    expect(assoc).toContain('physics||root|cpu=1|10\n')
    expect(assoc).toContain('physics-lab||physics||\n')
    expect(assoc).toContain('physics|ada|||')
    expect(assoc).toContain('physics-lab|bea|||')
    expect(assoc).toContain('chemistry|cyd|||')

    const again = await citc(['accounts', 'apply', '-c', NAME, '--file', tree, '--yes', '--json'], {env})
    expect(again.code, again.stderr).toBe(0)
    expect(again.json()).toMatchObject({changed: false, applied: false, plan: {ops: []}})
  }, 120_000)

  it('free text with "#" and a backslash goes through sacctmgr load as written: verified, and a re-run changes nothing', async () => {
    // sacctmgr reads a load file's "#" as a comment and drops backslashes (file_functions.c): unescaped,
    // this description left an unterminated quote and sacctmgr loaded nothing (exit 1).
    const notes = file('notes.yaml', "accounts:\n  notes:\n    description: 'Room #2, C:\\share'\n    organisation: 'Lab #1'\n")
    const r = await citc(['accounts', 'apply', '-c', NAME, '--file', notes, '--yes', '--json'], {env})
    expect(r.code, r.stderr).toBe(0)
    expect(r.json()).toMatchObject({changed: true, applied: true})
    expect(sh('sacctmgr', ['-n', '-P', 'show', 'account', 'where', 'name=notes', 'format=account,descr,org']).stdout.trim()).toBe('notes|room #2, c:\\share|lab #1')
    const again = await citc(['accounts', 'apply', '-c', NAME, '--file', notes, '--yes', '--json'], {env})
    expect(again.json()).toMatchObject({changed: false, plan: {ops: []}})
  }, 120_000)

  it('sacctmgr load adds nothing of a file with one bad line (the real slurmdbd, through AccountsStore.apply)', async () => {
    // citc's parser refuses every value that would make a bad line (MaxJobs must be a whole number), so
    // the bad line is put in at the store: the planner's own operations, then one account whose
    // MaxJobs sacctmgr cannot read. The good lines come first in the file; none of them may be added.
    const store = await openStore()
    const plan = await planFor(store, 'accounts:\n  lab-one:\n    description: First lab\n    users: [ada]\n')
    expect(plan.ops.map(opLine)).toEqual(['+ account lab-one (parent root): description "First lab"', '+ user ada to lab-one'])
    const ops = [...plan.ops, {op: 'addAccount' as const, account: 'lab-two', parent: 'root', limits: [{field: 'MaxJobs', to: 'many'}]}]
    expect(batches(ops)).toHaveLength(1) // one sacctmgr load
    const before = accountingDump()
    const records = accountRecords()
    const loadFiles = () => readdirSync(tmpdir()).filter((n) => n.startsWith('citc-accounts-load'))
    const filesBefore = loadFiles()
    await expect(store.apply(ops, () => undefined)).rejects.toThrow(/sacctmgr load failed on this machine \(exit 1\); nothing of it was added; at "Account - 'lab-two':MaxJobs=many"/)
    expect(accountingDump()).toBe(before)
    expect(accountRecords()).toEqual(records)
    expect(loadFiles()).toEqual(filesBefore) // its temporary load file removed
  }, 120_000)

  it('an account removed by someone else between plan and apply: the load stops before reading anything, and adds nothing', async () => {
    // sacctmgr 22.05 stops at a Parent line naming a missing account and ADDS what it read before it
    // (exit 1): seen here, lab-three and bea were added. loadText names the parents first for this.
    const store = await openStore()
    expect(sh('sacctmgr', ['-i', 'add', 'account', 'doomed', `cluster=${NAME}`, 'parent=root']).status).toBe(0)
    try {
      // lab-three comes first in the load file, then the users of doomed under "Parent - 'doomed'".
      const plan = await planFor(store, 'accounts:\n  lab-three:\n    users: [bea]\n  doomed:\n    users: [ada]\n')
      expect(plan.ops.map(opLine)).toEqual(['+ account lab-three (parent root)', '+ user bea to lab-three', '+ user ada to doomed'])
      expect(sh('sacctmgr', ['-i', 'delete', 'account', 'where', 'name=doomed', `cluster=${NAME}`]).status).toBe(0)
      const before = accountingDump()
      await expect(store.apply(plan.ops, () => undefined)).rejects.toThrow(/sacctmgr load failed on this machine \(exit 1\); nothing of it was added; at "Parent - 'doomed'": account doomed is not in slurmdbd/)
      expect(accountingDump()).toBe(before)
    } finally {
      for (const a of ['lab-three', 'doomed']) sh('sacctmgr', ['-i', 'delete', 'account', 'where', `name=${a}`, `cluster=${NAME}`])
    }
  }, 120_000)

  let chargedJob = ''
  it('a job as a user charges its account, and usage --json shows its CPU-seconds', async () => {
    // One CPU for 65 s: more than physics' 1 CPU-minute budget. Slurm kills an association's running
    // jobs when its GrpTRESMins is reached, which it sees at its usage pass (PriorityCalcPeriod=1, a
    // minute): the job ends at 65 s, or is ended by that pass between 60 and 65 s (sbatch exits 1).
    const r = sh('sbatch', ['--wait', '-A', 'physics', '-D', home('ada'), '-o', '/dev/null', '-t', '3', '--wrap', 'sleep 65'], {user: 'ada', timeoutMs: 240_000})
    chargedJob = /Submitted batch job (\d+)/.exec(r.stdout)![1]
    const [account, cpus, elapsed, state] = sh('sacct', ['-j', chargedJob, '-X', '-n', '-P', '-o', 'Account,AllocCPUS,ElapsedRaw,State']).stdout.trim().split('|')
    expect(account).toBe('physics')
    const cpuSeconds = Number(cpus) * Number(elapsed)
    // Either way the budget is used up, which the tests below need.
    expect(cpuSeconds, `job ${state} (sbatch exit ${r.status}: ${r.stderr})`).toBeGreaterThanOrEqual(60)

    const byAccount = await citc(['usage', '-c', NAME, '--since', 'today', '--by', 'account', '--json'], {env})
    expect(byAccount.code, byAccount.stderr).toBe(0)
    const doc = byAccount.json()
    expect(doc).toMatchObject({version: 1, cluster: NAME, by: 'account'})
    expect(doc.rows.find((row: {key: string}) => row.key === 'physics')).toMatchObject({jobs: 1, running: 0, cpuSeconds})
    const byUser = (await citc(['usage', '-c', NAME, '--since', 'today', '--by', 'user', '--json'], {env})).json()
    expect(byUser.rows.find((row: {key: string}) => row.key === 'ada')).toMatchObject({jobs: 1, cpuSeconds})
    const byShape = (await citc(['usage', '-c', NAME, '--since', 'today', '--by', 'shape', '--json'], {env})).json()
    expect(byShape.rows.map((row: {key: string}) => row.key)).toEqual(['local.small'])
    expect(byShape.rows[0].cpuSeconds).toBe(cpuSeconds)

    // Priced: a prices file for the shape gives node-hours × price.
    const prices = file('prices.yaml', 'currency: EUR\nshapes:\n  local.small: 3.6\n')
    const priced = (await citc(['usage', '-c', NAME, '--since', 'today', '--prices', prices, '--json'], {env})).json()
    expect(priced.currency).toBe('EUR')
    expect(priced.totals.cost).toBeCloseTo(priced.totals.nodeHours * 3.6, 4)
    const csv = await citc(['usage', '-c', NAME, '--since', 'today', '--by', 'user', '--csv'], {env})
    expect(csv.stdout.split('\n')[0]).toMatch(/^user,jobs,running,cpu_seconds,/)
    expect(csv.stdout).toMatch(new RegExp(`^ada,1,0,${cpuSeconds},`, 'm'))
  }, 300_000)

  it('with the budget used up, the next job waits with Slurm’s reason, and `citc accounts` shows it', async () => {
    const id = submit('ada', ['-A', 'physics', '-t', '1', '--wrap', 'true'])
    // slurmctld adds a finished job's usage at its next priority pass (PriorityCalcPeriod=1: a minute).
    const line = await until('the job held by the account’s budget', 150_000, () => {
      const l = jobLine(id)
      return l.includes('AssocGrpCPUMinutesLimit') && l
    })
    expect(line).toBe('PENDING|AssocGrpCPUMinutesLimit|physics')

    const r = await citc(['accounts', '-c', NAME, '--json'], {env})
    expect(r.code, r.stderr).toBe(0)
    const physics = r.json().accounts.find((a: {name: string}) => a.name === 'physics')
    expect(physics.exhausted).toEqual(['GrpTRESMins cpu'])
    expect(physics.used.GrpTRESMins.cpu.limit).toBe(1)
    expect(physics.used.GrpTRESMins.cpu.used).toBeGreaterThanOrEqual(1)
    expect(physics.waiting).toEqual([{jobId: id, user: 'ada', reason: 'AssocGrpCPUMinutesLimit'}])
    // ada's default stays the cluster's account add-user gave her (the file does not set one).
    expect(physics.users).toEqual([{name: 'ada', default: false}])
    const text = await citc(['accounts', '-c', NAME], {env})
    expect(text.stdout).toMatch(/physics — physics department {2}\[LIMIT REACHED: GrpTRESMins cpu\]/)
    expect(text.stdout).toContain(`job ${id} (ada) waits: AssocGrpCPUMinutesLimit`)

    // Raising the budget in the file lets it run.
    const raised = file('raised.yaml', TREE.replace('{cpu: 1}', '{cpu: 600}'))
    const apply = await citc(['accounts', 'apply', '-c', NAME, '--file', raised, '--yes'], {env})
    expect(apply.code, apply.stderr).toBe(0)
    expect(apply.stdout).toContain('~ physics GrpTRESMins cpu 1 → 600')
    await until('the held job to run', 120_000, () => !jobLine(id).startsWith('PENDING'))
  }, 300_000)

  it('prune refuses an account with a running job, and removes what has none', async () => {
    const running = submit('cyd', ['-A', 'chemistry', '-t', '5', '--wrap', 'sleep 300'])
    await until('the chemistry job to run', 120_000, () => jobLine(running).startsWith('RUNNING'))
    const withoutChemistry = file('no-chemistry.yaml', TREE.replace('{cpu: 1}', '{cpu: 600}').replace(/ {2}chemistry:[\s\S]*$/, ''))
    const kept = await citc(['accounts', 'apply', '-c', NAME, '--file', withoutChemistry, '--prune', '--yes', '--json'], {env})
    expect(kept.code, kept.stderr).toBe(0)
    const doc = kept.json()
    expect(doc.plan.refused.map((x: {account: string}) => x.account)).toContain('chemistry')
    expect(doc.plan.refused.find((x: {account: string}) => x.account === 'chemistry').line).toMatch(/^! account chemistry kept: .*job/)
    expect(sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', 'account=chemistry', 'format=account,user']).stdout).toContain('chemistry|cyd')
    // Without --prune, nothing the file leaves out is even planned for removal.
    const plain = (await citc(['accounts', 'apply', '-c', NAME, '--file', withoutChemistry, '--dry-run', '--json'], {env})).json()
    expect(plain.plan.ops.filter((op: {op: string}) => op.op.startsWith('remove'))).toEqual([])

    expect(sh('scancel', [running]).status).toBe(0)
    await until('the chemistry job to end', 120_000, () => jobLine(running) === '')
    const pruned = await citc(['accounts', 'apply', '-c', NAME, '--file', withoutChemistry, '--prune', '--yes', '--json'], {env})
    expect(pruned.code, pruned.stderr).toBe(0)
    expect(pruned.json().plan.ops.map((op: {line: string}) => op.line)).toContain('- account chemistry')
    expect(sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', 'account=chemistry', `cluster=${NAME}`, 'format=account']).stdout.trim()).toBe('')
  }, 400_000)

  it('an account pruned and declared again comes back through load (its record outlived the delete), and verifies', async () => {
    const tree = file('tree-again.yaml', TREE.replace('{cpu: 1}', '{cpu: 600}'))
    const r = await citc(['accounts', 'apply', '-c', NAME, '--file', tree, '--yes', '--json'], {env})
    expect(r.code, r.stderr).toBe(0)
    expect(r.json().plan.ops.map((op: {line: string}) => op.line)).toEqual(['+ account chemistry (parent root): description "Chemistry department"', '+ user cyd to chemistry'])
    expect(r.json().applied).toBe(true)
    expect(sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', 'account=chemistry', `cluster=${NAME}`, 'format=account,user']).stdout).toContain('chemistry|cyd')
    const again = await citc(['accounts', 'apply', '-c', NAME, '--file', tree, '--yes', '--json'], {env})
    expect(again.json()).toMatchObject({changed: false})
  }, 120_000)

  it('add-user --account takes a declared account and refuses an unknown one', async () => {
    const bad = await citc(['add-user', 'dee', '--first-name', 'Dee', '--surname', 'Test', '--key', join(work, 'key.pub'), '--account', 'physic', '-c', NAME], {env})
    expect(bad.code).toBe(3)
    expect(bad.stderr).toMatch(/physic/)
    expect(bad.stderr).toMatch(/physics/) // did you mean
    expect(spawnSync('getent', ['passwd', 'dee']).status).not.toBe(0)
    const good = await citc(['add-user', 'dee', '--first-name', 'Dee', '--surname', 'Test', '--key', join(work, 'key.pub'), '--account', 'physics-lab', '-c', NAME, '--json'], {env})
    expect(good.code, good.stderr).toBe(0)
    expect(good.json().users[0].account).toBe('physics-lab')
  }, 120_000)

  it('remove-user refuses while the user has a running job, and --force cancels it and removes them', async () => {
    const running = submit('bea', ['-A', 'physics-lab', '-t', '5', '--wrap', 'sleep 300'])
    await until('bea’s job to run', 120_000, () => jobLine(running).startsWith('RUNNING'))
    const refused = await citc(['remove-user', 'bea', '-c', NAME, '--yes'], {env})
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/running|active/)
    expect(refused.stderr).toMatch(/--force/)
    expect(sh('getent', ['passwd', 'bea']).status).toBe(0)
    expect(jobLine(running)).toMatch(/^RUNNING/)

    const forced = await citc(['remove-user', 'bea', '-c', NAME, '--force', '--yes', '--json'], {env})
    expect(forced.code, forced.stderr).toBe(0)
    expect(jobLine(running)).toBe('')
    expect(sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', 'user=bea', 'format=account']).stdout.trim()).toBe('')
    await until('bea gone from NSS', 60_000, () => sh('getent', ['passwd', 'bea']).status !== 0)
    expect(existsSync(home('bea'))).toBe(true) // kept without --delete-home
  }, 300_000)

  it('remove-user --delete-home removes a user without jobs and their home', async () => {
    const r = await citc(['remove-user', 'dee', '-c', NAME, '--delete-home', '--yes'], {env})
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync(home('dee'))).toBe(false)
    expect(sh('sacctmgr', ['-n', '-P', 'show', 'assoc', 'where', 'user=dee', 'format=account']).stdout.trim()).toBe('')
    const unknown = await citc(['remove-user', 'dee', '-c', NAME, '--yes'], {env})
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toMatch(/dee/)
  }, 120_000)

  it('usage: node-hours and cost are sacct’s own ElapsedRaw × NNodes / 3600 × the price of each job’s shape, with the cluster’s own prices.yaml', async () => {
    const since = new Date()
    since.setUTCHours(0, 0, 0, 0)
    // Every job of the day, as sacct itself reports it (UTC, like citc's window "today").
    const sacctRows = () =>
      sh('env', ['TZ=UTC', 'sacct', '-a', '-X', '-n', '-P', '-S', since.toISOString().slice(0, 19), '-E', 'now', '-o', 'JobID,Account,ElapsedRaw,NNodes,NodeList,End'])
        .stdout.split('\n')
        .filter(Boolean)
        .map((l) => l.split('|'))
    const rows = await until('every job of the day to have ended in sacct', 120_000, () => {
      const r = sacctRows()
      return r.length > 0 && r.every((x) => x[5] !== 'Unknown') && r
    })
    const nodeShape = new Map(
      sh('scontrol', ['show', 'node', '--oneliner', '--all']).stdout.split('\n').filter(Boolean).map((l) => [/NodeName=(\S+)/.exec(l)![1], /AvailableFeatures=\S*shape=([^,\s]+)/.exec(l)?.[1] ?? '?']),
    )
    const ran = rows.filter(([, , elapsed]) => Number(elapsed) > 0)
    expect(ran.length, JSON.stringify(rows)).toBeGreaterThanOrEqual(2)

    // No prices file is made by create (local shapes cost nothing): cost is unknown, not 0.
    const pricesFile = join(work, 'data', 'clusters', NAME, 'prices.yaml')
    expect(existsSync(pricesFile)).toBe(false)
    const unpriced = (await citc(['usage', '-c', NAME, '--since', 'today', '--json'], {env})).json()
    expect([unpriced.currency, unpriced.totals.cost]).toEqual([null, null])

    // The cluster's own prices.yaml, used without --prices.
    const PRICE = 0.37
    writeFileSync(pricesFile, `currency: GBP\nshapes:\n  local.small: ${PRICE}\n  c5.xlarge: 99\n`)
    const price = (shape: string) => (shape === 'local.small' ? PRICE : NaN)
    const perAccount = new Map<string, {nodeHours: number; cost: number}>()
    for (const [, account, elapsed, nnodes, nodeList] of ran) {
      const nodes = sh('scontrol', ['show', 'hostnames', nodeList]).stdout.split('\n').filter(Boolean)
      expect(nodes.length).toBe(Number(nnodes))
      const nodeHours = (Number(elapsed) * Number(nnodes)) / 3600
      const cost = nodes.reduce((sum, n) => sum + (Number(elapsed) / 3600) * price(nodeShape.get(n)!), 0)
      const acc = perAccount.get(account) ?? {nodeHours: 0, cost: 0}
      perAccount.set(account, {nodeHours: acc.nodeHours + nodeHours, cost: acc.cost + cost})
    }
    const total = [...perAccount.values()].reduce((a, b) => ({nodeHours: a.nodeHours + b.nodeHours, cost: a.cost + b.cost}), {nodeHours: 0, cost: 0})

    const doc = (await citc(['usage', '-c', NAME, '--since', 'today', '--by', 'account', '--json'], {env})).json()
    expect(doc.currency).toBe('GBP')
    expect(doc.totals.nodeHours).toBeCloseTo(total.nodeHours, 5)
    expect(doc.totals.cost).toBeCloseTo(total.cost, 5)
    expect(doc.totals.unpricedNodeHours).toBe(0)
    for (const [account, want] of perAccount) {
      const row = doc.rows.find((x: {key: string}) => x.key === account)
      expect(row, account).toBeDefined()
      expect([account, row.nodeHours, row.cost]).toEqual([account, expect.closeTo(want.nodeHours, 5), expect.closeTo(want.cost, 5)])
    }
    // An explicit --prices file still wins over the cluster's own.
    const other = file('other-prices.yaml', 'currency: EUR\nshapes:\n  local.small: 1\n')
    const explicit = (await citc(['usage', '-c', NAME, '--since', 'today', '--prices', other, '--json'], {env})).json()
    expect(explicit.currency).toBe('EUR')
    expect(explicit.totals.cost).toBeCloseTo(total.nodeHours, 5)
  }, 300_000)

  it('destroy takes it all away', async () => {
    const r = await citc(['destroy', NAME, '--yes'], {env, timeoutMs: 300_000})
    expect(r.code, r.stderr).toBe(0)
    expect(existsSync('/etc/citc')).toBe(false)
  }, 300_000)
})
