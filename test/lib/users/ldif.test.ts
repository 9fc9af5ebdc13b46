import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {
  escapeDnValue,
  escapeFilterValue,
  get,
  isSafeString,
  ldifLine,
  ldifRecord,
  parseLdif,
  sshaHash,
  userDn,
  userLdif,
  type UserEntry,
} from '../../../src/lib/users/ldif.js'

const PEOPLE = 'ou=People,dc=citc,dc=local'

const user = (o: Partial<UserEntry> = {}): UserEntry => ({
  username: 'alice',
  firstName: 'Alice',
  surname: 'Liddell',
  uidNumber: 10001,
  gidNumber: 100,
  homeDirectory: '/mnt/shared/home/alice',
  loginShell: '/bin/bash',
  ...o,
})

describe('escapeDnValue (RFC 4514)', () => {
  it.each([
    ['alice', 'alice'],
    ['a,b', 'a\\,b'],
    ['a+b', 'a\\+b'],
    ['a"b', 'a\\"b'],
    ['a\\b', 'a\\\\b'],
    ['a;b<c>d', 'a\\;b\\<c\\>d'],
    ['#lead', '\\#lead'],
    ['mid#dle', 'mid#dle'],
    [' lead', '\\ lead'],
    ['trail ', 'trail\\ '],
    ['in side', 'in side'],
    ['nul\u0000x', 'nul\\00x'],
    ['new\nline', 'new\\0aline'],
    ['Zoë', 'Zoë'],
    ['x,dn: cn=evil', 'x\\,dn: cn=evil'],
  ])('%j → %j', (value, escaped) => {
    expect(escapeDnValue(value)).toBe(escaped)
  })

  it('userDn escapes the login name', () => {
    expect(userDn('a,b+c', PEOPLE)).toBe(`uid=a\\,b\\+c,${PEOPLE}`)
  })
})

describe('escapeFilterValue (RFC 4515)', () => {
  it('escapes the filter specials', () => {
    expect(escapeFilterValue('*)(uid=*')).toBe('\\2a\\29\\28uid=\\2a')
    expect(escapeFilterValue('a\\b\u0000')).toBe('a\\5cb\\00')
    expect(escapeFilterValue('alice')).toBe('alice')
  })
})

describe('LDIF values (RFC 2849)', () => {
  it.each([
    ['plain', true],
    ['', true],
    ['$(id)', true],
    ['`id`; rm -rf /', true],
    ['a,b', true],
    [' leading space', false],
    [':colon', false],
    ['<less', false],
    ['trailing ', false],
    ['new\nline', false],
    ['cr\r', false],
    ['Zoë', false],
    ['tab\t', false],
  ])('isSafeString(%j) = %s', (v, safe) => {
    expect(isSafeString(v)).toBe(safe)
  })

  it('writes unsafe values base64-encoded, as UTF-8', () => {
    expect(ldifLine('sn', 'Smith')).toBe('sn: Smith')
    expect(ldifLine('sn', 'Zoë')).toBe(`sn:: ${Buffer.from('Zoë').toString('base64')}`)
    expect(ldifLine('sn', 'x\ndn: cn=evil')).toBe(`sn:: ${Buffer.from('x\ndn: cn=evil').toString('base64')}`)
    expect(() => ldifLine('bad attr', 'x')).toThrow(/attribute name/)
  })

  it('a record is one dn line, one line per value, and a blank line', () => {
    expect(ldifRecord('cn=x,dc=y', [['cn', 'x'], ['description', 'a\nb']])).toBe(`dn: cn=x,dc=y\ncn: x\ndescription:: ${Buffer.from('a\nb').toString('base64')}\n\n`)
  })
})

describe('userLdif', () => {
  it('builds an inetOrgPerson + posixAccount entry', () => {
    expect(userLdif(user(), PEOPLE)).toBe(`dn: uid=alice,${PEOPLE}
objectClass: top
objectClass: person
objectClass: organizationalPerson
objectClass: inetOrgPerson
objectClass: posixAccount
uid: alice
cn: Alice Liddell
sn: Liddell
givenName: Alice
uidNumber: 10001
gidNumber: 100
homeDirectory: /mnt/shared/home/alice
loginShell: /bin/bash

`)
  })

  it('nasty values stay values: nothing can add a line, an attribute or an entry', () => {
    const nasty = user({firstName: 'Zoë', surname: 'x\ndn: cn=evil,dc=citc,dc=local\nobjectClass: top', passwordHash: '{SSHA}abc'})
    const text = userLdif(nasty, PEOPLE)
    // Exactly the expected attribute lines, one per line, no line starting with "dn" but the first.
    const lines = text.trimEnd().split('\n')
    expect(lines.filter((l) => /^dn:/.test(l))).toHaveLength(1)
    expect(lines.map((l) => l.split(':')[0])).toEqual([
      'dn', 'objectClass', 'objectClass', 'objectClass', 'objectClass', 'objectClass', 'uid', 'cn', 'sn', 'givenName', 'uidNumber', 'gidNumber', 'homeDirectory', 'loginShell', 'userPassword',
    ])
    const [entry] = parseLdif(text)
    expect(get(entry, 'sn')).toBe('x\ndn: cn=evil,dc=citc,dc=local\nobjectClass: top')
    expect(get(entry, 'givenName')).toBe('Zoë')
    expect(get(entry, 'cn')).toBe('Zoë x\ndn: cn=evil,dc=citc,dc=local\nobjectClass: top')
  })

  it('a DN with commas and a leading # round-trips through the LDIF reader', () => {
    const text = userLdif(user({username: '#a,b'}), PEOPLE)
    const [entry] = parseLdif(text)
    expect(entry.dn).toBe(`uid=\\#a\\,b,${PEOPLE}`)
    expect(get(entry, 'uid')).toBe('#a,b')
  })

  it('refuses numbers that are not numbers', () => {
    expect(() => userLdif(user({uidNumber: Number.NaN}), PEOPLE)).toThrow(/uidNumber/)
    expect(() => userLdif(user({gidNumber: -1}), PEOPLE)).toThrow(/gidNumber/)
  })

  it('OpenLDAP’s own LDIF reader (ldapmodify -n) accepts it with the nasty values', () => {
    const dir = mkdtempSync(join(tmpdir(), 'citc-ldif-'))
    try {
      const file = join(dir, 'u.ldif')
      // `ldapmodify -n` parses the LDIF with libldap's reader and changes nothing (no server needed).
      writeFileSync(file, userLdif(user({surname: 'x\ndn: cn=evil', firstName: 'Zoë, "the" +1'}), PEOPLE))
      const out = execFileSync('ldapmodify', ['-n', '-a', '-f', file], {encoding: 'utf8'})
      expect(out).toContain(`adding new entry "uid=alice,${PEOPLE}"`)
      expect(out.match(/adding new entry/g)).toHaveLength(1)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('parseLdif', () => {
  it('reads folded lines, base64 values, comments and several entries', () => {
    const text = `# comment
version: 1

dn: uid=a,ou=People,dc=x
cn: long
  value
sn:: ${Buffer.from('Zoë').toString('base64')}
mail: a@x
mail: b@x

dn:: ${Buffer.from('uid=é,dc=x').toString('base64')}
uid: é
`
    const entries = parseLdif(text)
    expect(entries).toHaveLength(2)
    expect(get(entries[0], 'cn')).toBe('long value')
    expect(get(entries[0], 'SN')).toBe('Zoë')
    expect(entries[0].attrs.get('mail')).toEqual(['a@x', 'b@x'])
    expect(entries[1].dn).toBe('uid=é,dc=x')
  })

  it('refuses garbage', () => {
    expect(() => parseLdif('cn: x\n')).toThrow(/before any dn/)
    expect(() => parseLdif('dn: x\n!!\n')).toThrow(/not an LDIF line/)
  })
})

describe('sshaHash', () => {
  it('has the {SSHA} shape: 20 bytes of SHA-1 and the salt', () => {
    const h = sshaHash('secret', Buffer.from('12345678'))
    expect(h.startsWith('{SSHA}')).toBe(true)
    expect(Buffer.from(h.slice(6), 'base64')).toHaveLength(28)
    expect(sshaHash('secret')).not.toBe(sshaHash('secret')) // random salt
  })
})
