import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {applyToState} from './apply-state.js'
import type {AccountsPlan} from '../../../src/lib/accounts/ops.js'
import {parseAccounts} from '../../../src/lib/accounts/parse.js'
import {planAccounts, type PlanOptions} from '../../../src/lib/accounts/plan.js'
import {changeArgs, opArgv, planText} from '../../../src/lib/accounts/render.js'
import {parseAccountingState} from '../../../src/lib/accounts/sacctmgr-state.js'
import type {AccountingState} from '../../../src/lib/accounts/types.js'
import {shellQuote} from '../../../src/lib/shell-quote.js'

const lines = (...l: string[]) => l.join('\n') + '\n'
const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')
const file = (text: string) => parseAccounts(text, {file: 'accounts.yaml'})

/** A new cluster's slurmdbd: root and its root user, as sacctmgr prints them. */
const FRESH: AccountingState = parseAccountingState({
  assoc: lines('root||||1||||||normal', 'root|root|||1||||||'),
  account: lines('root|default root account|root'),
  user: lines('root|root'),
})

/** The plan as people read it, then the commands apply runs. */
const rendered = (plan: AccountsPlan, cluster = 'demo') => `${planText(plan)}\n${plan.ops.map((op) => `$ ${shellQuote(['sacctmgr', ...opArgv(op, {cluster})])}`).join('\n')}\n`

/** Plan, apply to a simulated slurmdbd, plan again: the second plan must have nothing to do. */
function converge(text: string, state: AccountingState, opts: PlanOptions = {prune: false}) {
  const desired = file(text)
  const plan = planAccounts(desired, state, opts)
  const after = applyToState(state, plan.ops)
  const again = planAccounts(desired, after, opts)
  expect(again.ops).toEqual([])
  return {plan, after, again}
}

const SMALLEST = lines(
  'accounts:',
  '  physics:',
  '    description: Physics department',
  '    limits: {GrpTRESMins: {cpu: 6000}, MaxJobs: 10}',
  '    users: [alice]',
  '  physics-lab:',
  '    parent: physics',
  '    users: [bob]',
)

describe('planning against a new cluster', () => {
  it("the issue's smallest file: accounts parents first, then users with their default account", async () => {
    const {plan, again} = converge(SMALLEST, FRESH)
    await expect(rendered(plan)).toMatchFileSnapshot('__snapshots__/smallest.plan.txt')
    expect(planText(again)).toBe('no changes\n')
  })

  it('a tree of three levels written leaves first, every limit, explicit and implicit default accounts', async () => {
    const text = lines(
      'accounts:',
      '  lab-a:',
      '    parent: physics',
      '    limits: {GrpTRES: {cpu: 64, node: 4, mem: "256G"}, MaxSubmitJobs: 200, Fairshare: parent}',
      '    users: [carol, alice]',
      '  physics:',
      '    parent: science',
      '    description: Physics department',
      '    organisation: Faculty of Science',
      '    limits:',
      '      GrpTRESMins: {cpu: 600000, gres/gpu: 6000, mem: 600000000}',
      '      MaxJobs: 50',
      '      MaxWall: "48:00:00"',
      '      Fairshare: 10',
      '      QOS: [normal, long]',
      '    users: [alice]',
      '  science:',
      'users:',
      '  alice: {defaultAccount: physics}',
    )
    const {plan, after} = converge(text, FRESH)
    await expect(rendered(plan)).toMatchFileSnapshot('__snapshots__/three-levels.plan.txt')
    expect(after.defaultAccounts).toEqual({alice: 'physics', carol: 'lab-a', root: 'root'})
    expect(after.accounts.find((a) => a.name === 'lab-a')?.parent).toBe('physics')
  })

  it('a file that matches the cluster gives an empty plan', () => {
    const {after} = converge(SMALLEST, FRESH)
    expect(planAccounts(file(SMALLEST), after, {prune: true})).toEqual({ops: [], refused: []})
  })
})

describe('planning changes', () => {
  const start = converge(SMALLEST, FRESH).after

  it('changes, clears and moves: limits, description, parent, users', async () => {
    const text = lines(
      'accounts:',
      '  physics:',
      '    description: Department of Physics',
      '    limits: {GrpTRESMins: {cpu: 7000, mem: 1024}, MaxWall: 90}',
      '    users: [alice, dave]',
      '  physics-lab:',
      '    parent: biology',
      '    limits: {QOS: [normal]}',
      '    users: [bob, alice]',
      '  biology:',
      '    users: [bob]',
    )
    const {plan, after} = converge(text, start)
    await expect(rendered(plan)).toMatchFileSnapshot('__snapshots__/changes.plan.txt')
    // Without prune nothing is removed and bob keeps the default he has.
    expect(plan.ops.filter((o) => o.op.startsWith('remove'))).toEqual([])
    expect(after.defaultAccounts.bob).toBe('physics-lab')
  })

  it('compares descriptions as slurmdbd keeps them (lower case)', () => {
    const text = SMALLEST.replace('Physics department', 'PHYSICS Department')
    expect(planAccounts(file(text), start, {prune: false}).ops).toEqual([])
  })

  it('a limit removed from the file is cleared with -1, Fairshare goes back to 1, QOS to inherited', () => {
    const withAll = lines('accounts:', '  a: {limits: {GrpTRES: {cpu: 4, mem: 100}, MaxJobs: 1, MaxSubmitJobs: 2, MaxWall: 60, Fairshare: 5, QOS: [normal]}}')
    const state = converge(withAll, FRESH).after
    const {plan} = converge(lines('accounts:', '  a: {limits: {GrpTRES: {cpu: 4}}}'), state)
    expect(plan.ops.map((op) => opArgv(op))).toEqual([
      ['-i', 'modify', 'account', 'where', 'name=a', 'set', 'GrpTRES=mem=-1', 'MaxJobs=-1', 'MaxSubmitJobs=-1', 'MaxWall=-1', 'Fairshare=1', 'QOS='],
    ])
  })

  it('a move that reverses two accounts never makes a cycle on the way', () => {
    const state = converge(lines('accounts:', '  a:', '  b: {parent: a}'), FRESH).after
    const {plan} = converge(lines('accounts:', '  a: {parent: b}', '  b:'), state)
    expect(plan.ops).toEqual([
      {op: 'moveAccount', account: 'b', from: 'a', to: 'root'},
      {op: 'moveAccount', account: 'a', from: 'root', to: 'b'},
    ])
  })
})

describe('account records slurmdbd keeps (another cluster, or deleted before)', () => {
  // On 22.05 `add account` keeps an existing record's description and organisation: the plan changes
  // them after adding, so that one run converges.
  const state = parseAccountingState({
    assoc: lines('root||||1||||||normal', 'root|root|||1||||||'),
    account: lines('physics|old text|somewhere', 'root|default root account|root'),
    user: lines('root|root'),
  })

  it('adds the association, then sets the text the file gives', () => {
    const {plan, after} = converge(SMALLEST, state)
    expect(plan.ops.slice(0, 3)).toEqual([
      {op: 'addAccount', account: 'physics', parent: 'root', description: 'Physics department', limits: [{field: 'GrpTRESMins', tres: 'cpu', to: '6000'}, {field: 'MaxJobs', to: '10'}]},
      {op: 'addAccount', account: 'physics-lab', parent: 'physics', limits: []},
      {op: 'modifyAccount', account: 'physics', changes: [{field: 'Description', from: 'old text', to: 'Physics department'}]},
    ])
    // Organisation is not in the file: the record's stays.
    expect(after.accounts.find((a) => a.name === 'physics')).toMatchObject({description: 'physics department', organisation: 'somewhere'})
  })

  it('a removed account keeps its record', () => {
    const start = converge(SMALLEST, FRESH).after
    const {after} = converge(lines('accounts:', '  physics:', '    description: Physics department', '    limits: {GrpTRESMins: {cpu: 6000}, MaxJobs: 10}', '    users: [alice]'), start, {prune: true})
    expect(after.accounts.map((a) => a.name)).toEqual(['physics', 'root'])
    expect(after.accountTexts['physics-lab']).toEqual({description: 'physics-lab', organisation: 'physics'})
    expect(after.defaultAccounts).toEqual({alice: 'physics', root: 'root'})
  })
})

describe('prune', () => {
  // physics and physics-lab from the file; old (with old-sub under it), busy (a running job), the
  // cluster's default account "citc", and "bad name" that another tool made.
  const state = parseAccountingState({
    assoc: lines(
      'root||||1||||||normal',
      'root|root|||1||||||',
      'bad name|||root|1||||||',
      'busy|||root|1||||||',
      'busy|erin|||1||||||',
      'citc|||root|1||||||',
      'citc|alice|||1||||||',
      'citc|frank|||1||||||',
      'old|||root|1||||||',
      'old|frank|||1||||||',
      'old-sub|||old|1||||||',
      'old-sub|gina|||1||||||',
      'physics|||root|1|cpu=6000||10|||',
      'physics|alice|||1||||||',
      'physics|henry|||1||||||',
      'physics|ivan|||1||||||',
      'physics-lab|||physics|1||||||',
      'physics-lab|bob|||1||||||',
    ),
    account: lines('bad name|bad name|bad name', 'busy|busy|busy', 'citc|citc|citc', 'old|old|old', 'old-sub|old-sub|old', 'physics|physics department|physics', 'physics-lab|physics-lab|physics', 'root|default root account|root'),
    user: lines('alice|physics', 'bob|physics-lab', 'erin|busy', 'frank|old', 'gina|old-sub', 'henry|physics', 'ivan|physics', 'root|root'),
  })
  const opts: PlanOptions = {prune: true, clusterDefaultAccount: 'citc', runningJobs: [{account: 'busy', user: 'erin'}, {account: 'physics', user: 'ivan'}]}

  it('removes users then accounts children first, and refuses what it must keep', async () => {
    const {plan, after, again} = converge(SMALLEST, state, opts)
    await expect(rendered(plan)).toMatchFileSnapshot('__snapshots__/prune.plan.txt')
    expect(after.accounts.map((a) => a.name)).toEqual(['bad name', 'busy', 'citc', 'physics', 'physics-lab', 'root'])
    // frank lost old, his default: citc is what he has left.
    expect(after.defaultAccounts.frank).toBe('citc')
    // What was refused stays refused, and nothing else is left to do.
    expect(again.refused).toEqual(plan.refused)
  })

  it('without prune, removes nothing and refuses nothing', () => {
    const plan = planAccounts(file(SMALLEST), state, {...opts, prune: false})
    expect(plan.refused).toEqual([])
    expect(plan.ops.filter((o) => o.op.startsWith('remove'))).toEqual([])
  })

  it('keeps a parent whose sub-account has running jobs, and says why', () => {
    const plan = planAccounts(file(SMALLEST), state, {...opts, runningJobs: [{account: 'old-sub', user: 'gina'}]})
    expect(plan.refused).toEqual([
      {kind: 'account', account: 'old-sub', reason: 'it has running jobs (gina)'},
      {kind: 'account', account: 'bad name', reason: 'its name is not safe to pass to sacctmgr; remove it by hand if it must go'},
      {kind: 'account', account: 'old', reason: 'its sub-account old-sub stays'},
    ])
    expect(plan.ops.filter((o) => o.op === 'removeAccount')).toEqual([{op: 'removeAccount', account: 'busy'}])
  })

  it('never removes root or the cluster default account, even from an empty-looking file', () => {
    const plan = planAccounts(file(lines('accounts:', '  only:')), state, {prune: true, clusterDefaultAccount: 'citc'})
    const removed = plan.ops.filter((o) => o.op === 'removeAccount').map((o) => (o as {account: string}).account)
    expect(removed).not.toContain('root')
    expect(removed).not.toContain('citc')
    expect(plan.ops.some((o) => o.op === 'removeUser' && (o.account === 'citc' || o.account === 'root'))).toBe(false)
  })

  it('changes a default account before removing the association it names', () => {
    const plan = planAccounts(file(lines('accounts:', '  physics-lab: {parent: root, users: [bob, alice]}')), state, {prune: true, clusterDefaultAccount: 'citc'})
    const i = plan.ops.findIndex((o) => o.op === 'setDefaultAccount' && o.user === 'alice')
    const j = plan.ops.findIndex((o) => o.op === 'removeUser' && o.user === 'alice' && o.account === 'physics')
    expect(plan.ops[i]).toEqual({op: 'setDefaultAccount', user: 'alice', from: 'physics', to: 'physics-lab'})
    expect(i).toBeGreaterThanOrEqual(0)
    expect(j).toBeGreaterThan(i)
  })
})

describe('contract: the simulation matches what slurmdbd 22.05 did', () => {
  // fixtures/roundtrip-*: sacctmgr's output before and after running this plan's argv against a real
  // slurmdbd 22.05.8 (prune, cluster default "chem", a running job in q1).
  it('applyToState(before, plan) reads the same as sacctmgr after the plan ran', () => {
    const read = (when: string) =>
      parseAccountingState({assoc: fixture(`roundtrip-${when}-assoc.txt`), account: fixture(`roundtrip-${when}-account.txt`), user: fixture(`roundtrip-${when}-user.txt`)})
    const desired = parseAccounts(fixture('roundtrip.accounts.yaml'), {file: 'accounts.yaml'})
    const opts: PlanOptions = {prune: true, clusterDefaultAccount: 'chem', runningJobs: [{account: 'q1', user: 'bob'}]}
    const plan = planAccounts(desired, read('before'), opts)
    expect(plan.ops.length).toBeGreaterThan(5)
    expect(applyToState(read('before'), plan.ops)).toEqual(read('after'))
    expect(planAccounts(desired, read('after'), opts).ops).toEqual([])
  })
})

describe('rendering', () => {
  it('groups TRES changes per field, clears with -1 (QOS with nothing)', () => {
    expect(
      changeArgs([
        {field: 'GrpTRESMins', tres: 'mem', from: '1'},
        {field: 'GrpTRESMins', tres: 'cpu', to: '7000'},
        {field: 'MaxJobs', from: '5', to: '10'},
        {field: 'QOS', from: 'normal'},
        {field: 'Description', from: 'x', to: 'Physics department'},
      ]),
    ).toEqual(['GrpTRESMins=cpu=7000,mem=-1', 'MaxJobs=10', 'QOS=', 'Description=Physics department'])
  })

  it('names the cluster in every command when given, never otherwise', () => {
    const ops = planAccounts(file(SMALLEST), FRESH, {prune: false}).ops
    for (const op of ops) expect(opArgv(op).some((a) => /^cluster=/i.test(a))).toBe(false)
    for (const op of ops) expect(opArgv(op, {cluster: 'demo'}).some((a) => /^cluster=demo$/i.test(a))).toBe(true)
  })
})
