// LDAP text (users/ldif.ts): a DN value escaped by escapeDnValue reads back, by RFC 4514's rules, as the
// value itself (so escaping is injective) and never holds a special character unescaped; a search
// filter value escaped by escapeFilterValue likewise (RFC 4515); every LDIF record citc writes reads back
// through parseLdif as the DN and values it was made of, whatever they hold; and parseLdif refuses any
// other text with its own message, never another error.
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {stringify} from 'yaml'

import {InvalidInputError} from '../../src/lib/errors.js'

import {escapeDnValue, escapeFilterValue, ldifRecord, parseLdif, userDn, userLdif} from '../../src/lib/users/ldif.js'
import {checkRequestFields, parseUsersFile} from '../../src/lib/users/request.js'
import {anyText, RUNS} from './fuzz.js'

/** RFC 4514 section 3, for one attribute value: `\` + special character, or `\` + two hex digits (UTF-8 bytes). */
function unescapeDnValue(escaped: string): string {
  const bytes: number[] = []
  for (let i = 0; i < escaped.length; ) {
    if (escaped[i] !== '\\') {
      const c = String.fromCodePoint(escaped.codePointAt(i)!)
      bytes.push(...Buffer.from(c, 'utf8'))
      i += c.length
      continue
    }
    const next = escaped.slice(i + 1, i + 3)
    if (/^[0-9a-fA-F]{2}$/.test(next)) {
      bytes.push(parseInt(next, 16))
      i += 3
    } else if (i + 1 < escaped.length && ' "#+,;<=>\\'.includes(escaped[i + 1])) {
      bytes.push(escaped.charCodeAt(i + 1))
      i += 2
    } else {
      throw new Error(`a lone "\\" at ${i} of ${JSON.stringify(escaped)}`)
    }
  }
  return Buffer.from(bytes).toString('utf8')
}

/** RFC 4514 forbids these unescaped anywhere in a value (and NUL); a leading " " or "#" and a trailing " " too. */
function unescapedSpecial(escaped: string): string | undefined {
  for (let i = 0; i < escaped.length; i++) {
    const c = escaped[i]
    if (c === '\\') {
      i += /^[0-9a-fA-F]{2}$/.test(escaped.slice(i + 1, i + 3)) ? 2 : 1
      continue
    }
    if ('"+,;<>'.includes(c) || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) return `${JSON.stringify(c)} at ${i}`
    if (i === 0 && (c === ' ' || c === '#')) return 'a leading space or "#"'
    if (i === escaped.length - 1 && c === ' ') return 'a trailing space'
  }
  return undefined
}

/** Well-formed text: UTF-8 has no form for a lone surrogate, so no LDAP value can hold one. */
const text = fc.oneof(fc.string({unit: 'grapheme', maxLength: 30}), fc.string({unit: 'binary', maxLength: 30}).filter((s) => !/[\ud800-\udfff]/u.test(s)), fc.stringMatching(/^[ #]?[a-z ,+";<>=\\#\n\r\0]{0,12}[ ]?$/))

describe('DN values (RFC 4514)', () => {
  it('an escaped value reads back as the value, with no special character left unescaped', () => {
    fc.assert(
      fc.property(text, (v) => {
        const e = escapeDnValue(v)
        expect(unescapedSpecial(e)).toBeUndefined()
        expect(unescapeDnValue(e)).toBe(v)
      }),
      {numRuns: RUNS * 2},
    )
  })

  it('two different values never escape alike', () => {
    fc.assert(fc.property(text, text, (a, b) => {
      fc.pre(a !== b)
      expect(escapeDnValue(a)).not.toBe(escapeDnValue(b))
    }), {numRuns: RUNS})
  })

  it('a user\'s DN is one RDN more than the people DN, whatever the login name holds', () => {
    fc.assert(
      fc.property(text, (name) => {
        const dn = userDn(name, 'ou=People,dc=citc,dc=local')
        // Split on the first comma that is not escaped: the uid RDN, then the parent DN unchanged.
        const m = /^uid=((?:[^\\,]|\\.)*),(.*)$/s.exec(dn)
        expect(m).not.toBeNull()
        expect(unescapeDnValue(m![1])).toBe(name)
        expect(m![2]).toBe('ou=People,dc=citc,dc=local')
      }),
      {numRuns: RUNS},
    )
  })
})

describe('search filter values (RFC 4515)', () => {
  it('an escaped value reads back as the value, with no "*", "(", ")", "\\" or NUL left', () => {
    fc.assert(
      fc.property(text, (v) => {
        const e = escapeFilterValue(v)
        expect(e.replace(/\\[0-9a-f]{2}/g, '')).not.toMatch(/[*()\\\0]/)
        expect(e.replace(/\\([0-9a-f]{2})/g, (_, h: string) => String.fromCharCode(parseInt(h, 16)))).toBe(v)
      }),
      {numRuns: RUNS},
    )
  })
})

describe('LDIF records', () => {
  const attr = fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,10}$/).filter((a) => a.toLowerCase() !== 'dn')

  it('what ldifRecord writes, parseLdif reads back: the DN and every value, in order', () => {
    fc.assert(
      fc.property(text, fc.array(fc.tuple(attr, text), {maxLength: 6}), (dnValue, attrs) => {
        const dn = `uid=${escapeDnValue(dnValue)},ou=People,dc=x`
        const [entry, ...more] = parseLdif(ldifRecord(dn, attrs))
        expect(more).toEqual([])
        expect(entry.dn).toBe(dn)
        const expected = new Map<string, string[]>()
        for (const [a, v] of attrs) expected.set(a, [...(expected.get(a) ?? []), v])
        expect(entry.attrs).toEqual(expected)
      }),
      {numRuns: RUNS},
    )
  })

  it('a user entry reads back with its names as given, one entry per record', () => {
    const entry = fc.record({
      username: fc.stringMatching(/^[a-z][a-z0-9_-]{0,15}$/),
      firstName: text,
      surname: text,
      uidNumber: fc.integer({min: 0, max: 2 ** 31}),
      gidNumber: fc.integer({min: 0, max: 2 ** 31}),
    })
    fc.assert(
      fc.property(fc.array(entry, {minLength: 1, maxLength: 3}), (users) => {
        const ldif = users.map((u) => userLdif({...u, homeDirectory: `/home/${u.username}`, loginShell: '/bin/bash'}, 'ou=People,dc=x')).join('')
        const read = parseLdif(ldif)
        expect(read).toHaveLength(users.length)
        users.forEach((u, i) => {
          const attrs = read[i].attrs
          expect(attrs.get('uid')).toEqual([u.username])
          expect(attrs.get('sn')).toEqual(u.surname === '' ? undefined : [u.surname])
          expect(attrs.get('givenName')).toEqual(u.firstName === '' ? undefined : [u.firstName])
          expect(attrs.get('uidNumber')).toEqual([String(u.uidNumber)])
        })
      }),
      {numRuns: RUNS},
    )
  })

  it('any other text: entries, or parseLdif\'s own refusal (never a TypeError)', () => {
    const ldifish = fc.array(fc.oneof(anyText, fc.constantFrom('dn: x', 'dn:: eA==', 'cn: a', 'cn:: ////', ' continued', '# c', '', 'version: 1', 'a;lang-en: b')), {maxLength: 8})
    fc.assert(
      fc.property(ldifish, fc.constantFrom('\n', '\r\n'), (ls, eol) => {
        try {
          parseLdif(ls.join(eol))
        } catch (error) {
          expect((error as Error).constructor).toBe(Error)
          expect((error as Error).message).toMatch(/^(not an LDIF line|LDIF attribute before any dn)/)
        }
      }),
      {numRuns: RUNS},
    )
  })

  it('a first name and surname add-user accepts from users.yaml are stored exactly as given (any text, "\\ud800" escapes included)', () => {
    const name = fc.oneof(fc.string({unit: 'binary', maxLength: 12}), fc.string({unit: 'grapheme', maxLength: 12}), fc.stringMatching(/^[A-Za-z]{0,4}[\ud800-\udfff][A-Za-z]{0,4}$/))
    fc.assert(
      fc.property(name, name, (firstName, surname) => {
        let request
        try {
          ;[request] = parseUsersFile(stringify([{username: 'alice', firstName, surname, keys: ['alice.pub']}]), 'users.yaml')
        } catch (error) {
          if (error instanceof InvalidInputError) return
          throw error
        }
        fc.pre(checkRequestFields(request).length === 0)
        const [read] = parseLdif(userLdif({...request, uidNumber: 10001, gidNumber: 10001, homeDirectory: '/home/alice', loginShell: '/bin/bash'}, 'dc=x'))
        expect(read.attrs.get('givenName')).toEqual([firstName])
        expect(read.attrs.get('sn')).toEqual([surname])
      }),
      {numRuns: RUNS, examples: [['Zo\ud800e', 'Liddell']]},
    )
  })
})
