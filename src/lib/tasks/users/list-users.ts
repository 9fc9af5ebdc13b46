// `citc users`: the people in the cluster's directory, with their keys and Slurm accounts.
import {join} from 'node:path'

import pLimit from 'p-limit'

import {CLUSTER_JSON, readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import type {Io} from '../../io.js'
import {connectCluster} from '../../cluster/management-node.js'
import {withLog} from '../../transport/logged.js'
import type {Transport} from '../../transport/types.js'
import {Accounting} from '../../accounts/sacctmgr.js'
import {Directory, LDAP_JSON, readLdapConfig} from '../../users/directory.js'
import {FORBIDDEN_IN_NAME} from '../../users/validate.js'
import {logStamp} from '../workflow.js'

export interface ListedUser {
  username: string
  uid: number
  name: string
  home: string
  /** Keys in ~/.ssh/authorized_keys; null if it cannot be read. */
  keys: number | null
  /** The user's default Slurm account; null if none or accounting cannot be asked. */
  account: string | null
}

export interface ListUsersOptions {
  transport: Transport
  ldapJsonPath?: string
  clusterJsonPath?: string
  /** false: do not ask sacctmgr; {confPath}: SLURM_CONF (default cluster.json's confPath). */
  accounting?: false | {confPath?: string}
  note?: (message: string) => void
}

/** Count the keys of an authorized_keys text (non-empty, non-comment lines). */
export function countKeys(text: string): number {
  return text.split('\n').filter((l) => l.trim() !== '' && !l.trim().startsWith('#')).length
}

export async function listUsers(o: ListUsersOptions): Promise<ListedUser[]> {
  const t = o.transport
  const dir = new Directory(t, await readLdapConfig(t, o.ldapJsonPath ?? LDAP_JSON))
  const people = await dir.listUsers()
  let accounts = new Map<string, string>()
  if (o.accounting !== false) {
    try {
      const confPath = o.accounting?.confPath ?? (await readManagementContract(t, o.clusterJsonPath ?? CLUSTER_JSON).catch(() => undefined))?.confPath
      accounts = await new Accounting(t, confPath).defaultAccounts()
    } catch (error) {
      o.note?.(`note: cannot read the Slurm accounts (${(error as Error).message.split('\n')[0]})`)
    }
  }
  const limit = pLimit(8)
  return Promise.all(
    people.map((p) =>
      limit(async () => {
        let keys: number | null = null
        if (p.home) {
          const data = await t.readFile(`${p.home}/.ssh/authorized_keys`).catch(() => undefined)
          keys = data === undefined ? null : countKeys(data.toString('utf8'))
        }
        return {username: p.username, uid: p.uidNumber, name: p.name, home: p.home, keys, account: accounts.get(p.username) || null}
      }),
    ),
  )
}

// The characters a name may not hold (control, bidi overrides), for the table as for validation.
const UNPRINTABLE = new RegExp(FORBIDDEN_IN_NAME.source, 'gu')

/** Rows for people: aligned columns (control characters from the directory shown as "?"). */
export function usersTable(users: readonly ListedUser[]): string {
  const clean = (s: string) => s.replace(UNPRINTABLE, '?')
  const rows = [
    ['USERNAME', 'UID', 'NAME', 'HOME', 'KEYS', 'ACCOUNT'],
    ...users.map((u) => [u.username, String(u.uid), u.name, u.home, u.keys === null ? '?' : String(u.keys), u.account ?? '-'].map(clean)),
  ]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => [...r[i]].length)))
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i] - [...c].length))).join('  ')).join('\n')
}

export async function runListUsers(io: Io, input: {cluster?: string}, dataDir: string): Promise<{cluster: string; users: ListedUser[]}> {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const logFile = join(registry.paths(name).logsDir, `users-${logStamp()}.log`)
  const transport = withLog(await connectCluster(record), logFile)
  try {
    const users = await listUsers({transport, note: io.note})
    if (users.length === 0) io.log(`${name} has no users yet: add one with \`citc add-user\``)
    else io.log(usersTable(users))
    return {cluster: name, users}
  } finally {
    await transport.close()
  }
}
