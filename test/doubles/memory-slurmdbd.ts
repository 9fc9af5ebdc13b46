// A slurmdbd held in memory, behind a MemoryTransport's sacctmgr: it answers the queries citc reads
// accounts with (sacctmgr-state.ts, tres, qos) from an AccountingState, takes `sacctmgr load` files as
// sacctmgr reads them (sacctmgr-load-file.ts: a bad line loads nothing, exit 1; a Parent line naming a
// missing account loads what came before it, exit 1 — both seen on slurmdbd 22.05) and `modify
// account`, and changes the state as slurmdbd 22.05 does (test/lib/accounts/apply-state.ts). `ignore`
// is the fault a verify step exists for: a change sacctmgr accepts (exit 0) and slurmdbd does not keep.
import {type AccountOp, type Change} from '../../src/lib/accounts/ops.js'
import {ASSOC_FIELDS} from '../../src/lib/accounts/sacctmgr-state.js'
import type {AccountingState, AccountState} from '../../src/lib/accounts/types.js'
import {formatMinutes, formatTresList, parseTresList} from '../../src/lib/accounts/values.js'
import {applyToState} from '../lib/accounts/apply-state.js'
import type {MemoryTransport} from './memory-transport.js'
import {LoadFileError, type LoadLine, readLoadFile} from './sacctmgr-load-file.js'

const LIMIT_KEYS: Record<string, string> = {
  grptresmins: 'GrpTRESMins',
  grptres: 'GrpTRES',
  maxjobs: 'MaxJobs',
  maxsubmitjobs: 'MaxSubmitJobs',
  maxwalldurationperjob: 'MaxWall',
  maxwall: 'MaxWall',
  fairshare: 'Fairshare',
  qos: 'QOS',
  description: 'Description',
  organization: 'Organization',
}

export class MemorySlurmdbd {
  state: AccountingState
  /** Every operation slurmdbd kept, in order. */
  readonly kept: AccountOp[] = []
  /** The fault: an operation sacctmgr accepts (exit 0) that slurmdbd does not keep. */
  ignore: (op: AccountOp) => boolean = () => false

  constructor(
    state: AccountingState,
    readonly o: {tres: readonly string[]; qos: readonly string[]},
  ) {
    this.state = state
  }

  /** Answer sacctmgr (and mktemp, for load's file) on `t`. */
  attach(t: MemoryTransport): MemoryTransport {
    let temp = 0
    return t
      .on(['mktemp'], () => ({stdout: `/tmp/citc-accounts-load.${++temp}\n`}))
      .on((argv) => argv.includes('sacctmgr'), (argv, _opts, node) => this.sacctmgr(argv.slice(argv.indexOf('sacctmgr') + 1), node))
  }

  private sacctmgr(args: string[], node: MemoryTransport): {stdout?: string; stderr?: string; exitCode?: number} {
    const words = args.filter((a) => !a.startsWith('-'))
    const [verb, what] = words
    if (verb === 'show') return {stdout: this.show(what, args)}
    if (verb === 'load') {
      const path = (words.find((w) => w.startsWith('file=')) ?? '').slice(5)
      const text = node.text(path)
      if (text === undefined) return {exitCode: 1, stderr: ` Unable to read "${path}": No such file or directory\n`}
      let read: {ops: AccountOp[]; stop?: string}
      try {
        read = this.loadOps(readLoadFile(text))
      } catch (error) {
        if (error instanceof LoadFileError) return {exitCode: 1, stderr: `${error.message}\n`}
        throw error
      }
      this.keep(read.ops)
      return read.stop ? {exitCode: 1, stderr: `${read.stop}\n`} : {stdout: ' Done adding cluster\n'}
    }
    if (verb === 'modify' && what === 'account') {
      const name = (words.find((w) => w.startsWith('name=')) ?? '').slice(5)
      const set = words.slice(words.indexOf('set') + 1)
      const changes = set.flatMap((kv) => this.changes(kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)))
      this.keep([{op: 'modifyAccount', account: name, changes}])
      return {stdout: ' Modified account associations...\n'}
    }
    return {exitCode: 1, stderr: `the slurmdbd in memory does not know: sacctmgr ${args.join(' ')}`}
  }

  private keep(ops: AccountOp[]): void {
    const kept = ops.filter((op) => !this.ignore(op))
    this.state = applyToState(this.state, kept)
    this.kept.push(...kept)
  }

  /** A limit or text option as the plan's Changes (values as sacctmgr takes them). */
  private changes(key: string, value: string, line?: number): Change[] {
    const field = LIMIT_KEYS[key.toLowerCase()]
    const bad = () => new LoadFileError(` Unknown option: ${key}=${value}${line ? `\n Problem with line(${line})` : ''}`, line)
    if (!field) throw bad()
    if (field === 'GrpTRESMins' || field === 'GrpTRES') {
      const tres = parseTresList(value)
      if (!tres || Object.keys(tres).some((t) => !this.o.tres.includes(t))) throw bad()
      return Object.entries(tres).map(([t, n]) => ({field, tres: t, ...(n < 0 ? {} : {to: String(n)})}))
    }
    if (field === 'Description' || field === 'Organization') return [{field, to: value}]
    if (field === 'QOS') {
      if (value !== '' && value.split(',').some((q) => !this.o.qos.includes(q))) throw bad()
      return [{field, ...(value === '' ? {} : {to: value.split(',').sort().join(',')})}]
    }
    if (field === 'Fairshare' && value === 'parent') return [{field, to: 'parent'}]
    if (field === 'MaxWall' && /^\d+$/.test(value)) return [{field, to: formatMinutes(Number(value))}]
    if (field === 'MaxWall' && /^(\d+-)?\d+:\d+:\d+$/.test(value)) return [{field, to: value}]
    if (!/^-?\d+$/.test(value)) throw bad()
    return [{field, ...(Number(value) < 0 ? {} : {to: value})}]
  }

  /**
   * A load file's lines as the operations slurmdbd does for them (every line read first). A Parent
   * line naming an account slurmdbd does not have stops the reading, and what was read before it is
   * added all the same (`stop`: sacctmgr's message; it exits 1) — as sacctmgr 22.05 does.
   */
  private loadOps(lines: LoadLine[]): {ops: AccountOp[]; stop?: string} {
    const ops: AccountOp[] = []
    const known = new Set(this.state.accounts.map((a) => a.name))
    let parent = 'root'
    for (const l of lines) {
      if (l.object === 'Cluster') continue
      if (l.object === 'Parent') {
        if (!known.has(l.name)) return {ops, stop: ` line(${l.line}) You need to add this parent (${l.name}) as a child before you can add children to it.`}
        parent = l.name
      } else if (l.object === 'Account') {
        const changes = Object.entries(l.options).flatMap(([k, v]) => this.changes(k, v, l.line))
        const text = (field: string) => changes.find((c) => c.field === field)?.to
        const description = text('Description')
        const organisation = text('Organization')
        ops.push({
          op: 'addAccount',
          account: l.name,
          parent,
          ...(description === undefined ? {} : {description}),
          ...(organisation === undefined ? {} : {organisation}),
          limits: changes.filter((c) => c.field !== 'Description' && c.field !== 'Organization'),
        })
        known.add(l.name)
      } else if (l.object === 'User') {
        const defaultAccount = l.options.DefaultAccount
        ops.push({op: 'addUser', user: l.name, account: parent, ...(defaultAccount ? {defaultAccount} : {})})
      } else {
        throw new LoadFileError(` Misformatted line(${l.line})`, l.line)
      }
    }
    return {ops}
  }

  private show(what: string, args: string[]): string {
    const s = this.state
    if (what === 'tres') return this.o.tres.map((t) => (t.includes('/') ? t.replace('/', '|') : `${t}|`)).join('\n') + '\n'
    if (what === 'qos') return this.o.qos.join('\n') + '\n'
    if (what === 'account') return Object.entries(s.accountTexts).map(([n, t]) => `${n}|${t.description}|${t.organisation}`).join('\n') + '\n'
    if (what === 'user') return Object.entries(s.defaultAccounts).map(([u, d]) => `${u}|${d}`).join('\n') + '\n'
    if (what === 'assoc' && args.includes('WOPLimits')) return s.accounts.flatMap((a) => [assocRow(a), ...a.users.map((u) => userRow(a, u))]).join('\n') + '\n'
    throw new Error(`the slurmdbd in memory does not show ${what}: ${args.join(' ')}`)
  }
}

/** An account's row of `show assoc … WOPLimits` (ASSOC_FIELDS), as sacctmgr prints it. */
function assocRow(a: AccountState): string {
  const l = a.limits
  const f: Record<(typeof ASSOC_FIELDS)[number], string> = {
    Account: a.name,
    User: '',
    Partition: '',
    ParentName: a.parent,
    Fairshare: String(l.fairshare ?? 1),
    GrpTRESMins: l.grpTRESMins ? formatTresList(l.grpTRESMins) : '',
    GrpTRES: l.grpTRES ? formatTresList(l.grpTRES) : '',
    MaxJobs: l.maxJobs === undefined ? '' : String(l.maxJobs),
    MaxSubmitJobs: l.maxSubmitJobs === undefined ? '' : String(l.maxSubmitJobs),
    MaxWall: l.maxWall === undefined ? '' : formatMinutes(l.maxWall),
    QOS: l.qos ? l.qos.join(',') : '',
  }
  return ASSOC_FIELDS.map((k) => f[k]).join('|')
}

const userRow = (a: AccountState, user: string): string => ASSOC_FIELDS.map((k) => (k === 'Account' ? a.name : k === 'User' ? user : k === 'Fairshare' ? '1' : '')).join('|')
