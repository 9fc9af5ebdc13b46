// The cluster's user directory (OpenLDAP on the management node), through a Transport: the same
// code runs on this machine (local provider) and over SSH. Every command is an argv array; LDIF
// goes on stdin; the admin password stays in its 0600 file on the node (-y FILE), never in argv.
//
// /etc/citc/ldap.json (written by the ldap role) says where the directory is:
//   {uri, baseDn, peopleDn, groupsDn, adminDn, adminPasswordFile, usersGid?, homeDir?}
// (/etc/citc/cluster.json is cluster/management-contract.ts's.)
import {z} from 'zod'

import {CitcError, remoteError} from '../errors.js'
import {shellQuote} from '../shell-quote.js'
import type {Transport} from '../transport/types.js'
import {all, escapeFilterValue, get, type LdifEntry, parseLdif, type UserEntry, userDn, userLdif} from './ldif.js'

export const LDAP_JSON = '/etc/citc/ldap.json'
/** uidNumbers citc hands out start here (CitC's convention). */
export const FIRST_UID = 10_001
/** The `users` group of Debian and Ubuntu. */
const USERS_GID = 100
const LDAP_TIMEOUT_MS = 60_000

const ldapConfigSchema = z.object({
  uri: z.string().regex(/^ldaps?:\/\/|^ldapi:\/\//, 'must be an ldap://, ldaps:// or ldapi:// URI'),
  baseDn: z.string().min(1),
  peopleDn: z.string().min(1),
  groupsDn: z.string().min(1),
  adminDn: z.string().min(1),
  adminPasswordFile: z.string().startsWith('/', 'must be an absolute path'),
  usersGid: z.number().int().min(0).default(USERS_GID),
  homeDir: z.string().startsWith('/', 'must be an absolute path').optional(),
})
export type LdapConfig = z.output<typeof ldapConfigSchema>

async function readJsonOnNode<S extends z.ZodType>(t: Transport, path: string, schema: S, what: string): Promise<z.output<S>> {
  const data = await t.readFile(path)
  if (data === undefined) {
    throw remoteError(`${path} does not exist on ${t.description}: it is not a citc management node, or its setup did not finish`, {
      hint: `${what} is written by citc's management playbook; run it (citc create, or re-run the setup) and try again`,
    })
  }
  let value: unknown
  try {
    value = JSON.parse(data.toString('utf8'))
  } catch (error) {
    throw remoteError(`${path} on ${t.description} is not valid JSON: ${(error as Error).message}`)
  }
  const r = schema.safeParse(value)
  if (!r.success) {
    throw remoteError(`${path} on ${t.description} is not what citc wrote: ${r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`)
  }
  return r.data
}

export const readLdapConfig = (t: Transport, path = LDAP_JSON) => readJsonOnNode(t, path, ldapConfigSchema, 'ldap.json')

/** A person as the directory holds them. */
export interface DirectoryUser {
  username: string
  dn: string
  uidNumber: number
  gidNumber: number
  name: string
  firstName?: string
  surname?: string
  home: string
  shell?: string
}

/** `getent passwd KEY` on the node: the passwd line, or undefined when there is none. */
export async function getentPasswd(t: Transport, key: string | number, signal?: AbortSignal): Promise<string | undefined> {
  const r = await t.run(['getent', 'passwd', String(key)], {timeoutMs: 30_000, signal})
  if (r.exitCode === 0) return r.stdout.split('\n')[0]
  if (r.exitCode === 2) return undefined // not found
  throw remoteError(`getent passwd ${key} failed on ${t.description} (exit ${r.exitCode}): ${(r.stderr || r.stdout).trim()}`)
}

export class Directory {
  constructor(
    readonly transport: Transport,
    readonly config: LdapConfig,
  ) {}

  /** The bind and server options every LDAP tool gets: simple bind as the admin, password from its file. */
  private bindArgs(): string[] {
    return ['-x', '-H', this.config.uri, '-D', this.config.adminDn, '-y', this.config.adminPasswordFile]
  }

  private ldapFailure(tool: string, argv: string[], r: {exitCode: number; stderr: string; stdout: string}): CitcError {
    const out = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-5).join('\n')
    const hints: Record<number, string> = {
      49: `the directory refused the admin password in ${this.config.adminPasswordFile}`,
      255: `is slapd running on the management node and listening on ${this.config.uri}?`,
      32: `does ${this.config.peopleDn} exist? (citc's ldap role creates it)`,
    }
    return remoteError(`${tool} failed on ${this.transport.description} (exit ${r.exitCode}): ${shellQuote(argv)}${out ? `\n${out}` : ''}`, {
      hint: hints[r.exitCode],
      details: {exitCode: r.exitCode},
    })
  }

  /** ldapsearch under `base` (default: the whole directory); entries as LDIF records. */
  async search(filter: string, attrs: string[], opts: {base?: string; scope?: 'sub' | 'one' | 'base'; signal?: AbortSignal} = {}): Promise<LdifEntry[]> {
    const argv = ['ldapsearch', ...this.bindArgs(), '-LLL', '-o', 'ldif-wrap=no', '-b', opts.base ?? this.config.baseDn, '-s', opts.scope ?? 'sub', filter, ...attrs]
    const r = await this.transport.run(argv, {timeoutMs: LDAP_TIMEOUT_MS, signal: opts.signal})
    if (r.exitCode === 32 && opts.base !== undefined && opts.base !== this.config.baseDn) return [] // the base itself is missing
    if (r.exitCode !== 0) throw this.ldapFailure('ldapsearch', argv, r)
    return parseLdif(r.stdout)
  }

  /** Entries that hold this login name (uid) anywhere in the directory, or whose DN would be the user's. */
  async find(username: string, signal?: AbortSignal): Promise<LdifEntry[]> {
    const byUid = await this.search(`(uid=${escapeFilterValue(username)})`, ['uid', 'uidNumber'], {signal})
    if (byUid.length > 0) return byUid
    return this.search('(objectClass=*)', ['dn'], {base: this.dn(username), scope: 'base', signal})
  }

  /** Whether the directory has this login name. */
  async exists(username: string, signal?: AbortSignal): Promise<boolean> {
    return (await this.find(username, signal)).length > 0
  }

  /** The DN a user gets. */
  dn(username: string): string {
    return userDn(username, this.config.peopleDn)
  }

  /** Every uidNumber in the directory (posixAccount entries anywhere under the base). */
  async uidNumbers(signal?: AbortSignal): Promise<number[]> {
    const entries = await this.search('(uidNumber=*)', ['uidNumber'], {signal})
    return entries.map((e) => Number(get(e, 'uidNumber'))).filter((n) => Number.isSafeInteger(n))
  }

  /**
   * The next free uidNumber: one more than the highest in the directory, at least FIRST_UID, and
   * not taken on the node itself (getent passwd: local accounts too).
   */
  async nextUidNumber(signal?: AbortSignal): Promise<number> {
    const taken = await this.uidNumbers(signal)
    let candidate = Math.max(FIRST_UID, ...taken.map((n) => n + 1))
    for (let i = 0; i < 1000; i++, candidate++) {
      if ((await getentPasswd(this.transport, candidate, signal)) === undefined) return candidate
    }
    throw remoteError(`no free uidNumber found from ${candidate - 1000} to ${candidate - 1} on ${this.transport.description}`)
  }

  /** Add the user's entry (LDIF on stdin). A user that exists already is a usage error, not a remote one. */
  async add(entry: UserEntry, signal?: AbortSignal): Promise<string> {
    const argv = ['ldapadd', ...this.bindArgs()]
    const r = await this.transport.run(argv, {stdin: userLdif(entry, this.config.peopleDn), timeoutMs: LDAP_TIMEOUT_MS, signal})
    if (r.exitCode === 68) {
      throw new CitcError('invalidInput', `the directory has an entry ${this.dn(entry.username)} already`, {hint: 'choose another login name'})
    }
    if (r.exitCode !== 0) throw this.ldapFailure('ldapadd', argv, r)
    return this.dn(entry.username)
  }

  /** Delete an entry by DN (for undo). Resolves false if it was not there. */
  async deleteDn(dn: string): Promise<boolean> {
    const argv = ['ldapdelete', ...this.bindArgs(), dn]
    const r = await this.transport.run(argv, {timeoutMs: LDAP_TIMEOUT_MS})
    if (r.exitCode === 32) return false
    if (r.exitCode !== 0) throw this.ldapFailure('ldapdelete', argv, r)
    return true
  }

  /** The people in the directory (posixAccount entries under peopleDn), sorted by login name. */
  async listUsers(signal?: AbortSignal): Promise<DirectoryUser[]> {
    const entries = await this.search('(objectClass=posixAccount)', ['uid', 'uidNumber', 'gidNumber', 'cn', 'givenName', 'sn', 'homeDirectory', 'loginShell'], {
      base: this.config.peopleDn,
      signal,
    })
    return entries.map(toUser).sort((a, b) => a.username.localeCompare(b.username))
  }

  /** One person, or undefined. */
  async getUser(username: string, signal?: AbortSignal): Promise<DirectoryUser | undefined> {
    const entries = await this.search(`(&(objectClass=posixAccount)(uid=${escapeFilterValue(username)}))`, ['uid', 'uidNumber', 'gidNumber', 'cn', 'givenName', 'sn', 'homeDirectory', 'loginShell'], {signal})
    return entries.length > 0 ? toUser(entries[0]) : undefined
  }
}

function toUser(e: LdifEntry): DirectoryUser {
  return {
    username: get(e, 'uid') ?? '',
    dn: e.dn,
    uidNumber: Number(get(e, 'uidNumber')),
    gidNumber: Number(get(e, 'gidNumber')),
    name: all(e, 'cn')[0] ?? '',
    firstName: get(e, 'givenName'),
    surname: get(e, 'sn'),
    home: get(e, 'homeDirectory') ?? '',
    shell: get(e, 'loginShell'),
  }
}
