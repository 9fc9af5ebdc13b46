// What `citc accounts` reads from slurmctld (scontrol show assoc_mgr, captured on a citc cluster with
// slurmctld 22.05.8 after an account's 1 CPU-minute budget was used up) and the report built from it.
import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {parseAssocMgr} from '../../../src/lib/accounts/assoc-usage.js'
import {accountsDocument, accountsDocumentSchema, accountsTree, isLimitReason} from '../../../src/lib/accounts/report.js'
import {AccountsStore, batchArgv, batches, loadText, NAMES_PER_CALL} from '../../../src/lib/accounts/slurmdbd.js'
import {MemoryTransport} from '../../doubles/memory-transport.js'
import {configLine, readLoadFile} from '../../doubles/sacctmgr-load-file.js'
import type {AccountOp} from '../../../src/lib/accounts/ops.js'
import type {AccountingState} from '../../../src/lib/accounts/types.js'

const fixture = readFileSync(new URL('fixtures/assoc-mgr.txt', import.meta.url), 'utf8')

describe('parseAssocMgr', () => {
  const all = parseAssocMgr(fixture)

  it('reads every association, account and user', () => {
    expect(all.length).toBe(fixture.split('\n').filter((l) => l.startsWith('ClusterName=')).length)
    expect(all.filter((a) => a.user === '').map((a) => a.account)).toEqual(['root', 'chemistry', 'phys', 'physics', 'physics-lab', 'swift-ferret'])
    expect(all.find((a) => a.account === 'phys' && a.user === 'alice')).toBeDefined()
  })

  it('reads LIMIT(USED) per TRES, N as no limit', () => {
    const phys = all.find((a) => a.account === 'phys' && a.user === '')!
    expect(phys.grpTRESMins.cpu).toEqual({limit: 1, used: 1})
    expect(phys.grpTRESMins.mem).toEqual({limit: null, used: 725})
    expect(phys.grpTRESMins['gres/gpu']).toEqual({limit: null, used: 0})
    const physics = all.find((a) => a.account === 'physics' && a.user === '')!
    expect(physics.grpTRESMins.cpu).toEqual({limit: 600000, used: 0})
    expect(physics.grpTRESMins['gres/gpu']).toEqual({limit: 6000, used: 0})
  })

  it('reads MaxJobs and MaxSubmitJobs where set, and leaves them out where empty', () => {
    const lab = all.find((a) => a.account === 'physics-lab' && a.user === 'alice')!
    expect(lab.maxJobs).toEqual({limit: 50, used: 0})
    expect(lab.maxSubmitJobs).toEqual({limit: 200, used: 0})
    expect(all.find((a) => a.account === 'root' && a.user === '')!.maxJobs).toBeUndefined()
  })

  it('refuses a TRES it cannot read, naming the line', () => {
    expect(() => parseAssocMgr('ClusterName=c Account=a UserName= Partition= ID=3\n    GrpTRESMins=cpu=lots\n')).toThrow(/cannot read scontrol's assoc_mgr output .*cpu=lots/)
  })
})

const state: AccountingState = {
  accounts: [
    {name: 'phys', parent: 'root', description: 'phys', organisation: 'root', limits: {grpTRESMins: {cpu: 1}}, users: ['alice']},
    {name: 'physics', parent: 'root', description: 'physics department', organisation: 'faculty of science', limits: {grpTRESMins: {cpu: 600000, 'gres/gpu': 6000}, maxJobs: 50, maxWall: 2880, fairshare: 10}, users: ['alice']},
    {name: 'physics-lab', parent: 'physics', description: 'physics-lab', organisation: 'physics', limits: {grpTRES: {cpu: 64, node: 4}, maxSubmitJobs: 200, fairshare: 'parent'}, users: ['alice', 'bob']},
    {name: 'root', parent: '', description: 'default root account', organisation: 'root', limits: {}, users: ['root']},
  ],
  defaultAccounts: {alice: 'physics-lab', bob: 'physics-lab', root: 'root'},
  accountTexts: {},
}
const jobs = [
  {id: '5', account: 'phys', user: 'alice', state: 'PENDING', reason: 'AssocGrpCPUMinutesLimit'},
  {id: '6', account: 'phys', user: 'alice', state: 'PENDING', reason: 'Priority'},
  {id: '7', account: 'physics-lab', user: 'bob', state: 'RUNNING', reason: 'None'},
]

describe('the accounts report', () => {
  const doc = accountsDocument(state, parseAssocMgr(fixture), jobs, {cluster: 'swift-ferret', now: new Date('2026-11-25T14:30:00.123Z')})

  it('is a valid version 1 document, parents before children', () => {
    expect(accountsDocumentSchema.parse(doc)).toEqual(doc)
    expect(doc.generatedAt).toBe('2026-11-25T14:30:00Z')
    expect(doc.accounts.map((a) => a.name)).toEqual(['root', 'phys', 'physics', 'physics-lab'])
    expect(doc.accounts[0].parent).toBeNull()
  })

  it('shows a used-up budget as exhausted, with the jobs it holds and their reason', () => {
    const phys = doc.accounts.find((a) => a.name === 'phys')!
    expect(phys.used.GrpTRESMins.cpu).toEqual({limit: 1, used: 1})
    expect(phys.exhausted).toEqual(['GrpTRESMins cpu'])
    expect(phys.jobs).toEqual({running: 0, pending: 2})
    // A job waiting for its priority is not held by a limit.
    expect(phys.waiting).toEqual([{jobId: '5', user: 'alice', reason: 'AssocGrpCPUMinutesLimit'}])
    expect(doc.accounts.find((a) => a.name === 'physics')!.exhausted).toEqual([])
  })

  it('gives limits in accounts.yaml’s words, and which account is each user’s default', () => {
    const physics = doc.accounts.find((a) => a.name === 'physics')!
    expect(physics.limits).toEqual({GrpTRESMins: {cpu: 600000, 'gres/gpu': 6000}, MaxJobs: 50, MaxWall: '2-00:00:00', Fairshare: 10})
    expect(physics.users).toEqual([{name: 'alice', default: false}])
    expect(doc.accounts.find((a) => a.name === 'physics-lab')!.users).toEqual([{name: 'alice', default: true}, {name: 'bob', default: true}])
  })

  it('draws the tree with the limit reached and the waiting job', () => {
    const text = accountsTree(doc)
    expect(text).toContain('  phys  [LIMIT REACHED: GrpTRESMins cpu]')
    expect(text).toContain('GrpTRESMins cpu 1 min used of 1 min (100 %)')
    expect(text).toContain('job 5 (alice) waits: AssocGrpCPUMinutesLimit')
    expect(text).toMatch(/^ {4}physics-lab$/m)
    expect(text).toContain('users: alice*, bob*')
  })

  it('knows Slurm’s limit reasons from the others', () => {
    expect(['AssocGrpCPUMinutesLimit', 'AssocMaxJobsLimit', 'QOSMaxJobsPerUserLimit', 'AssocGrpGRESMinutes'].map(isLimitReason)).toEqual([true, true, true, false])
    expect(['Priority', 'Resources', 'None'].some(isLimitReason)).toBe(false)
  })
})

describe('batches of sacctmgr calls', () => {
  const add = (user: string, account: string, defaultAccount?: string): AccountOp => ({op: 'addUser', user, account, ...(defaultAccount ? {defaultAccount} : {})})

  it('puts every run of added accounts and users in one load, users removed from one account in one call, the rest alone', () => {
    const ops: AccountOp[] = [
      {op: 'addAccount', account: 'a', parent: 'root', limits: []},
      add('u1', 'a', 'a'),
      add('u2', 'b'),
      {op: 'setDefaultAccount', user: 'u2', from: 'c', to: 'b'},
      {op: 'removeUser', user: 'u5', account: 'c'},
      {op: 'removeUser', user: 'u6', account: 'c'},
      {op: 'removeUser', user: 'u7', account: 'd'},
      {op: 'removeAccount', account: 'c'},
    ]
    const b = batches(ops)
    expect(b.map((x) => x.length)).toEqual([3, 1, 2, 1, 1])
    expect(b.flat()).toEqual(ops)
    expect(batchArgv(b[2], 'clu')).toEqual(['-i', 'delete', 'user', 'where', 'name=u5,u6', 'account=c', 'cluster=clu'])
    expect(batchArgv(b[1], 'clu')).toEqual(['-i', 'modify', 'user', 'where', 'name=u2', 'cluster=clu', 'set', 'DefaultAccount=b'])
  })

  it('keeps each removal call to NAMES_PER_CALL names', () => {
    const ops: AccountOp[] = Array.from({length: NAMES_PER_CALL * 2 + 1}, (_, i) => ({op: 'removeUser', user: `u${i}`, account: 'a'}))
    expect(batches(ops).map((x) => x.length)).toEqual([NAMES_PER_CALL, NAMES_PER_CALL, 1])
  })

  it('writes the load file as sacctmgr dump does: Parent lines, accounts with their limits in load’s words, users with a default only when new', () => {
    const ops: AccountOp[] = [
      {
        op: 'addAccount',
        account: 'physics',
        parent: 'root',
        description: 'Physics: the department',
        organisation: 'Science',
        limits: [
          {field: 'GrpTRESMins', tres: 'cpu', to: '6000'},
          {field: 'GrpTRESMins', tres: 'gres/gpu', to: '60'},
          {field: 'MaxJobs', to: '10'},
          {field: 'MaxWall', to: '2-00:00:00'},
          {field: 'Fairshare', to: '10'},
          {field: 'QOS', to: 'high,normal'},
        ],
      },
      {op: 'addAccount', account: 'lab', parent: 'physics', limits: [{field: 'GrpTRES', tres: 'node', to: '4'}, {field: 'Fairshare', to: 'parent'}]},
      {op: 'addAccount', account: 'chem', parent: 'root', limits: []},
      add('alice', 'physics', 'physics'),
      add('bob', 'physics'),
      add('carol', 'lab'),
    ]
    expect(loadText(ops, 'clu')).toBe(
      [
        "Cluster - 'clu'",
        // The parents slurmdbd must have, first: one gone stops the load before anything is read.
        "Parent - 'root'",
        "Parent - 'root'",
        "Account - 'physics':Description='Physics: the department':Organization='Science':GrpTRESMins=cpu=6000,gres/gpu=60:MaxJobs=10:MaxWallDurationPerJob=2880:Fairshare=10:QOS='high,normal'",
        "Parent - 'physics'",
        "Account - 'lab':GrpTRES=node=4:Fairshare=parent",
        "Parent - 'root'",
        "Account - 'chem'",
        "Parent - 'physics'",
        "User - 'alice':DefaultAccount='physics'",
        "User - 'bob'",
        "Parent - 'lab'",
        "User - 'carol'",
        '',
      ].join('\n'),
    )
    expect(() => loadText([{op: 'removeAccount', account: 'x'}], 'clu')).toThrow(/not an operation sacctmgr load does/)
  })

  it('escapes "#" and backslashes in free text, which sacctmgr reads back as written', () => {
    // Unescaped, sacctmgr reads "#2…" as a comment (leaving the quote open: nothing is loaded) and drops the backslash.
    const texts = ['Room #2, C:\\share', 'a\\#b', 'ends with \\', '##', 'plain: text']
    const ops: AccountOp[] = texts.map((t, i) => ({op: 'addAccount', account: `a${i}`, parent: 'root', description: t, organisation: t, limits: []}))
    const text = loadText(ops, 'clu')
    expect(text.split('\n')[3]).toBe("Account - 'a0':Description='Room \\#2, C:\\\\share':Organization='Room \\#2, C:\\\\share'")
    const read = readLoadFile(text).filter((l) => l.object === 'Account')
    expect(read.map((l) => [l.options.Description, l.options.Organization])).toEqual(texts.map((t) => [t.toLowerCase(), t.toLowerCase()]))
    // What an unescaped line does there: the comment leaves the quote open, and sacctmgr stops.
    expect(() => readLoadFile("Account - 'a':Description='Room #2'\n")).toThrow(/problem with option .* with quotes/)
    expect(configLine("Description='C:\\share'")).toBe("Description='C:share'")
  })
})

describe('AccountsStore.open reads slurm.conf', () => {
  const open = (conf: string) => AccountsStore.open(new MemoryTransport({files: {'/etc/slurm/slurm.conf': conf}}), '/etc/slurm/slurm.conf')

  it('takes ClusterName (lower-cased, as slurmdbd keeps it) and says nothing is missing on a citc slurm.conf', async () => {
    const store = await open('ClusterName=Prod\nAccountingStorageEnforce=associations,limits,qos\nPriorityType=priority/multifactor\n')
    expect(store.cluster).toBe('prod')
    expect(store.enforcementGaps()).toEqual([])
  })

  it('names what an older slurm.conf lacks for limits to hold', async () => {
    const store = await open('# old\nClusterName=old\nAccountingStorageEnforce=associations\n')
    expect(store.enforcementGaps()).toEqual(['AccountingStorageEnforce=associations,limits,qos', 'PriorityType=priority/multifactor (GrpTRESMins is counted by it alone)'])
  })

  it('refuses a slurm.conf without ClusterName, or none at all', async () => {
    await expect(open('SlurmUser=slurm\n')).rejects.toThrow(/has no ClusterName/)
    await expect(AccountsStore.open(new MemoryTransport(), '/etc/slurm/slurm.conf')).rejects.toThrow(/does not exist/)
  })
})
