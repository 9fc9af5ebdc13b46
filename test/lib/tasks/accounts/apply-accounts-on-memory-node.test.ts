// `citc accounts apply` against a management node in memory (test/doubles/memory-transport.ts) whose
// sacctmgr is a slurmdbd in memory (test/doubles/memory-slurmdbd.ts): the whole command — registry,
// lock, plan, load, verify — with faults slurmdbd can have. What is checked: that the verify step
// fails when slurmdbd does not hold what sacctmgr accepted (a user dropped from a load, a modify not
// kept), naming what did not take and what did; that a re-run does only what is left; and that a
// load with a bad line changes nothing and says which line. The same command against a real
// slurmdbd is test/e2e/accounting.test.ts.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {AccountOp} from '../../../../src/lib/accounts/ops.js'
import {AccountsStore, loadFailure} from '../../../../src/lib/accounts/slurmdbd.js'
import type {AccountingState} from '../../../../src/lib/accounts/types.js'
import {clusterRegistry} from '../../../../src/lib/cluster/registry.js'
import {CitcError} from '../../../../src/lib/errors.js'
import type {Io} from '../../../../src/lib/io.js'
import {type AccountsApplyInput, runAccountsApply} from '../../../../src/lib/tasks/accounts/apply-accounts.js'
import {MEMORY_CLUSTER, MEMORY_LDAP} from '../../../doubles/memory-node.js'
import {MemorySlurmdbd} from '../../../doubles/memory-slurmdbd.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const CONF = MEMORY_CLUSTER.confPath
const person = (uid: string, n: number) =>
  `dn: uid=${uid},${MEMORY_LDAP.peopleDn}\nobjectClass: inetOrgPerson\nobjectClass: posixAccount\nuid: ${uid}\nuidNumber: ${n}\ngidNumber: 100\ncn: ${uid} Test\nsn: Test\nhomeDirectory: /mnt/shared/home/${uid}\n`

/** What slurmdbd holds at first: root, the cluster's own account "mem" with alice and bob. */
const START: AccountingState = {
  accounts: [
    {name: 'mem', parent: 'root', description: 'mem', organisation: 'mem', limits: {fairshare: 1}, users: ['alice', 'bob']},
    {name: 'root', parent: '', description: 'default root account', organisation: 'root', limits: {fairshare: 1}, users: ['root']},
  ],
  defaultAccounts: {alice: 'mem', bob: 'mem', root: 'root'},
  accountTexts: {mem: {description: 'mem', organisation: 'mem'}, root: {description: 'default root account', organisation: 'root'}},
}

/** A management node: citc's files, a slurm.conf that enforces limits, a directory of alice and bob, and `db` behind sacctmgr. */
function managementNode(db: MemorySlurmdbd): MemoryTransport {
  const t = new MemoryTransport({
    files: {
      '/etc/citc/cluster.json': JSON.stringify(MEMORY_CLUSTER),
      '/etc/citc/ldap.json': JSON.stringify(MEMORY_LDAP),
      [CONF]: 'ClusterName=mem\nAccountingStorageEnforce=associations,limits,qos\nPriorityType=priority/multifactor\n',
    },
    dirs: ['/tmp'],
  }).on(['ldapsearch'], {stdout: `${person('alice', 10001)}\n${person('bob', 10002)}`})
  return db.attach(t)
}

const io = (lines: string[] = []): Io => ({log: (m) => lines.push(m), note: () => undefined, json: false, interactive: false, yes: true, renderer: 'silent'})

let work: string
let dataDir: string
const savedDataDir = process.env.CITC_DATA_DIR

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'citc-accounts-apply-'))
  dataDir = join(work, 'data')
  process.env.CITC_DATA_DIR = dataDir
  clusterRegistry(dataDir).create({name: 'mem', provider: 'local', createdAt: new Date().toISOString(), origin: 'created', mgmt: {host: 'localhost', user: 'root'}})
})
afterEach(() => rmSync(work, {recursive: true, force: true}))
afterAll(() => {
  if (savedDataDir === undefined) delete process.env.CITC_DATA_DIR
  else process.env.CITC_DATA_DIR = savedDataDir
})

/** Apply `text` as accounts.yaml on `node`; the result, or the error it ends with. */
async function apply(node: MemoryTransport, text: string): Promise<{ok: true; lines: string[]} | {ok: false; error: CitcError}> {
  const file = join(work, 'accounts.yaml')
  writeFileSync(file, text)
  const input: AccountsApplyInput = {cluster: 'mem', file, prune: false, dryRun: false, wait: false}
  const lines: string[] = []
  try {
    await runAccountsApply(io(lines), input, dataDir, {node: async () => node})
    return {ok: true, lines}
  } catch (error) {
    if (!(error instanceof CitcError)) throw error
    return {ok: false, error}
  }
}

const PHYSICS = 'accounts:\n  physics:\n    description: Physics department\n    limits: {MaxJobs: 10}\n    users: [alice, bob]\n'
const members = (db: MemorySlurmdbd, account: string) => db.state.accounts.find((a) => a.name === account)?.users

describe('accounts apply verifies what slurmdbd holds after the apply', () => {
  it('fails when a load drops a user sacctmgr accepted: exit 4 naming what did not take and what stays; a re-run adds only that', async () => {
    const db = new MemorySlurmdbd(START, {tres: ['cpu', 'mem', 'node'], qos: ['normal']})
    db.ignore = (op) => op.op === 'addUser' && op.user === 'bob'
    const node = managementNode(db)

    const r = await apply(node, PHYSICS)
    if (r.ok) throw new Error('the apply passed although slurmdbd did not keep bob in physics')
    expect(r.error.exitCode).toBe(4)
    expect(r.error.message).toContain('accounts.yaml declares after the apply: sacctmgr accepted every change, and 1 did not take:\n  + user bob to physics\n')
    expect(r.error.message).toContain('2 of the 3 planned changes took and stay (nothing is undone)')
    expect(r.error.hint).toMatch(/run the same command again: .*does only what is left/)
    // What it leaves: the account and alice, as the message says.
    expect(members(db, 'physics')).toEqual(['alice'])
    expect(db.kept.map((op) => op.op)).toEqual(['addAccount', 'addUser'])

    db.ignore = () => false
    const again = await apply(node, PHYSICS)
    expect(again.ok).toBe(true)
    expect(db.kept.slice(2)).toEqual([{op: 'addUser', user: 'bob', account: 'physics'}])
    expect(members(db, 'physics')).toEqual(['alice', 'bob'])
  })

  it('fails when a limit sacctmgr modified (exit 0) is not what slurmdbd holds', async () => {
    const db = new MemorySlurmdbd(START, {tres: ['cpu', 'mem', 'node'], qos: ['normal']})
    const node = managementNode(db)
    expect((await apply(node, PHYSICS)).ok).toBe(true)

    db.ignore = (op) => op.op === 'modifyAccount'
    const r = await apply(node, PHYSICS.replace('MaxJobs: 10', 'MaxJobs: 20'))
    if (r.ok) throw new Error('the apply passed although slurmdbd kept MaxJobs 10')
    expect(r.error.exitCode).toBe(4)
    expect(r.error.message).toContain('1 did not take:\n  ~ physics MaxJobs 10 → 20\n')
    expect(r.error.message).toContain('0 of the 1 planned change took and stay (nothing is undone)')
    expect(db.state.accounts.find((a) => a.name === 'physics')?.limits.maxJobs).toBe(10)
  })

  it('passes when slurmdbd holds what was planned, and a re-run plans nothing', async () => {
    const db = new MemorySlurmdbd(START, {tres: ['cpu', 'mem', 'node'], qos: ['normal']})
    const node = managementNode(db)
    // A "#" and a backslash: sacctmgr's load file reads them as a comment and an escape unless escaped.
    const text = PHYSICS.replace('Physics department', "'Room #2, C:\\share'")
    const r = await apply(node, text)
    expect(r.ok).toBe(true)
    expect(db.state.accountTexts.physics.description).toBe('room #2, c:\\share')
    const again = await apply(node, text)
    expect(again.ok && again.lines.join('\n')).toBe('no changes')
  })
})

describe('AccountsStore.apply: a load that fails', () => {
  it('an account removed since the plan: the load stops at its Parent line before anything is read, and adds nothing', async () => {
    const withDoomed: AccountingState = {
      ...START,
      accounts: [...START.accounts, {name: 'doomed', parent: 'root', description: 'doomed', organisation: 'doomed', limits: {fairshare: 1}, users: []}],
    }
    const db = new MemorySlurmdbd(withDoomed, {tres: ['cpu'], qos: ['normal']})
    const store = await AccountsStore.open(managementNode(db), CONF)
    const ops: AccountOp[] = [
      {op: 'addAccount', account: 'lab-three', parent: 'root', limits: []},
      {op: 'addUser', user: 'bob', account: 'lab-three'},
      {op: 'addUser', user: 'alice', account: 'doomed'},
    ]
    db.state = START // someone removed doomed
    await expect(store.apply(ops, () => undefined)).rejects.toThrow(
      /sacctmgr load failed on the memory node \(exit 1\); nothing of it was added; at "Parent - 'doomed'": account doomed is not in slurmdbd \(removed since the plan was made\?\)/,
    )
    expect(db.state).toEqual(START)
  })

  it('a failure after lines were read says that what was added stays', () => {
    const text = "Cluster - 'mem'\nParent - 'root'\nParent - 'root'\nAccount - 'a'\nParent - 'b'\nUser - 'alice'\n"
    const late = loadFailure(text, {exitCode: 1, stdout: '', stderr: ' line(5) You need to add this parent (b) as a child before you can add children to it.\n'}, 'node')
    expect(late.message).toMatch(/^sacctmgr load failed on node \(exit 1\) at "Parent - 'b'": account b is not in slurmdbd .*; what it added before that stays\n/)
    const refused = loadFailure(text, {exitCode: 1, stdout: '', stderr: ' Problem with requests: Unspecified error\n'}, 'node')
    expect(refused.message).toMatch(/^sacctmgr load failed on node \(exit 1\); what it added before that stays\nProblem with requests/)
    const unread = loadFailure(text, {exitCode: 1, stdout: '', stderr: ' Unknown option: MaxJobs=x\n Problem with line(4)\n'}, 'node')
    expect(unread.message).toMatch(/nothing of it was added; at "Account - 'a'"/)
    expect(unread.hint).toMatch(/run `citc accounts apply` again/)
  })

  it('changes nothing, names the file’s line, and removes its temporary file', async () => {
    const db = new MemorySlurmdbd(START, {tres: ['cpu', 'mem', 'node'], qos: ['normal']})
    const node = managementNode(db)
    const store = await AccountsStore.open(node, CONF)
    const ops: AccountOp[] = [
      {op: 'addAccount', account: 'lab-one', parent: 'root', description: 'First lab', limits: []},
      {op: 'addUser', user: 'alice', account: 'lab-one'},
      {op: 'addAccount', account: 'lab-two', parent: 'root', limits: [{field: 'QOS', to: 'gone'}]},
    ]
    await expect(store.apply(ops, () => undefined)).rejects.toThrow(/sacctmgr load failed on the memory node \(exit 1\); nothing of it was added; at "Account - 'lab-two':QOS='gone'"/)
    expect(db.state).toEqual(START)
    expect(node.paths().filter((p) => p.startsWith('/tmp/'))).toEqual([])
  })
})
