// What is asked of `citc add-user`, from flags or from a users.yaml, and its validation before
// anything is changed: login names, first names and surnames, accounts, and every key fetched and
// parsed. All problems are reported at once, each where the user wrote the value (a flag, or
// file:line:col in users.yaml).
import {dirname, resolve} from 'node:path'

import {z} from 'zod'

import {formatPath, parseYamlDocument, type YamlPath, zodProblems} from '../config/yaml.js'
import {InvalidInputError, type InputProblem} from '../errors.js'
import {type KeyOptions, loadKeySpec, dedupeKeys, type PublicKey} from './keys.js'
import {accountProblem, personNameProblem, usernameProblem} from './validate.js'

export type Field = 'username' | 'firstName' | 'surname' | 'account'

/** Where a value was written: a flag (`--surname`) or `file:line:col`, and a path shown before the message. */
export interface Origin {
  where: string
  path?: string
}

export interface UserRequest {
  username: string
  firstName: string
  surname: string
  /** Each --key value with where it was given. */
  keys: {spec: string; where: string; path?: string}[]
  account?: string
  at: Record<Field, Origin>
  /** Relative key paths are resolved against this directory (users.yaml's own; default cwd). */
  baseDir?: string
}

/** A request whose every value is valid and whose keys are loaded. */
export interface PreparedUser {
  username: string
  firstName: string
  surname: string
  keys: PublicKey[]
  /** The account asked for; undefined: the cluster's default. */
  account?: string
  at: Record<Field, Origin>
}

const problemAt = (o: Origin, message: string): InputProblem => (o.path ? {where: o.where, path: o.path, message} : {where: o.where, message})

/** A request from the command line's flags. */
export function requestFromFlags(v: {username: string; firstName: string; surname: string; keys: string[]; account?: string}): UserRequest {
  return {
    username: v.username,
    firstName: v.firstName,
    surname: v.surname,
    keys: v.keys.map((spec) => ({spec, where: '--key'})),
    account: v.account,
    at: {username: {where: 'USERNAME'}, firstName: {where: '--first-name'}, surname: {where: '--surname'}, account: {where: '--account'}},
  }
}

/** The checks that need no network and no cluster. */
export function checkRequestFields(r: UserRequest): InputProblem[] {
  const problems: InputProblem[] = []
  const add = (field: Field, message: string | undefined) => {
    if (message) problems.push(problemAt(r.at[field], message))
  }
  add('username', usernameProblem(r.username))
  // Spaces around a name are dropped (a prompt's answer often ends with one); inside, every character counts.
  add('firstName', personNameProblem(r.firstName.trim(), 'the first name'))
  add('surname', personNameProblem(r.surname.trim(), 'the surname'))
  if (r.account !== undefined) add('account', accountProblem(r.account))
  if (r.keys.length === 0) problems.push(problemAt(r.at.username, `no SSH key given for ${r.username}: pass --key (a public key, a .pub file, or a URL like https://github.com/NAME.keys)`))
  return problems
}

/**
 * Validate every request and load every key (fetching URLs in parallel). Throws one
 * InvalidInputError (exit 3) with every problem of every request; changes nothing anywhere.
 */
export async function prepareUsers(requests: readonly UserRequest[], opts: KeyOptions = {}): Promise<PreparedUser[]> {
  const problems: InputProblem[] = []
  const firstAt = new Map<string, Origin>()
  for (const r of requests) {
    problems.push(...checkRequestFields(r))
    const seen = firstAt.get(r.username)
    if (seen) problems.push(problemAt(r.at.username, `"${r.username}" is listed twice (first at ${seen.where})`))
    else firstAt.set(r.username, r.at.username)
  }
  const loaded = await Promise.all(
    requests.map(async (r) => {
      const results = await Promise.all(
        r.keys.map((k) => loadKeySpec(k.spec, k.where, {...opts, baseDir: r.baseDir ?? opts.baseDir}).then((res) => ({res, k}))),
      )
      for (const {res, k} of results) problems.push(...res.problems.map((p) => (k.path ? {...p, path: k.path} : p)))
      return dedupeKeys(results.flatMap(({res}) => res.keys))
    }),
  )
  if (problems.length > 0) throw new InvalidInputError(problems, 'nothing was changed; fix the values shown and run again')
  return requests.map((r, i) => ({
    username: r.username,
    firstName: r.firstName.trim(),
    surname: r.surname.trim(),
    keys: loaded[i],
    account: r.account,
    at: r.at,
  }))
}

// ---- users.yaml ----

const entrySchema = z.strictObject({
  username: z.string(),
  firstName: z.string(),
  surname: z.string(),
  keys: z.union([z.string(), z.array(z.string()).min(1, 'needs at least one key')]),
  account: z.string().optional(),
})
const ENTRY_KEYS = ['username', 'firstName', 'surname', 'keys', 'account']

/**
 * Parse users.yaml: a list of {username, firstName, surname, keys: [..] (or one key), account?}, or a
 * map with that list under `users:`. Shape problems are thrown at once (InvalidInputError with
 * file:line:col); the values themselves are checked by prepareUsers, located the same way.
 */
export function parseUsersFile(text: string, fileLabel: string, filePath?: string): UserRequest[] {
  const yaml = parseYamlDocument(text, fileLabel)
  let prefix: YamlPath = []
  let list = yaml.value
  if (list && typeof list === 'object' && !Array.isArray(list) && 'users' in list) {
    prefix = ['users']
    list = (list as {users: unknown}).users
  }
  const schema = z.array(entrySchema).min(1, 'lists no users')
  const r = schema.safeParse(list, {reportInput: true})
  if (!r.success) {
    throw new InvalidInputError(
      zodProblems(r.error.issues, yaml, {prefix, keysAt: (p) => (p.length === prefix.length + 1 ? ENTRY_KEYS : undefined)}),
      `${fileLabel} is a list of users: - {username: alice, firstName: Alice, surname: Liddell, keys: [https://github.com/alice.keys]}`,
    )
  }
  const baseDir = filePath ? dirname(resolve(filePath)) : undefined
  return r.data.map((e, i) => {
    const at = (field: string): Origin => ({where: yaml.where([...prefix, i, field]), path: formatPath([...prefix, i, field])})
    const keys = typeof e.keys === 'string' ? [e.keys] : e.keys
    return {
      username: e.username,
      firstName: e.firstName,
      surname: e.surname,
      keys: keys.map((spec, j) => {
        const path: YamlPath = typeof e.keys === 'string' ? [...prefix, i, 'keys'] : [...prefix, i, 'keys', j]
        return {spec, where: yaml.where(path), path: formatPath(path)}
      }),
      account: e.account,
      at: {username: at('username'), firstName: at('firstName'), surname: at('surname'), account: at('account')},
      baseDir,
    }
  })
}
