import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {parseAccountingState, stateQueries} from '../../../src/lib/accounts/sacctmgr-state.js'
import {CitcError} from '../../../src/lib/errors.js'

const fixture = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')

describe('the sacctmgr queries', () => {
  it('ask for own limits (WOPLimits), parsable, for one cluster', () => {
    expect(stateQueries('probe')).toEqual({
      assoc: ['--parsable2', '--noheader', 'show', 'assoc', 'where', 'cluster=probe', 'format=Account,User,Partition,ParentName,Fairshare,GrpTRESMins,GrpTRES,MaxJobs,MaxSubmitJobs,MaxWall,QOS', 'WOPLimits'],
      account: ['--parsable2', '--noheader', 'show', 'account', 'format=Account,Descr,Org'],
      user: ['--parsable2', '--noheader', 'show', 'user', 'where', 'cluster=probe', 'format=User,DefaultAccount'],
    })
    expect(stateQueries().assoc).not.toContain('where')
  })

  it('refuse a cluster name that would be read as syntax', () => {
    expect(() => stateQueries('a b')).toThrow(/not a Slurm cluster name/)
    expect(() => stateQueries('a,b')).toThrow(/not a Slurm cluster name/)
  })
})

describe('parseAccountingState on what slurmdbd 22.05 printed', () => {
  // Made by hand with sacctmgr against a real slurmdbd 22.05.8 + MariaDB (see fixtures/): accounts with
  // inherited and own limits, Fairshare=parent and 0, QOS lists, a partition-specific user association,
  // a user whose default association was deleted, and accounts named "a" and "b" that `sacctmgr add
  // account a,b` made, next to one named "bad name".
  const state = parseAccountingState({assoc: fixture('slurm-22.05-assoc.txt'), account: fixture('slurm-22.05-account.txt'), user: fixture('slurm-22.05-user.txt')})

  it('reads every account with its own limits, description and organisation, sorted by name', () => {
    expect(state.accounts.map((a) => a.name)).toEqual(['a', 'b', 'bad name', 'chem', 'physics', 'physics-lab', 'q1', 'root', 'withdesc'])
    const by = Object.fromEntries(state.accounts.map((a) => [a.name, a]))
    expect(by.root).toEqual({name: 'root', parent: '', description: 'default root account', organisation: 'root', limits: {fairshare: 1, qos: ['normal']}, users: ['root']})
    expect(by.chem).toEqual({
      name: 'chem',
      parent: 'root',
      description: 'x',
      organisation: 'chem',
      limits: {grpTRESMins: {energy: 5, mem: 1024}, grpTRES: {cpu: 1, mem: 2048000}, maxWall: 144000, fairshare: 0},
      users: ['bob'],
    })
    expect(by.physics.limits).toEqual({grpTRESMins: {billing: 7, cpu: 7000, node: 50}, fairshare: 1})
    expect(by['physics-lab']).toMatchObject({parent: 'physics', organisation: 'physics', limits: {grpTRES: {cpu: 64, node: 4}, maxSubmitJobs: 20, maxWall: 2880, fairshare: 'parent'}})
    expect(by.q1.limits.qos).toEqual(['long', 'normal'])
    expect(by.withdesc).toMatchObject({description: 'mixed', organisation: 'org', limits: {grpTRES: {mem: 16384}, maxSubmitJobs: 0, maxWall: 91}})
  })

  it('counts a partition-specific association as membership, each user once', () => {
    expect(state.accounts.find((a) => a.name === 'physics')?.users).toEqual(['alice', 'carol'])
  })

  it('keeps names Slurm holds even when citc would not write them', () => {
    expect(state.accounts.find((a) => a.name === 'bad name')).toMatchObject({parent: 'root', users: []})
  })

  it('reads default accounts, empty when Slurm has none', () => {
    expect(state.defaultAccounts).toEqual({alice: 'physics', bob: '', carol: 'physics', root: 'root'})
  })

  it('keeps the text of account records without an association here (deleted, or another cluster\'s) apart', () => {
    const s = parseAccountingState({assoc: 'root||||1||||||normal\n', account: 'root|default root account|root\ngone|old text|science\n', user: ''})
    expect(s.accounts.map((a) => a.name)).toEqual(['root'])
    expect(s.accountTexts).toEqual({gone: {description: 'old text', organisation: 'science'}, root: {description: 'default root account', organisation: 'root'}})
  })

  it("ignores users with no association in this cluster (slurmdbd lists every cluster's users)", () => {
    const s = parseAccountingState({assoc: 'root||||1||||||normal\nroot|root|||1||||||\n', account: 'root|default root account|root\n', user: 'bob|\nroot|root\n'})
    expect(s.defaultAccounts).toEqual({root: 'root'})
  })
})

describe('output citc cannot read is a remote error (exit 4), with the line', () => {
  const cases: [string, {assoc?: string; account?: string; user?: string}, RegExp][] = [
    ['a row with too few fields', {assoc: 'root|||1\n'}, /4 fields, expected 11/],
    ['a MaxWall it does not know', {assoc: 'a|||root|1|||||UNLIMITED|\n'}, /MaxWall "UNLIMITED"/],
    ['a TRES list it cannot read', {assoc: 'a|||root|1|cpu=1.5|||||\n'}, /GrpTRESMins "cpu=1.5"/],
    ['a count that is not a number', {assoc: 'a|||root|1|||x|||\n'}, /MaxJobs "x"/],
    ['a user row without its account', {assoc: 'a|bob||root|1||||||\n'}, /without its own row/],
    ['a user line with three fields', {user: 'bob|a|b\n'}, /3 fields, expected 2/],
  ]
  for (const [name, out, message] of cases) {
    it(name, () => {
      const run = () => parseAccountingState({assoc: out.assoc ?? '', account: out.account ?? '', user: out.user ?? ''})
      expect(run).toThrow(CitcError)
      expect(run).toThrow(message)
      try {
        run()
      } catch (error) {
        expect((error as CitcError).exitCode).toBe(4)
      }
    })
  }
})
