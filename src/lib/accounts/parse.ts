// accounts.yaml → AccountsFile. Pure: text and what the cluster knows (its TRES, its QOS, the directory's
// users) in, a validated file out, or one InvalidInputError (exit 3) listing every problem at once,
// sorted by position, each as `file:line:col path: message` with what to do. Nothing that fails here
// can reach sacctmgr: names are checked against its argument syntax (names.ts).
import {isMap, type Node as YamlNode} from 'yaml'

import {byPosition, didYouMean, keyText, parseYamlDocument, showValue as show, type YamlFile, type YamlPath, zodProblems} from '../config/yaml.js'
import {InvalidInputError, type InputProblem} from '../errors.js'
import {accountNameProblem, DEFAULT_TRES, qosNameProblem, textProblem, TRES_NAME, userNameProblem} from './names.js'
import {accountSchema, keysAt, limitsSchema, topSchema, userSchema} from './schema.js'
import {type AccountLimits, type AccountsFile, type AccountSpec, ROOT_ACCOUNT} from './types.js'
import {MAX_COUNT, parseMinutes, parseTresAmount} from './values.js'

export interface ParseAccountsOptions {
  /** Label used in messages, e.g. "accounts.yaml". */
  file: string
  /** The cluster's TRES (`sacctmgr show tres`, as type/name); default DEFAULT_TRES; null: any well-formed name (a check before the cluster is asked). */
  tres?: readonly string[] | null
  /** The cluster's QOS names; undefined: not checked here (sacctmgr refuses an unknown one). */
  qos?: readonly string[]
  /** Login names in the cluster's directory; undefined: not checked. */
  directoryUsers?: readonly string[]
}

/** Parse and validate accounts.yaml; throws InvalidInputError with every problem found. */
export function parseAccounts(text: string, opts: ParseAccountsOptions): AccountsFile {
  const hint = `fix ${opts.file} at the lines shown and run again; nothing was changed`
  let yaml: YamlFile
  try {
    yaml = parseYamlDocument(text, opts.file)
  } catch (error) {
    // Syntax errors and duplicate keys: the same hint as every other problem of this file.
    if (error instanceof InvalidInputError) throw new InvalidInputError(error.problems, hint)
    throw error
  }
  const problems: InputProblem[] = []
  const file = readFile(yaml, opts, problems)
  if (problems.length > 0) throw new InvalidInputError(byPosition(problems), hint)
  return file
}

const suggestion = (word: string, known: readonly string[]): string => {
  const guess = didYouMean(word, known)
  return guess.length > 0 ? `did you mean ${guess.map((g) => JSON.stringify(g)).join(' or ')}? ` : ''
}

/** The keys of the map at a path, in the order written (plain objects reorder number-like keys). */
function keysOf(node: YamlNode | undefined): string[] {
  return isMap(node) ? node.items.map((p) => keyText(p.key) ?? '') : []
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

function readFile(yaml: YamlFile, opts: ParseAccountsOptions, problems: InputProblem[]): AccountsFile {
  const empty: AccountsFile = {accounts: [], defaultAccounts: {}}
  const example = 'e.g. "accounts: {physics: {users: [alice]}}"'
  if (yaml.value === null || yaml.value === undefined) {
    problems.push(yaml.problem([], `${yaml.file} is empty; declare the accounts under accounts:, ${example}`))
    return empty
  }
  if (!isPlainObject(yaml.value)) {
    problems.push(yaml.problem([], `${yaml.file} must be a map with accounts:, ${example}, not ${show(yaml.value)}`))
    return empty
  }
  const top = topSchema.safeParse(yaml.value)
  if (!top.success) problems.push(...zodProblems(top.error.issues, yaml, {keysAt}))

  const accounts: AccountSpec[] = []
  for (const name of keysOf(yaml.node(['accounts']))) {
    accounts.push(readAccount(yaml, name, opts, problems))
  }
  checkParents(yaml, accounts, problems)
  const defaultAccounts = readUsers(yaml, accounts, problems)
  return {accounts: parentsFirst(accounts), defaultAccounts}
}

function readAccount(yaml: YamlFile, name: string, opts: ParseAccountsOptions, problems: InputProblem[]): AccountSpec {
  const path: YamlPath = ['accounts', name]
  const nameProblem = name === ROOT_ACCOUNT ? `"root" is Slurm's own account and cannot be declared; use parent: root for top-level accounts` : accountNameProblem(name)
  if (nameProblem) problems.push(yaml.problem(path, nameProblem))

  const body: unknown = (yaml.value as {accounts: Record<string, unknown>}).accounts[name]
  const spec: AccountSpec = {name, parent: ROOT_ACCOUNT, limits: {}, users: [], where: yaml.where(path)}
  // Returned even when wrong (the problems are recorded): children still find their parent.
  if (body === null || body === undefined) return spec
  if (!isPlainObject(body)) {
    problems.push(yaml.problem(path, `an account's settings must be a map such as {parent: root, users: [alice]}, not ${show(body)}`))
    return spec
  }
  const checked = accountSchema.safeParse(body)
  if (!checked.success) problems.push(...zodProblems(checked.error.issues, yaml, {prefix: path, keysAt}))

  for (const key of ['description', 'organisation'] as const) {
    const v = body[key]
    if (typeof v !== 'string') continue
    const p = textProblem(v, key)
    if (p) problems.push(yaml.problem([...path, key], p))
    else spec[key] = v
  }
  if (typeof body.parent === 'string') {
    const p = body.parent === ROOT_ACCOUNT ? undefined : accountNameProblem(body.parent)
    if (p) problems.push(yaml.problem([...path, 'parent'], p))
    spec.parent = body.parent
  }
  if (isPlainObject(body.limits)) spec.limits = readLimits(yaml, [...path, 'limits'], body.limits, opts, problems)
  if (Array.isArray(body.users)) spec.users = readUserList(yaml, [...path, 'users'], body.users, opts, problems)
  return spec
}

function readUserList(yaml: YamlFile, path: YamlPath, items: unknown[], opts: ParseAccountsOptions, problems: InputProblem[]): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  const directory = directorySet(opts)
  items.forEach((item, i) => {
    const at: YamlPath = [...path, i]
    if (typeof item !== 'string') {
      problems.push(yaml.problem(at, `a user must be a login name, not ${show(item)}`))
      return
    }
    const p = userNameProblem(item)
    if (p) {
      problems.push(yaml.problem(at, p))
      return
    }
    if (directory && !directory.has(item)) {
      problems.push(yaml.problem(at, `user "${item}" is not in the cluster's directory; ${suggestion(item, opts.directoryUsers ?? [])}add them with \`citc add-user\` first, or remove them here`))
      return
    }
    if (seen.has(item)) {
      problems.push(yaml.problem(at, `"${item}" is listed twice; remove one`))
      return
    }
    seen.add(item)
    out.push(item)
  })
  return out
}

/** The directory as a set, built once per options object (10,000 users × 1,000 accounts stays linear). */
const directories = new WeakMap<ParseAccountsOptions, Set<string>>()
function directorySet(opts: ParseAccountsOptions): Set<string> | undefined {
  if (!opts.directoryUsers) return undefined
  let set = directories.get(opts)
  if (!set) directories.set(opts, (set = new Set(opts.directoryUsers)))
  return set
}

const wholeNumber = (v: unknown, key: string): number | string =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_COUNT ? v : `${key} must be a whole number from 0 to ${MAX_COUNT}, not ${show(v)}; remove it for no limit`

function readLimits(yaml: YamlFile, path: YamlPath, plain: Record<string, unknown>, opts: ParseAccountsOptions, problems: InputProblem[]): AccountLimits {
  const checked = limitsSchema.safeParse(plain)
  if (!checked.success) problems.push(...zodProblems(checked.error.issues, yaml, {prefix: path, keysAt}))
  const limits: AccountLimits = {}
  const tres = opts.tres === undefined ? DEFAULT_TRES : opts.tres

  for (const key of ['GrpTRESMins', 'GrpTRES'] as const) {
    const v = plain[key]
    if (!isPlainObject(v)) continue
    const amounts: Record<string, number> = {}
    for (const name of keysOf(yaml.node([...path, key]))) {
      const at: YamlPath = [...path, key, name]
      if (!TRES_NAME.test(name) || (tres !== null && !tres.includes(name))) {
        const known = tres ?? DEFAULT_TRES
        problems.push(yaml.problem(at, `unknown TRES "${name}"; ${suggestion(name, known)}this cluster has ${known.join(', ')}`))
        continue
      }
      const amount = tresAmount(name, v[name])
      if (typeof amount === 'string') problems.push(yaml.problem(at, amount))
      else amounts[name] = amount
    }
    limits[key === 'GrpTRESMins' ? 'grpTRESMins' : 'grpTRES'] = amounts
  }
  for (const [key, field] of [['MaxJobs', 'maxJobs'], ['MaxSubmitJobs', 'maxSubmitJobs']] as const) {
    if (!(key in plain)) continue
    const n = wholeNumber(plain[key], key)
    if (typeof n === 'string') problems.push(yaml.problem([...path, key], n))
    else limits[field] = n
  }
  if ('MaxWall' in plain) {
    const m = parseMinutes(plain.MaxWall)
    if (typeof m === 'number') limits.maxWall = m
    else problems.push(yaml.problem([...path, 'MaxWall'], m.error))
  }
  if ('Fairshare' in plain) {
    const v = plain.Fairshare
    if (v === 'parent') limits.fairshare = 'parent'
    else {
      const n = wholeNumber(v, 'Fairshare')
      if (typeof n === 'string') problems.push(yaml.problem([...path, 'Fairshare'], `Fairshare must be a whole number from 0 to ${MAX_COUNT} or "parent", not ${show(v)}`))
      else limits.fairshare = n
    }
  }
  if (Array.isArray(plain.QOS)) limits.qos = readQos(yaml, [...path, 'QOS'], plain.QOS, opts, problems)
  return limits
}

/** A TRES amount: a whole number (memory in MB, or text with a unit such as "16G"). */
function tresAmount(name: string, v: unknown): number | string {
  const help = name === 'mem' ? 'a whole number of MB, or text with a unit such as "16G"' : 'a whole number'
  let n: number | undefined
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) n = v
  else if (typeof v === 'string' && name === 'mem') n = parseTresAmount(name, v.trim().toUpperCase())
  if (n === undefined || !Number.isInteger(n)) return `the amount must be ${help}, not ${show(v)}`
  if (n > Number.MAX_SAFE_INTEGER) return `${show(v)} is too large`
  return n
}

function readQos(yaml: YamlFile, path: YamlPath, items: unknown[], opts: ParseAccountsOptions, problems: InputProblem[]): string[] {
  const out: string[] = []
  items.forEach((item, i) => {
    const at: YamlPath = [...path, i]
    const p = typeof item === 'string' ? qosNameProblem(item) : `a QOS must be a name, not ${show(item)}`
    if (p) problems.push(yaml.problem(at, p))
    else if (opts.qos && !opts.qos.includes(item as string)) {
      problems.push(yaml.problem(at, `unknown QOS "${item as string}"; ${suggestion(item as string, opts.qos)}this cluster has ${opts.qos.join(', ')}`))
    } else if (out.includes(item as string)) problems.push(yaml.problem(at, `"${item as string}" is listed twice; remove one`))
    else out.push(item as string)
  })
  return out.sort()
}

/** Every parent is root or declared here, no account is its own ancestor. */
function checkParents(yaml: YamlFile, accounts: AccountSpec[], problems: InputProblem[]): void {
  const byName = new Map(accounts.map((a) => [a.name, a]))
  const names = accounts.map((a) => a.name)
  const broken = new Set<string>()
  for (const a of accounts) {
    if (a.parent === ROOT_ACCOUNT || byName.has(a.parent)) continue
    broken.add(a.name)
    if (accountNameProblem(a.parent)) continue // already reported
    problems.push(
      yaml.problem(['accounts', a.name, 'parent'], `parent "${a.parent}" is not declared in this file; ${suggestion(a.parent, [ROOT_ACCOUNT, ...names])}declare it under accounts:, or use parent: root`),
    )
  }
  // Each cycle once, at the parent: of its first member in the file.
  const reported = new Set<string>()
  for (const a of accounts) {
    if (reported.has(a.name)) continue
    const chain: string[] = []
    let cur: AccountSpec | undefined = a
    while (cur && cur.parent !== ROOT_ACCOUNT && !broken.has(cur.name) && !chain.includes(cur.name)) {
      chain.push(cur.name)
      cur = byName.get(cur.parent)
    }
    if (!cur || !chain.includes(cur.name)) continue
    const cycle = chain.slice(chain.indexOf(cur.name))
    if (cycle.some((n) => reported.has(n))) continue
    for (const n of cycle) reported.add(n)
    const first = accounts.find((x) => cycle.includes(x.name)) as AccountSpec
    const order = cycle.slice(cycle.indexOf(first.name)).concat(cycle.slice(0, cycle.indexOf(first.name)))
    const text = [...order, first.name].map((n) => `"${n}"`).join(' → ')
    const message =
      cycle.length === 1
        ? `account "${first.name}" cannot be its own parent; use parent: root or another account`
        : `parent links make a cycle (${text}); one of these accounts must have another parent, e.g. root`
    problems.push(yaml.problem(['accounts', first.name, 'parent'], message))
  }
}

function readUsers(yaml: YamlFile, accounts: AccountSpec[], problems: InputProblem[]): Record<string, string> {
  const out: Record<string, string> = {}
  const users = (yaml.value as {users?: unknown}).users
  if (!isPlainObject(users)) return out
  const accountsOf = new Map<string, string[]>()
  for (const a of accounts) for (const u of a.users) (accountsOf.get(u) ?? accountsOf.set(u, []).get(u)!).push(a.name)
  for (const name of keysOf(yaml.node(['users']))) {
    const path: YamlPath = ['users', name]
    const p = userNameProblem(name)
    if (p) {
      problems.push(yaml.problem(path, p))
      continue
    }
    const memberOf = accountsOf.get(name) ?? []
    if (memberOf.length === 0) {
      problems.push(yaml.problem(path, `user "${name}" is not in any account's users; add them to an account, or remove this entry`))
      continue
    }
    const body = users[name]
    if (body === null || body === undefined) continue
    const checked = userSchema.safeParse(body)
    if (!checked.success) {
      problems.push(...zodProblems(checked.error.issues, yaml, {prefix: path, keysAt}))
      continue
    }
    const def = checked.data.defaultAccount
    if (def === undefined) continue
    if (!memberOf.includes(def)) {
      problems.push(
        yaml.problem([...path, 'defaultAccount'], `"${def}" is not one of ${name}'s accounts (${memberOf.join(', ')}); ${suggestion(def, memberOf)}a default account must list the user`),
      )
      continue
    }
    out[name] = def
  }
  return out
}

/** Parents before children, otherwise the order written (valid once checkParents found nothing). */
function parentsFirst(accounts: AccountSpec[]): AccountSpec[] {
  const byName = new Map(accounts.map((a) => [a.name, a]))
  const out: AccountSpec[] = []
  const done = new Set<string>()
  const visit = (a: AccountSpec, depth: number): void => {
    if (done.has(a.name) || depth > accounts.length) return
    const parent = byName.get(a.parent)
    if (parent) visit(parent, depth + 1)
    done.add(a.name)
    out.push(a)
  }
  for (const a of accounts) visit(a, 0)
  return out
}
