import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../../src/lib/errors.js'
import {checkRequestFields, parseUsersFile, prepareUsers, requestFromFlags} from '../../../src/lib/users/request.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-request-'))
let ed = ''
let weak = ''
beforeAll(() => {
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'a@b', '-f', join(dir, 'alice')])
  execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '1024', '-N', '', '-C', 'weak', '-f', join(dir, 'weak')])
  ed = readFileSync(join(dir, 'alice.pub'), 'utf8').trim()
  weak = readFileSync(join(dir, 'weak.pub'), 'utf8').trim()
})
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const problemsOf = async (p: Promise<unknown>) => {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(InvalidInputError)
  return (error as InvalidInputError).problems
}

const thrown = (fn: () => unknown) => {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as InvalidInputError).problems
  }
  throw new Error('did not throw')
}

describe('requests from flags', () => {
  it('a good request is prepared with its keys', async () => {
    const [u] = await prepareUsers([requestFromFlags({username: 'alice', firstName: ' Alice ', surname: 'Liddell', keys: [ed, ed]})])
    expect(u).toMatchObject({username: 'alice', firstName: 'Alice', surname: 'Liddell', account: undefined})
    expect(u.keys.map((k) => k.line)).toEqual([ed]) // deduplicated
  })

  it('every problem at once, each at its flag', async () => {
    const problems = await problemsOf(
      prepareUsers([requestFromFlags({username: 'Root', firstName: 'a\tb', surname: '', keys: [weak, join(dir, 'none.pub')], account: 'A,B'})]),
    )
    expect(problems.map((p) => p.where)).toEqual(['USERNAME', '--first-name', '--surname', '--account', '--key', '--key'])
    expect(problems[4].message).toMatch(/1024 bits/)
    expect(problems[5].message).toMatch(/no such file/)
  })

  it('no key at all is refused', () => {
    expect(checkRequestFields(requestFromFlags({username: 'al', firstName: 'A', surname: 'B', keys: []}))).toEqual([
      {where: 'USERNAME', message: expect.stringMatching(/no SSH key given for al: pass --key/)},
    ])
  })
})

describe('users.yaml', () => {
  it('reads a list (keys as a list or one string), resolving key paths against the file', async () => {
    const text = `- username: alice
  firstName: Alice
  surname: Liddell
  keys: [alice.pub]
- username: bob
  firstName: Bob
  surname: Ross
  keys: "${ed}"
  account: painters
`
    const requests = parseUsersFile(text, 'users.yaml', join(dir, 'users.yaml'))
    expect(requests.map((r) => [r.username, r.keys.map((k) => k.where), r.account])).toEqual([
      ['alice', ['users.yaml:4:10'], undefined],
      ['bob', ['users.yaml:8:3'], 'painters'],
    ])
    const prepared = await prepareUsers(requests)
    expect(prepared.map((u) => u.keys.length)).toEqual([1, 1])
  })

  it('accepts the list under users:', () => {
    const r = parseUsersFile(`users:\n  - {username: al, firstName: A, surname: B, keys: [x]}\n`, 'u.yaml')
    expect(r[0].at.username).toEqual({where: 'u.yaml:2:6', path: 'users[0].username'})
  })

  // Found by test/properties (#23): the name reached the directory as "Zo\ufffde" (LDIF is UTF-8).
  it('refuses a name holding half a surrogate pair, where it is written', () => {
    expect(thrown(() => parseUsersFile('- {username: alice, firstName: "Zo\\ud800e", surname: L, keys: [x]}\n', 'users.yaml'))).toEqual([
      {where: 'users.yaml:1:32', message: expect.stringMatching(/^"\\ud800" is half of a UTF-16 surrogate pair, not a character/)},
    ])
  })

  it('shape problems with file:line:col and a suggestion', () => {
    const problems = thrown(() =>
      parseUsersFile(
        `- username: alice
  firstname: Alice
  surname: Liddell
  keys: []
- username: 7
`,
        'users.yaml',
      ),
    )
    expect(problems).toEqual(
      expect.arrayContaining([
        {where: 'users.yaml:2:3', path: '[0].firstname', message: 'unknown key "firstname"; did you mean "firstName"?'},
        {where: 'users.yaml:1:3', path: '[0].firstName', message: 'is required; add it'},
        {where: 'users.yaml:4:3', path: '[0].keys', message: 'needs at least one key'},
        {where: 'users.yaml:5:3', path: '[1].username', message: expect.stringMatching(/expected string/i)},
      ]),
    )
    expect(thrown(() => parseUsersFile('a: 1\n', 'u.yaml'))[0].where).toBe('u.yaml:1:1')
    expect(thrown(() => parseUsersFile('[]\n', 'u.yaml'))[0].message).toMatch(/lists no users/)
  })

  it('value problems are located in the file: names, keys (with the key’s own line), duplicates', async () => {
    const text = `- username: alice
  firstName: Alice
  surname: Liddell
  keys: [alice.pub]
- username: bob;touch /tmp/x
  firstName: "Bob\\nEvil"
  surname: Ross
  keys:
    - alice.pub
    - weak.pub
- username: alice
  firstName: Alice
  surname: Again
  keys: [alice.pub]
`
    const problems = await problemsOf(prepareUsers(parseUsersFile(text, 'users.yaml', join(dir, 'users.yaml'))))
    expect(problems).toEqual([
      {where: 'users.yaml:5:3', path: '[1].username', message: expect.stringMatching(/^"bob;touch \/tmp\/x" is not a valid login name/)},
      {where: 'users.yaml:6:3', path: '[1].firstName', message: expect.stringMatching(/^the first name contains a control character \(U\+000A/)},
      {where: 'users.yaml:11:3', path: '[2].username', message: '"alice" is listed twice (first at users.yaml:1:3)'},
      {where: 'users.yaml:10:7', path: '[1].keys[1]', message: `${join(dir, 'weak.pub')} line 1 (${weak.split(' ')[0]} ${weak.split(' ')[1].slice(0, 16)}… weak): an RSA key of 1024 bits is too weak: at least 2048 are needed (better: ssh-keygen -t ed25519)`},
    ])
  })
})
