// accounts.yaml (accounts/parse.ts parseAccounts) under any input: a value or a located
// InvalidInputError, never a crash or a hang; no write to disk while parsing (accounts apply reads the
// file, then writes to slurmdbd: a refused file must stop before); a file written from a model reads
// back as that model; and the limit values' own format/parse pairs round-trip.
import {readFileSync} from 'node:fs'

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {stringify} from 'yaml'

import {parseAccounts, type ParseAccountsOptions} from '../../src/lib/accounts/parse.js'
import {InvalidInputError} from '../../src/lib/errors.js'
import {formatMinutes, formatTresList, MAX_COUNT, parseMinutes, parseTresList} from '../../src/lib/accounts/values.js'
import {anyText, fsWritesDuring, mutated, parsesOrLocates, RUNS, yamlDocument} from './fuzz.js'

const DIRECTORY = ['alice', 'bob', 'carol', 'dave']
const OPTIONS: ParseAccountsOptions[] = [
  {file: 'accounts.yaml', directoryUsers: DIRECTORY, qos: ['normal', 'high']},
  {file: 'accounts.yaml', tres: null},
]
const options = fc.constantFrom(...OPTIONS)

const lines = (...l: string[]) => l.join('\n') + '\n'
const VALID = [
  readFileSync(new URL('../lib/accounts/fixtures/roundtrip.accounts.yaml', import.meta.url), 'utf8'),
  lines(
    'accounts:',
    '  physics:',
    '    description: Physics department',
    '    limits: {GrpTRESMins: {cpu: 6000}, MaxJobs: 10, MaxWall: 90}',
    '    users: [alice]',
    '  physics-lab:',
    '    parent: physics',
    '    limits: {GrpTRES: {mem: "16G", gres/gpu: 2}, QOS: [normal, high], Fairshare: parent}',
    '    users: [bob]',
    'users:',
    '  bob: {defaultAccount: physics-lab}',
  ),
]
const WORDS = [
  ...['accounts', 'users', 'description', 'organisation', 'parent', 'limits', 'defaultAccount'],
  ...['GrpTRESMins', 'GrpTRES', 'MaxJobs', 'MaxSubmitJobs', 'MaxWall', 'Fairshare', 'QOS', 'cpu', 'mem', 'gres/gpu', 'node'],
  ...['root', 'physics', 'chemistry', 'alice', 'bob', 'normal', '__proto__', 'constructor', 'toString'],
]

describe('accounts.yaml: any input gives accounts or a located error', () => {
  it('the valid seeds parse', () => {
    for (const text of VALID) for (const o of OPTIONS) expect(() => parseAccounts(text, o)).not.toThrow()
  })

  it('any text', () => {
    fc.assert(fc.property(anyText, options, (text, o) => void parsesOrLocates(text, 'accounts.yaml', (t) => parseAccounts(t, o))), {numRuns: RUNS})
  })

  it('any YAML document made of the format\'s words', () => {
    fc.assert(fc.property(yamlDocument(WORDS), options, (text, o) => void parsesOrLocates(text, 'accounts.yaml', (t) => parseAccounts(t, o))), {numRuns: RUNS})
  })

  it('a valid file with lines deleted, duplicated or swapped, or characters changed', () => {
    fc.assert(fc.property(mutated(VALID), options, (text, o) => void parsesOrLocates(text, 'accounts.yaml', (t) => parseAccounts(t, o))), {numRuns: RUNS})
  })

  it('writes nothing while parsing', () => {
    fc.assert(
      fc.property(fc.oneof(mutated(VALID), yamlDocument(WORDS)), options, (text, o) => {
        expect(fsWritesDuring(() => parseAccounts(text, o))).toEqual([])
      }),
      {numRuns: Math.ceil(RUNS / 3)},
    )
  })
})

describe('accounts.yaml: a file written from a model reads back as the model', () => {
  const name = fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/).filter((n) => n !== 'root')
  const minutes = fc.integer({min: 1, max: MAX_COUNT})
  const limits = fc.record(
    {
      GrpTRESMins: fc.record({cpu: fc.nat(), mem: fc.nat()}, {requiredKeys: []}),
      MaxJobs: fc.integer({min: 0, max: MAX_COUNT}),
      MaxWall: fc.oneof(minutes, minutes.map(formatMinutes)),
      Fairshare: fc.oneof(fc.integer({min: 0, max: MAX_COUNT}), fc.constant('parent')),
      QOS: fc.uniqueArray(fc.constantFrom('normal', 'high'), {maxLength: 2}),
    },
    {requiredKeys: []},
  )
  const model = fc.uniqueArray(fc.record({name, limits, users: fc.uniqueArray(fc.constantFrom(...DIRECTORY), {maxLength: 3}), parentIndex: fc.nat()}), {
    selector: (a) => a.name,
    minLength: 1,
    maxLength: 5,
  })

  it('names, parents, users and limits as written (MaxWall in minutes, QOS sorted)', () => {
    fc.assert(
      fc.property(model, fc.boolean(), (accounts, flow) => {
        // Each account's parent is root or one written before it: a tree, never a cycle.
        const parentOf = (i: number) => (i === 0 || accounts[i].parentIndex % (i + 1) === i ? 'root' : accounts[accounts[i].parentIndex % (i + 1)].name)
        const doc = {accounts: Object.fromEntries(accounts.map((a, i) => [a.name, {parent: parentOf(i), limits: a.limits, users: a.users}]))}
        const file = parseAccounts(stringify(doc, {collectionStyle: flow ? 'flow' : 'any'}), OPTIONS[0])
        expect(file.accounts.map((a) => a.name).sort()).toEqual(accounts.map((a) => a.name).sort())
        for (const [i, a] of accounts.entries()) {
          const got = file.accounts.find((x) => x.name === a.name)!
          expect(got.parent).toBe(parentOf(i))
          expect(got.users).toEqual(a.users)
          const l = a.limits
          expect(got.limits).toEqual({
            ...(l.GrpTRESMins === undefined ? {} : {grpTRESMins: l.GrpTRESMins}),
            ...(l.MaxJobs === undefined ? {} : {maxJobs: l.MaxJobs}),
            ...(l.MaxWall === undefined ? {} : {maxWall: typeof l.MaxWall === 'number' ? l.MaxWall : parseMinutes(l.MaxWall)}),
            ...(l.Fairshare === undefined ? {} : {fairshare: l.Fairshare}),
            ...(l.QOS === undefined ? {} : {qos: [...l.QOS].sort()}),
          })
        }
        // Parents first.
        const seen = new Set(['root'])
        for (const a of file.accounts) {
          expect(seen.has(a.parent)).toBe(true)
          seen.add(a.name)
        }
      }),
      {numRuns: Math.ceil(RUNS / 2)},
    )
  })
})

describe('accounts.yaml: free text that is accepted reaches slurmdbd unchanged', () => {
  it('a description or organisation parseAccounts accepts is the same text after UTF-8 (sacctmgr\'s argv)', () => {
    const textValue = fc.oneof(fc.string({unit: 'binary', maxLength: 16}), fc.stringMatching(/^[A-Za-z]{1,4}[\ud800-\udfff][A-Za-z]{1,4}$/))
    fc.assert(
      fc.property(textValue, fc.constantFrom('description', 'organisation'), (value, key) => {
        let file
        try {
          file = parseAccounts(stringify({accounts: {physics: {[key]: value}}}), OPTIONS[0])
        } catch (error) {
          if (error instanceof InvalidInputError) return
          throw error
        }
        const written = file.accounts[0][key as 'description' | 'organisation']
        expect(written).toBe(value)
        expect(Buffer.from(written!, 'utf8').toString('utf8')).toBe(written)
      }),
      {numRuns: RUNS, examples: [['Physics \udc00 dept', 'description']]},
    )
  })
})

describe('accounts: limit values round-trip through their text form', () => {
  it('parseMinutes(formatMinutes(m)) is m, for every MaxWall Slurm can hold', () => {
    fc.assert(fc.property(fc.integer({min: 1, max: MAX_COUNT}), (m) => {
      expect(parseMinutes(formatMinutes(m))).toBe(m)
    }), {numRuns: RUNS})
  })

  it('parseMinutes of anything is whole minutes in range or a message, never a throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.stringMatching(/^\s?(\d{1,12}-)?\d{1,12}(:\d{1,3}){0,3}\s?$/)), (v) => {
        const r = parseMinutes(v)
        if (typeof r === 'number') expect(Number.isInteger(r) && r >= 1 && r <= MAX_COUNT).toBe(true)
        else expect(r.error).toMatch(/\S/)
      }),
      {numRuns: RUNS},
    )
  })

  it('parseTresList(formatTresList(a)) is a', () => {
    const tres = fc.stringMatching(/^[a-z]{1,8}(\/[a-z0-9_.-]{1,8}(:[a-z0-9_.-]{1,8})?)?$/)
    fc.assert(fc.property(fc.dictionary(tres, fc.maxSafeNat(), {maxKeys: 6}), (a) => {
      expect(parseTresList(formatTresList(a))).toEqual(a)
    }), {numRuns: RUNS})
  })
})
