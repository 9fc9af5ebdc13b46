import {describe, expect, it} from 'vitest'

import {accountProblem, personNameProblem, printable, RESERVED_USERNAMES, usernameProblem} from '../../../src/lib/users/validate.js'

describe('usernameProblem', () => {
  it.each(['alice', 'a', 'bob-smith', 'b_2', 'x'.repeat(32), 'z9'])('accepts %j', (name) => {
    expect(usernameProblem(name)).toBeUndefined()
  })

  it.each([
    ['', /empty/],
    ['Alice', /lower-case letter/],
    ['1abc', /start with a lower-case letter/],
    ['_svc', /start with a lower-case letter/],
    ['-rf', /start with a lower-case letter/],
    ['bob;touch /tmp/x', /not a valid login name/],
    ['$(id)', /not a valid login name/],
    ['a b', /not a valid login name/],
    ['bob.smith', /not a valid login name/],
    ['zoë', /not a valid login name/],
    ['bob\n', /not a valid login name/],
    ['x'.repeat(33), /33 characters long; at most 32/],
  ])('refuses %j', (name, why) => {
    expect(usernameProblem(name)).toMatch(why)
  })

  it.each(['root', 'daemon', 'bin', 'sys', 'slurm', 'munge', 'nobody', 'admin', 'citc', 'mysql', 'openldap', 'sshd', 'nslcd', 'ubuntu', 'systemd-network', 'debian-exim'])(
    'refuses the reserved name %j',
    (name) => {
      expect(usernameProblem(name)).toMatch(/reserved/)
    },
  )

  it('never echoes control characters raw', () => {
    const msg = usernameProblem('a\u001b[31mred')!
    expect(msg).not.toContain('\u001b')
    expect(msg).toContain('\\u001b')
  })

  it('the reserved list holds only names that would otherwise be valid', () => {
    for (const n of RESERVED_USERNAMES) expect(/^[a-z_][a-z0-9_-]*$/.test(n), n).toBe(true)
  })
})

describe('personNameProblem', () => {
  it.each(['Alice', 'Zoë', 'José María', "O'Brien", 'Smith, Jr.', '$(id)', '`whoami`', '李', 'Ñandú-Pérez'])('accepts %j', (v) => {
    expect(personNameProblem(v, 'the surname')).toBeUndefined()
  })

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['x\ndn: cn=evil', /control character \(U\+000A/],
    ['a\rb', /U\+000D/],
    ['tab\there', /U\+0009/],
    ['nul\u0000', /U\+0000/],
    ['del\u007f', /U\+007F/],
    ['c1\u0085', /U\+0085/],
    ['line\u2028sep', /U\+2028/],
    ['bidi\u202eevil', /U\+202E/],
    ['x'.repeat(65), /65 characters long; at most 64/],
    [' Alice', /starts or ends with a space/],
  ])('refuses %j', (v, why) => {
    expect(personNameProblem(v, 'the surname')).toMatch(why)
  })

  it('counts characters, not UTF-16 units', () => {
    expect(personNameProblem('😀'.repeat(64))).toBeUndefined()
    expect(personNameProblem('😀'.repeat(65))).toMatch(/65 characters/)
  })
})

describe('accountProblem', () => {
  it('accepts cluster-like names and refuses sacctmgr syntax', () => {
    expect(accountProblem('cheerful-macaw')).toBeUndefined()
    expect(accountProblem('physics_2')).toBeUndefined()
    expect(accountProblem('a,b')).toMatch(/not a valid Slurm account/)
    expect(accountProblem('a=b')).toMatch(/not a valid Slurm account/)
    expect(accountProblem('Physics')).toMatch(/not a valid Slurm account/)
    expect(accountProblem('root')).toMatch(/Slurm's own/)
    expect(accountProblem('')).toMatch(/empty/)
  })
})

describe('printable', () => {
  it('escapes and shortens', () => {
    expect(printable('a\nb')).toBe('a\\nb')
    expect(printable('x'.repeat(100))).toHaveLength(80)
  })
})
