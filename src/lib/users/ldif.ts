// LDAP text formats, pure: DN values (RFC 4514), search filter values (RFC 4515), LDIF records
// (RFC 2849) for citc's user entries, and a reader for the LDIF that ldapsearch prints.
//
// Nothing user-supplied is ever pasted into LDIF as is: a value that is not a plain printable-ASCII
// SAFE-STRING is written base64-encoded (`attr:: …`), so a newline in a surname is part of the
// surname, never a new line of LDIF; a DN's values are escaped, so a comma is part of the value,
// never a new RDN.
import {createHash, randomBytes} from 'node:crypto'

/** Escape one attribute value for use in a DN (RFC 4514 section 2.4). */
export function escapeDnValue(value: string): string {
  let out = ''
  const chars = [...value]
  chars.forEach((c, i) => {
    const code = c.codePointAt(0)!
    if (code < 0x20 || code === 0x7f) {
      out += `\\${code.toString(16).padStart(2, '0')}` // control characters (NUL included) as hex pairs
    } else if ('"+,;<>\\'.includes(c)) {
      out += `\\${c}`
    } else if ((i === 0 && (c === ' ' || c === '#')) || (i === chars.length - 1 && c === ' ')) {
      out += `\\${c}`
    } else {
      out += c
    }
  })
  return out
}

/** `attr=value` with the value escaped: one RDN. */
function rdn(attr: string, value: string): string {
  checkAttrName(attr)
  return `${attr}=${escapeDnValue(value)}`
}

/** Escape a value for an LDAP search filter (RFC 4515): `*`, `(`, `)`, `\` and NUL become \XX. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[*()\\\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, '0')}`)
}

const ATTR_NAME = /^[A-Za-z][A-Za-z0-9-]*$/

function checkAttrName(name: string) {
  if (!ATTR_NAME.test(name)) throw new Error(`not an LDAP attribute name: ${JSON.stringify(name)}`)
}

/**
 * True when `value` may be written after `attr: ` as is: RFC 2849's SAFE-STRING (no NUL, CR or LF;
 * not starting with a space, ":" or "<"), narrowed to printable ASCII, and not ending in a space.
 * Anything else is written base64-encoded.
 */
export function isSafeString(value: string): boolean {
  if (value === '') return true
  if (!/^[\x20-\x7e]*$/.test(value)) return false
  if (value.startsWith(' ') || value.startsWith(':') || value.startsWith('<')) return false
  return !value.endsWith(' ')
}

/** One LDIF line: `attr: value`, or `attr:: base64` when the value is not a safe string (or is bytes). */
export function ldifLine(attr: string, value: string | Buffer): string {
  checkAttrName(attr)
  if (typeof value === 'string' && isSafeString(value)) return `${attr}: ${value}`
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value
  return `${attr}:: ${bytes.toString('base64')}`
}

export type LdifAttrs = ReadonlyArray<readonly [string, string | Buffer]>

/** One LDIF content record: the dn line, then one line per value, then a blank line. */
export function ldifRecord(dn: string, attrs: LdifAttrs): string {
  return [ldifLine('dn', dn), ...attrs.map(([a, v]) => ldifLine(a, v))].join('\n') + '\n\n'
}

/** OpenLDAP's salted SHA-1 password scheme, as `slappasswd -h {SSHA}` writes it. */
export function sshaHash(password: string, salt: Buffer = randomBytes(8)): string {
  const digest = createHash('sha1').update(Buffer.from(password, 'utf8')).update(salt).digest()
  return `{SSHA}${Buffer.concat([digest, salt]).toString('base64')}`
}

/** What citc writes for one person in the directory. */
export interface UserEntry {
  username: string
  firstName: string
  surname: string
  uidNumber: number
  gidNumber: number
  homeDirectory: string
  loginShell: string
  /** A hashed userPassword ({SSHA}…), never the password itself. */
  passwordHash?: string
}

const USER_OBJECT_CLASSES = ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'posixAccount'] as const

/** The DN of a user: uid=<username>,<peopleDn>. */
export function userDn(username: string, peopleDn: string): string {
  return `${rdn('uid', username)},${peopleDn}`
}

/** The LDIF record that adds `u` under `peopleDn` (inetOrgPerson + posixAccount). */
export function userLdif(u: UserEntry, peopleDn: string): string {
  for (const [k, v] of [['uidNumber', u.uidNumber], ['gidNumber', u.gidNumber]] as const) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`${k} must be a non-negative integer, not ${v}`)
  }
  const attrs: [string, string][] = [
    ...USER_OBJECT_CLASSES.map((c) => ['objectClass', c] as [string, string]),
    ['uid', u.username],
    ['cn', `${u.firstName} ${u.surname}`.trim()],
    ['sn', u.surname],
    ['givenName', u.firstName],
    ['uidNumber', String(u.uidNumber)],
    ['gidNumber', String(u.gidNumber)],
    ['homeDirectory', u.homeDirectory],
    ['loginShell', u.loginShell],
  ]
  if (u.passwordHash !== undefined) attrs.push(['userPassword', u.passwordHash])
  return ldifRecord(userDn(u.username, peopleDn), attrs.filter(([, v]) => v !== ''))
}

/** One entry read back from LDIF. Attribute names are kept as written; look them up with get/all. */
export interface LdifEntry {
  dn: string
  attrs: Map<string, string[]>
}

/** The values of `attr` (case-insensitive name). */
export function all(entry: LdifEntry, attr: string): string[] {
  const want = attr.toLowerCase()
  for (const [k, v] of entry.attrs) if (k.toLowerCase() === want) return v
  return []
}

/** The first value of `attr`, or undefined. */
export const get = (entry: LdifEntry, attr: string): string | undefined => all(entry, attr)[0]

/**
 * Read LDIF content records as ldapsearch prints them: folded lines (a leading space continues the
 * previous line), comments, `attr: value` and `attr:: base64`. Values are decoded as UTF-8.
 */
export function parseLdif(text: string): LdifEntry[] {
  // Unfold: a line starting with one space continues the previous line.
  const lines: string[] = []
  for (const raw of text.replace(/\r\n/g, '\n').split('\n')) {
    if (raw.startsWith(' ') && lines.length > 0 && lines[lines.length - 1] !== '') lines[lines.length - 1] += raw.slice(1)
    else lines.push(raw)
  }
  const entries: LdifEntry[] = []
  let current: LdifEntry | undefined
  for (const line of lines) {
    if (line === '') {
      current = undefined
      continue
    }
    if (line.startsWith('#')) continue
    const m = /^([A-Za-z][A-Za-z0-9;-]*)(::?)\s?(.*)$/.exec(line)
    if (!m) throw new Error(`not an LDIF line: ${JSON.stringify(line.slice(0, 80))}`)
    const [, name, sep, rawValue] = m
    const value = sep === '::' ? Buffer.from(rawValue.trim(), 'base64').toString('utf8') : rawValue
    if (name.toLowerCase() === 'version' && !current) continue
    if (name.toLowerCase() === 'dn') {
      current = {dn: value, attrs: new Map()}
      entries.push(current)
      continue
    }
    if (!current) throw new Error(`LDIF attribute before any dn: ${JSON.stringify(line.slice(0, 80))}`)
    const list = current.attrs.get(name)
    if (list) list.push(value)
    else current.attrs.set(name, [value])
  }
  return entries
}
