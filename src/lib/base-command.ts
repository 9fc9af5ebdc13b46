// The base of every citc command: shared flags, error → exit code, and the renderer policy.
import {Command, Errors, Flags, Interfaces} from '@oclif/core'
import chalk from 'chalk'

import {CitcError, EXIT_CODES} from './errors.js'
import type {Io, RendererName} from './io.js'

export type BaseFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>

export type {RendererName} from './io.js'

export function rendererPolicy(opts: {json: boolean; verbose: boolean; tty: boolean; ci: boolean}): RendererName {
  if (opts.json) return 'silent'
  if (opts.verbose) return 'verbose'
  if (!opts.tty || opts.ci) return 'simple'
  return 'default'
}

/** `--wait`, for the commands that hold the cluster's lock (cluster/lock.ts) while they change it. */
export const waitFlag = Flags.boolean({default: false, description: 'if another citc command holds the cluster, wait for it instead of refusing'})

const isCi = () => Boolean(process.env.CI) && process.env.CI !== 'false' && process.env.CI !== '0'

export abstract class BaseCommand<T extends typeof Command> extends Command {
  static enableJsonFlag = true

  static baseFlags = {
    cluster: Flags.string({
      char: 'c',
      env: 'CITC_CLUSTER',
      description: 'name of the cluster to act on (default: the only cluster citc knows)',
      helpGroup: 'GLOBAL',
    }),
    yes: Flags.boolean({char: 'y', default: false, description: 'answer yes to every confirmation; take defaults for every question', helpGroup: 'GLOBAL'}),
    verbose: Flags.boolean({default: false, description: 'print every step and the full output of remote tools', helpGroup: 'GLOBAL'}),
  }

  protected flags!: BaseFlags<T>
  protected args!: Interfaces.InferredArgs<T['args']>
  /** Every argument given, in order (a command with `strict = false` takes any number). */
  protected argList!: string[]

  public async init(): Promise<void> {
    await super.init()
    const {args, argv, flags} = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (this.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    })
    this.flags = flags as BaseFlags<T>
    this.args = args as Interfaces.InferredArgs<T['args']>
    this.argList = argv as string[]
  }

  /** The renderer for task lists of this run. */
  protected renderer(): RendererName {
    return rendererPolicy({
      json: this.jsonEnabled(),
      verbose: Boolean(this.flags?.verbose),
      tty: Boolean(process.stdout.isTTY && process.stdin.isTTY),
      ci: isCi(),
    })
  }

  /** True when prompts may be shown: a TTY on both ends, not CI, not --json. */
  protected interactive(): boolean {
    return Boolean(process.stdin.isTTY && process.stdout.isTTY) && !isCi() && !this.jsonEnabled()
  }

  /** The command's I/O for workflows in src/lib/tasks. */
  io(): Io {
    return {
      log: (m) => this.log(m),
      note: (m) => {
        if (!this.jsonEnabled()) process.stderr.write(m + '\n')
      },
      json: this.jsonEnabled(),
      interactive: this.interactive(),
      yes: Boolean(this.flags?.yes),
      renderer: this.renderer(),
    }
  }

  protected async catch(err: Error & {exitCode?: number}): Promise<never> {
    // this.exit(n) (a remote command's code, doctor's verdict): the command has said all it had to.
    if (err instanceof Errors.ExitError) throw err
    const code = reportError(err, {json: this.jsonEnabled(), verbose: Boolean(this.flags?.verbose), writeJson: (doc) => this.logJson(doc)})
    throw new Errors.ExitError(code)
  }
}

/**
 * How every citc failure is shown: one JSON error document under --json, else `Error:` and `Try:`
 * on stderr (the stack too for an unexpected error with --verbose). Returns the exit code.
 */
export function reportError(err: Error & {exitCode?: number}, o: {json: boolean; verbose: boolean; writeJson: (doc: object) => void}): number {
  const {code, kind, hint, details} = classify(err)
  if (o.json) {
    o.writeJson({error: {kind, message: err.message, exitCode: code, ...(hint ? {hint} : {}), ...(details ?? {})}})
  } else {
    process.stderr.write(`${chalk.red('Error:')} ${err.message}\n`)
    if (hint) process.stderr.write(`${chalk.yellow('Try:')} ${hint}\n`)
    if (code === EXIT_CODES.unexpected && err.stack && o.verbose) process.stderr.write(`${err.stack}\n`)
  }
  return code
}

/** Maps any error to its kind, exit code and hint. */
export function classify(err: Error & {exitCode?: number; oclif?: {exit?: number}}): {
  code: number
  kind: string
  hint?: string
  details?: Record<string, unknown>
} {
  if (err instanceof CitcError) return {code: err.exitCode, kind: err.kind, hint: err.hint, details: err.details}
  if (err instanceof Errors.ExitError) return {code: err.oclif.exit ?? 1, kind: 'exit'}
  if (err.name === 'ExitPromptError' || err.name === 'AbortPromptError') return {code: EXIT_CODES.cancelled, kind: 'cancelled'}
  // Parse errors from oclif (unknown flags, missing args, bad option values), and a flag's own
  // parser refusing its value (Flags.integer with min/max: "Parsing --port …").
  if ((err.constructor?.name?.endsWith('Error') && 'parse' in err) || (err instanceof Errors.CLIError && /^Parsing --[\w-]+ /.test(err.message))) {
    return {code: EXIT_CODES.usage, kind: 'usage', hint: 'see --help for the flags and arguments this command takes'}
  }
  return {code: EXIT_CODES.unexpected, kind: 'unexpected', hint: 'run again with --verbose and report the output'}
}
