import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {parseAccounts, type ParseAccountsOptions} from '../../../src/lib/accounts/parse.js'
import type {AccountsFile} from '../../../src/lib/accounts/types.js'
import {InvalidInputError, type InputProblem} from '../../../src/lib/errors.js'

/** Fixtures as lines, so that line N of the file is the N-th argument. */
const lines = (...l: string[]) => l.join('\n') + '\n'

const DIRECTORY = ['alice', 'bob', 'carol', 'dave']
const opts = (more: Partial<ParseAccountsOptions> = {}): ParseAccountsOptions => ({file: 'accounts.yaml', directoryUsers: DIRECTORY, ...more})
const parse = (text: string, more: Partial<ParseAccountsOptions> = {}): AccountsFile => parseAccounts(text, opts(more))

/** Every problem as "where path: message". */
function problems(text: string, more: Partial<ParseAccountsOptions> = {}): string[] {
  try {
    parse(text, more)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).exitCode).toBe(3)
    expect((error as InvalidInputError).hint).toMatch(/nothing was changed/)
    return (error as InvalidInputError).problems.map((p: InputProblem) => `${p.where} ${p.path ? `${p.path}: ` : ''}${p.message}`)
  }
  throw new Error('expected an InvalidInputError')
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

describe('valid files', () => {
  it("parses the issue's smallest file", () => {
    expect(parse(SMALLEST)).toEqual({
      accounts: [
        {name: 'physics', parent: 'root', description: 'Physics department', limits: {grpTRESMins: {cpu: 6000}, maxJobs: 10}, users: ['alice'], where: 'accounts.yaml:2:3'},
        {name: 'physics-lab', parent: 'physics', limits: {}, users: ['bob'], where: 'accounts.yaml:6:3'},
      ],
      defaultAccounts: {},
    })
  })

  it('puts parents before children in a tree of three levels written leaves first', () => {
    const file = parse(lines('accounts:', '  lab-a: {parent: physics, users: [carol]}', '  physics: {parent: science}', '  science:', '  chemistry: {parent: science}'))
    expect(file.accounts.map((a) => `${a.name}<${a.parent}`)).toEqual(['science<root', 'physics<science', 'lab-a<physics', 'chemistry<science'])
  })

  it('reads every limit in every form a user would write', () => {
    const file = parse(
      lines(
        'accounts:',
        '  a:',
        '    organisation: Faculty of Science',
        '    limits:',
        '      GrpTRESMins: {cpu: 6000, mem: 100000, node: 50, billing: 7, energy: 1, gres/gpu: 60}',
        '      GrpTRES: {cpu: 64, mem: "16G"}',
        '      MaxJobs: 0',
        '      MaxSubmitJobs: 200',
        '      MaxWall: "48:00:00"',
        '      Fairshare: parent',
        '      QOS: [normal, long]',
        '  b: {limits: {MaxWall: "2-00:00:00", Fairshare: 10}}',
        '  c: {limits: {MaxWall: 90, QOS: []}}',
        '  d: {limits: {MaxWall: "1-12"}}',
      ),
    )
    expect(file.accounts.map((a) => a.limits)).toEqual([
      {
        grpTRESMins: {cpu: 6000, mem: 100000, node: 50, billing: 7, energy: 1, 'gres/gpu': 60},
        grpTRES: {cpu: 64, mem: 16384},
        maxJobs: 0,
        maxSubmitJobs: 200,
        maxWall: 2880,
        fairshare: 'parent',
        qos: ['long', 'normal'],
      },
      {maxWall: 2880, fairshare: 10},
      {maxWall: 90, qos: []},
      {maxWall: 2160},
    ])
    expect(file.accounts[0].organisation).toBe('Faculty of Science')
  })

  it('takes default accounts from users:', () => {
    const file = parse(lines('accounts:', '  a: {users: [alice, bob]}', '  b: {users: [bob]}', 'users:', '  bob: {defaultAccount: b}', '  alice:'))
    expect(file.defaultAccounts).toEqual({bob: 'b'})
  })

  it('accepts accounts without settings, and checks no directory when none is given', () => {
    expect(parse(lines('accounts:', '  a:', '  b: {users: [zed]}'), {directoryUsers: undefined}).accounts.map((a) => a.users)).toEqual([[], ['zed']])
  })

  it('takes the TRES the cluster has', () => {
    expect(parse(lines('accounts:', '  a: {limits: {GrpTRES: {gres/gpu:a100: 2}}}'), {tres: ['cpu', 'gres/gpu:a100']}).accounts[0].limits).toEqual({grpTRES: {'gres/gpu:a100': 2}})
  })

  it('parses examples/accounts.yaml', () => {
    const file = parse(readFileSync(new URL('../../../examples/accounts.yaml', import.meta.url), 'utf8'))
    expect(file.accounts.map((a) => a.name)).toEqual(['physics', 'physics-lab', 'chemistry'])
    expect(file.defaultAccounts).toEqual({alice: 'physics-lab'})
  })
})

describe('bad input: every problem at its file:line:col', () => {
  const cases: [string, string, string[], Partial<ParseAccountsOptions>?][] = [
    ['an empty file', '', ['accounts.yaml:1:1 accounts.yaml is empty; declare the accounts under accounts:, e.g. "accounts: {physics: {users: [alice]}}"']],
    ['a list at the top', lines('- physics'), ['accounts.yaml:1:1 accounts.yaml must be a map with accounts:, e.g. "accounts: {physics: {users: [alice]}}", not a list']],
    ['no accounts:', lines('users:'), ['accounts.yaml:1:1 accounts: is required; add it']],
    ['an unknown top-level key', lines('acounts:', '  a:'), ['accounts.yaml:1:1 accounts: is required; add it', 'accounts.yaml:1:1 acounts: unknown key "acounts"; did you mean "accounts"?']],
    ['an unknown account key', lines('accounts:', '  a:', '    organization: x'), ['accounts.yaml:3:5 accounts.a.organization: unknown key "organization"; did you mean "organisation"?']],
    ['an unknown limit', lines('accounts:', '  a:', '    limits: {MaxJob: 1}'), ['accounts.yaml:3:14 accounts.a.limits.MaxJob: unknown key "MaxJob"; did you mean "MaxJobs"?']],
    [
      'an unknown TRES',
      lines('accounts:', '  a:', '    limits:', '      GrpTRESMins: {cpus: 1, gres/gpu: 1}'),
      ['accounts.yaml:4:21 accounts.a.limits.GrpTRESMins.cpus: unknown TRES "cpus"; did you mean "cpu"? this cluster has cpu, mem, node, billing, energy, gres/gpu'],
    ],
    [
      'a TRES the cluster lacks',
      lines('accounts:', '  a: {limits: {GrpTRES: {gres/gpu: 1}}}'),
      ['accounts.yaml:2:26 accounts.a.limits.GrpTRES["gres/gpu"]: unknown TRES "gres/gpu"; this cluster has cpu, mem, node, billing'],
      {tres: ['cpu', 'mem', 'node', 'billing']},
    ],
    ['a TRES amount that is not a number', lines('accounts:', '  a: {limits: {GrpTRES: {cpu: -1, mem: 1.5}}}'), [
      'accounts.yaml:2:26 accounts.a.limits.GrpTRES.cpu: the amount must be a whole number, not -1',
      'accounts.yaml:2:35 accounts.a.limits.GrpTRES.mem: the amount must be a whole number of MB, or text with a unit such as "16G", not 1.5',
    ]],
    ['MaxJobs not a whole number', lines('accounts:', '  a:', '    limits:', '      MaxJobs: ten'), ['accounts.yaml:4:7 accounts.a.limits.MaxJobs: MaxJobs must be a whole number from 0 to 2147483647, not "ten"; remove it for no limit']],
    ['MaxSubmitJobs too large', lines('accounts:', '  a: {limits: {MaxSubmitJobs: 3000000000}}'), ['accounts.yaml:2:16 accounts.a.limits.MaxSubmitJobs: MaxSubmitJobs must be a whole number from 0 to 2147483647, not 3000000000; remove it for no limit']],
    ['MaxWall not a duration', lines('accounts:', '  a: {limits: {MaxWall: 2 days}}'), ['accounts.yaml:2:16 accounts.a.limits.MaxWall: "2 days" is not a duration; write minutes (90), "HH:MM:SS" ("48:00:00") or "D-HH:MM:SS" ("2-00:00:00")']],
    ['MaxWall with seconds', lines('accounts:', '  a: {limits: {MaxWall: "01:30:30"}}'), ['accounts.yaml:2:16 accounts.a.limits.MaxWall: "01:30:30" has seconds; Slurm keeps MaxWall in whole minutes, so write "01:31:00" or "01:30:00"']],
    ['MaxWall out of range', lines('accounts:', '  a: {limits: {MaxWall: "1-24:00:00"}}'), [
      'accounts.yaml:2:16 accounts.a.limits.MaxWall: "1-24:00:00" has a field out of range (hours < 24 after the days, minutes and seconds < 60); write minutes (90), "HH:MM:SS" ("48:00:00") or "D-HH:MM:SS" ("2-00:00:00")',
    ]],
    ['MaxWall zero', lines('accounts:', '  a: {limits: {MaxWall: "0:00:00"}}'), ['accounts.yaml:2:16 accounts.a.limits.MaxWall: "0:00:00" would let no job run; give a positive duration, or remove MaxWall for no limit']],
    ['Fairshare misspelt', lines('accounts:', '  a: {limits: {Fairshare: parnet}}'), ['accounts.yaml:2:16 accounts.a.limits.Fairshare: Fairshare must be a whole number from 0 to 2147483647 or "parent", not "parnet"']],
    ['QOS unknown, unsafe and twice', lines('accounts:', '  a:', '    limits:', '      QOS: [normal, lnog, "a,b", normal]'), [
      'accounts.yaml:4:21 accounts.a.limits.QOS[1]: unknown QOS "lnog"; did you mean "long"? this cluster has normal, long',
      'accounts.yaml:4:27 accounts.a.limits.QOS[2]: "a,b" is not a safe QOS name: lower-case letters, digits, "_", "." and "-" (at most 64)',
      'accounts.yaml:4:34 accounts.a.limits.QOS[3]: "normal" is listed twice; remove one',
    ], {qos: ['normal', 'long']}],
    ['QOS not a list', lines('accounts:', '  a: {limits: {QOS: normal}}'), ['accounts.yaml:2:16 accounts.a.limits.QOS: QOS must be a list such as [normal], not "normal"']],
    ['an account name with a comma', lines('accounts:', '  "a,b":'), ['accounts.yaml:2:3 accounts["a,b"]: "a,b" is not a safe Slurm account name: a lower-case letter, then only a-z, 0-9, "_" and "-" (sacctmgr lower-cases names and reads spaces, "," and "=" as syntax)']],
    ['an account name with a space', lines('accounts:', '  Big Lab:'), ['accounts.yaml:2:3 accounts["Big Lab"]: "Big Lab" is not a safe Slurm account name: a lower-case letter, then only a-z, 0-9, "_" and "-" (sacctmgr lower-cases names and reads spaces, "," and "=" as syntax)']],
    ['an account name that is too long', lines('accounts:', `  ${'a'.repeat(65)}:`), [`accounts.yaml:2:3 accounts.${'a'.repeat(65)}: account name "${'a'.repeat(65)}" is 65 characters long; at most 64 are allowed`]],
    ['root declared', lines('accounts:', '  root:'), ['accounts.yaml:2:3 accounts.root: "root" is Slurm\'s own account and cannot be declared; use parent: root for top-level accounts']],
    ['a parent that is not declared', lines('accounts:', '  physics:', '  lab: {parent: phyiscs}'), ['accounts.yaml:3:9 accounts.lab.parent: parent "phyiscs" is not declared in this file; did you mean "physics"? declare it under accounts:, or use parent: root']],
    ['a parent with "="', lines('accounts:', '  lab: {parent: "x=y"}'), ['accounts.yaml:2:9 accounts.lab.parent: "x=y" is not a safe Slurm account name: a lower-case letter, then only a-z, 0-9, "_" and "-" (sacctmgr lower-cases names and reads spaces, "," and "=" as syntax)']],
    ['an account its own parent', lines('accounts:', '  a: {parent: a}'), ['accounts.yaml:2:7 accounts.a.parent: account "a" cannot be its own parent; use parent: root or another account']],
    ['a cycle of three', lines('accounts:', '  top:', '  a: {parent: c}', '  b: {parent: a}', '  c: {parent: b}', '  d: {parent: c}'), [
      'accounts.yaml:3:7 accounts.a.parent: parent links make a cycle ("a" → "c" → "b" → "a"); one of these accounts must have another parent, e.g. root',
    ]],
    ['a description with quotes or a pipe', lines('accounts:', '  a: {description: "Bob\'s lab"}', '  b: {description: "x | y"}'), [
      'accounts.yaml:2:7 accounts.a.description: description cannot contain quotes, backticks or "|" (slurmdbd changes or splits on them)',
      'accounts.yaml:3:7 accounts.b.description: description cannot contain quotes, backticks or "|" (slurmdbd changes or splits on them)',
    ]],
    ['a description on two lines', lines('accounts:', '  a:', '    description: "one\\ntwo"'), ['accounts.yaml:3:5 accounts.a.description: description contains a control character or a line break; write it on one line']],
    ['an organisation that is not text', lines('accounts:', '  a: {organisation: [x]}'), ['accounts.yaml:2:7 accounts.a.organisation: organisation must be text, not a list']],
    ['an account that is a list', lines('accounts:', '  a: [alice]'), ['accounts.yaml:2:3 accounts.a: an account\'s settings must be a map such as {parent: root, users: [alice]}, not a list']],
    ['users not a list', lines('accounts:', '  a: {users: alice}'), ['accounts.yaml:2:7 accounts.a.users: users must be a list such as [alice, bob], not "alice"']],
    ['a user not in the directory', lines('accounts:', '  a:', '    users: [alice, alcie, erin]'), [
      'accounts.yaml:3:20 accounts.a.users[1]: user "alcie" is not in the cluster\'s directory; did you mean "alice"? add them with `citc add-user` first, or remove them here',
      'accounts.yaml:3:27 accounts.a.users[2]: user "erin" is not in the cluster\'s directory; add them with `citc add-user` first, or remove them here',
    ]],
    ['a user name with "="', lines('accounts:', '  a: {users: ["bob=x", 7]}'), [
      'accounts.yaml:2:15 accounts.a.users[0]: "bob=x" is not a valid login name: a lower-case letter, then only a-z, 0-9, "_" and "-"',
      'accounts.yaml:2:24 accounts.a.users[1]: a user must be a login name, not 7',
    ]],
    ['a user listed twice', lines('accounts:', '  a: {users: [bob, bob]}'), ['accounts.yaml:2:20 accounts.a.users[1]: "bob" is listed twice; remove one']],
    ['a default account the user is not in', lines('accounts:', '  a: {users: [bob]}', '  b:', 'users:', '  bob: {defaultAccount: b}'), [
      "accounts.yaml:5:9 users.bob.defaultAccount: \"b\" is not one of bob's accounts (a); did you mean \"a\"? a default account must list the user",
    ]],
    ['users: for someone in no account', lines('accounts:', '  a:', 'users:', '  carol: {defaultAccount: a}'), ["accounts.yaml:4:3 users.carol: user \"carol\" is not in any account's users; add them to an account, or remove this entry"]],
    ['an unknown key under users:', lines('accounts:', '  a: {users: [bob]}', 'users:', '  bob: {default: a}'), ['accounts.yaml:4:9 users.bob.default: unknown key "default"; allowed: defaultAccount']],
    ['user settings that are not a map', lines('accounts:', '  a: {users: [bob]}', 'users:', '  bob: a'), ["accounts.yaml:4:3 users.bob: a user's settings must be a map such as {defaultAccount: physics}, not \"a\""]],
    ['limits that are not a map', lines('accounts:', '  a: {limits: 5}'), ['accounts.yaml:2:7 accounts.a.limits: limits must be a map such as {MaxJobs: 10}, not 5']],
    ['a parent that is not text', lines('accounts:', '  a: {parent: 7}'), ['accounts.yaml:2:7 accounts.a.parent: parent must be text, not 7']],
    ['accounts as a list', lines('accounts: [a]'), ['accounts.yaml:1:1 accounts: accounts must be a map such as {physics: {users: [alice]}}, not a list']],
    ['a duplicate account', lines('accounts:', '  a:', '  a:'), ['accounts.yaml:3:3 duplicate key "a" (first at line 2); keep only one of them']],
  ]
  for (const [name, text, expected, more] of cases) {
    it(name, () => {
      expect(problems(text, more)).toEqual(expected)
    })
  }

  it('reports every problem at once, sorted by position', () => {
    const p = problems(
      lines(
        'accounts:',
        '  b: {parent: a, users: [zed]}', //      2
        '  a:', //                                  3
        '    parent: b', //                         4
        '    limits: {MaxWall: 0, Foo: 1}', //      5
        'users:', //                                6
        '  "Bob":', //                              7
      ),
    )
    expect(p.map((x) => x.split(' ')[0])).toEqual(['accounts.yaml:2:7', 'accounts.yaml:2:26', 'accounts.yaml:5:14', 'accounts.yaml:5:26', 'accounts.yaml:7:3'])
    // The cycle once, at the parent: of its first member in the file.
    expect(p[0]).toMatch(/cycle \("b" → "a" → "b"\)/)
  })
})

describe('YAML syntax errors', () => {
  it('are reported at their line with the same hint', () => {
    expect(problems(lines('accounts:', '  a: {users: [bob}'))[0]).toMatch(/^accounts\.yaml:2:\d+ .*fix the YAML syntax here$/)
  })
})
