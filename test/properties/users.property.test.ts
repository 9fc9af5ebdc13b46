// users.yaml (users/request.ts parseUsersFile) under any input: requests or a located InvalidInputError,
// never a crash or a hang; the field checks that follow (checkRequestFields) locate every problem in the
// file too; no write while parsing (add-user reads the file, then writes to the directory); and a file
// written from a list of users reads back as that list.
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {stringify} from 'yaml'

import {InvalidInputError} from '../../src/lib/errors.js'
import {checkRequestFields, parseUsersFile, type UserRequest} from '../../src/lib/users/request.js'
import {anyText, expectLocated, fsWritesDuring, mutated, parsesOrLocates, RUNS, yamlDocument} from './fuzz.js'

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl alice@laptop'
const lines = (...l: string[]) => l.join('\n') + '\n'
const VALID = [
  lines('- username: alice', '  firstName: Alice', '  surname: Liddell', '  keys: [alice.pub, https://github.com/alice.keys]', '- username: bob', '  firstName: Bob', '  surname: Ross', `  keys: "${KEY}"`, '  account: painters'),
  lines('users:', '  - {username: carol, firstName: Carol, surname: Danvers, keys: [carol.pub]}', '  - username: dave', '    firstName: Dave', '    surname: Bowman', '    keys:', '      - dave.pub'),
]
const WORDS = ['users', 'username', 'firstName', 'surname', 'keys', 'account', 'alice', 'Alice', 'alice.pub', KEY, '__proto__', 'toString']

/** Key specs are checked when they are loaded (test/properties/keys.property.test.ts), not by these checks. */
const keySpecs = (key: string) => key === 'keys'

/** Parse, then check the fields as add-user does before anything else: every problem located in the file. */
function parseAndCheck(text: string): UserRequest[] {
  const requests = parseUsersFile(text, 'users.yaml')
  const problems = requests.flatMap(checkRequestFields)
  if (problems.length > 0) throw new InvalidInputError(problems)
  return requests
}

describe('users.yaml: any input gives requests or a located error', () => {
  it('the valid seeds parse', () => {
    for (const text of VALID) expect(parseAndCheck(text).length).toBeGreaterThan(0)
  })

  it('any text', () => {
    fc.assert(fc.property(anyText, (text) => void parsesOrLocates(text, 'users.yaml', parseAndCheck, keySpecs)), {numRuns: RUNS})
  })

  it('any YAML document made of the format\'s words', () => {
    fc.assert(fc.property(yamlDocument(WORDS), (text) => void parsesOrLocates(text, 'users.yaml', parseAndCheck, keySpecs)), {numRuns: RUNS})
  })

  it('a valid file with lines deleted, duplicated or swapped, or characters changed', () => {
    fc.assert(fc.property(mutated(VALID), (text) => void parsesOrLocates(text, 'users.yaml', parseAndCheck, keySpecs)), {numRuns: RUNS})
  })

  it('every key of an accepted file is located in it', () => {
    fc.assert(
      fc.property(mutated(VALID), (text) => {
        const r = parsesOrLocates(text, 'users.yaml', parseAndCheck, keySpecs)
        if (r instanceof InvalidInputError) return
        const places = r.flatMap((u) => [...u.keys, ...Object.values(u.at)].map((o) => ({where: o.where, message: 'x'})))
        expectLocated(new InvalidInputError(places), text, 'users.yaml')
      }),
      {numRuns: RUNS},
    )
  })

  it('writes nothing while parsing', () => {
    fc.assert(
      fc.property(fc.oneof(mutated(VALID), yamlDocument(WORDS)), (text) => {
        expect(fsWritesDuring(() => parseAndCheck(text))).toEqual([])
      }),
      {numRuns: Math.ceil(RUNS / 3)},
    )
  })
})

describe('users.yaml: a file written from a list of users reads back as the list', () => {
  const user = fc.record(
    {
      username: fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/),
      firstName: fc.string({minLength: 1, maxLength: 20}),
      surname: fc.string({minLength: 1, maxLength: 20}),
      keys: fc.oneof(fc.constant(KEY), fc.array(fc.oneof(fc.constant(KEY), fc.string({minLength: 1, maxLength: 30})), {minLength: 1, maxLength: 3})),
      account: fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/),
    },
    {requiredKeys: ['username', 'firstName', 'surname', 'keys']},
  )
  it('every field as written, under users: or as the list itself', () => {
    fc.assert(
      fc.property(fc.array(user, {minLength: 1, maxLength: 4}), fc.boolean(), fc.boolean(), (users, wrapped, flow) => {
        const requests = parseUsersFile(stringify(wrapped ? {users} : users, {collectionStyle: flow ? 'flow' : 'any'}), 'users.yaml')
        expect(
          requests.map((r) => ({username: r.username, firstName: r.firstName, surname: r.surname, keys: r.keys.map((k) => k.spec), account: r.account})),
        ).toEqual(users.map((u) => ({...u, keys: typeof u.keys === 'string' ? [u.keys] : u.keys, account: u.account})))
      }),
      {numRuns: RUNS},
    )
  })
})
