// Slurm accounting associations for citc's users, through a Transport: sacctmgr as argv, against the
// cluster's slurm.conf (SLURM_CONF), run as root on the management node where slurmdbd answers.
import {remoteError} from '../errors.js'
import {shellQuote} from '../shell-quote.js'
import type {RunResult, Transport} from '../transport/types.js'

const SACCTMGR_TIMEOUT_MS = 60_000

export class Accounting {
  constructor(
    readonly transport: Transport,
    /** slurm.conf on the node (SLURM_CONF); undefined: sacctmgr's own default. */
    readonly confPath?: string,
  ) {}

  argv(args: string[]): string[] {
    return this.confPath ? ['env', `SLURM_CONF=${this.confPath}`, 'sacctmgr', ...args] : ['sacctmgr', ...args]
  }

  /** Run `sacctmgr ARGS`; a non-zero exit is a remote error naming the command and its last lines. */
  async sacctmgr(args: string[], signal?: AbortSignal): Promise<RunResult> {
    const argv = this.argv(args)
    const r = await this.transport.run(argv, {timeoutMs: SACCTMGR_TIMEOUT_MS, signal})
    if (r.exitCode !== 0) {
      const out = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-5).join('\n')
      throw remoteError(`sacctmgr failed on ${this.transport.description} (exit ${r.exitCode}): ${shellQuote(argv)}${out ? `\n${out}` : ''}`, {
        hint: 'is slurmdbd running on the management node, and is accounting (AccountingStorageType=accounting_storage/slurmdbd) configured?',
        details: {exitCode: r.exitCode},
      })
    }
    return r
  }

  /** Rows of `sacctmgr -n -P show …` split on "|". */
  async show(args: string[], signal?: AbortSignal): Promise<string[][]> {
    const r = await this.sacctmgr(['-n', '-P', 'show', ...args], signal)
    return r.stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.split('|'))
  }

  async accountExists(account: string, signal?: AbortSignal): Promise<boolean> {
    const rows = await this.show(['account', 'where', `name=${account}`, 'format=account'], signal)
    return rows.some((r) => r[0] === account)
  }

  /** Every account slurmdbd holds (Slurm's own "root" included), as sacctmgr lists them. */
  async accounts(signal?: AbortSignal): Promise<string[]> {
    const rows = await this.show(['account', 'format=account'], signal)
    return [...new Set(rows.map((r) => r[0]).filter(Boolean))]
  }

  async addAccount(account: string, description: string, signal?: AbortSignal): Promise<void> {
    await this.sacctmgr(['-i', 'add', 'account', account, `Description=${description}`, `Organization=${account}`], signal)
  }

  /** The accounts the user has associations with. */
  async userAccounts(username: string, signal?: AbortSignal): Promise<string[]> {
    const rows = await this.show(['association', 'where', `user=${username}`, 'format=account'], signal)
    return [...new Set(rows.map((r) => r[0]).filter(Boolean))]
  }

  async addUser(username: string, account: string, signal?: AbortSignal): Promise<void> {
    await this.sacctmgr(['-i', 'add', 'user', username, `Account=${account}`, `DefaultAccount=${account}`], signal)
  }

  async deleteUser(username: string): Promise<void> {
    await this.sacctmgr(['-i', 'delete', 'user', 'where', `name=${username}`])
  }

  async deleteAccount(account: string): Promise<void> {
    await this.sacctmgr(['-i', 'delete', 'account', 'where', `name=${account}`])
  }

  /** Each Slurm user's default account. */
  async defaultAccounts(signal?: AbortSignal): Promise<Map<string, string>> {
    const rows = await this.show(['user', 'format=user,defaultaccount'], signal)
    return new Map(rows.filter((r) => r[0]).map((r) => [r[0], r[1] ?? '']))
  }
}
