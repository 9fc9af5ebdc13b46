// Error kinds and their exit codes: the one place where a failure becomes an exit status.
// Every error citc raises on purpose is a CitcError; anything else is "unexpected" (exit 1).

export const EXIT_CODES = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  invalidInput: 3,
  remote: 4,
  noCluster: 5,
  cancelled: 130,
} as const

export type ErrorKind = Exclude<keyof typeof EXIT_CODES, 'ok'>

export const EXIT_CODE_HELP = `EXIT CODES
  0    success
  1    unexpected error (a bug: please report it with --verbose output)
  2    usage error (unknown flag, missing argument, a flag value of the wrong type or range)
  3    invalid input (limits.yaml, cluster.yaml, users.yaml, SSH keys, a file a flag names); nothing was changed
  4    a remote step or tool failed (after any rollback)
  5    no such cluster
  130  cancelled (Ctrl-C, or a confirmation answered no)`

export class CitcError extends Error {
  readonly kind: ErrorKind
  readonly hint?: string
  /** Extra structured information for --json output (never secrets). */
  readonly details?: Record<string, unknown>

  constructor(kind: ErrorKind, message: string, opts: {hint?: string; details?: Record<string, unknown>; cause?: unknown} = {}) {
    super(message, opts.cause === undefined ? undefined : {cause: opts.cause})
    this.kind = kind
    this.hint = opts.hint
    this.details = opts.details
    this.name = 'CitcError'
  }

  get exitCode(): number {
    return EXIT_CODES[this.kind]
  }
}

export const usageError = (message: string, hint?: string) => new CitcError('usage', message, {hint})

/** A problem in user input, located at `where` (file:line:col, or a flag name). */
export interface InputProblem {
  where: string
  /** The path inside the file (e.g. shapes["c5.xlarge"].count), when the problem is in a file. */
  path?: string
  message: string
}

/** "limits.yaml:3:1 shapes["c5.xlarg"]: unknown shape …", or "--key: cannot read …". */
export const formatProblem = (p: InputProblem) => (p.path ? `${p.where} ${p.path}: ${p.message}` : `${p.where}: ${p.message}`)

export class InvalidInputError extends CitcError {
  readonly problems: InputProblem[]
  constructor(problems: InputProblem[], hint?: string) {
    super('invalidInput', problems.map(formatProblem).join('\n'), {
      hint,
      details: {problems},
    })
    this.problems = problems
  }
}

export const remoteError = (message: string, opts: {hint?: string; details?: Record<string, unknown>; cause?: unknown} = {}) =>
  new CitcError('remote', message, opts)

export const noSuchCluster = (name: string) =>
  new CitcError('noCluster', `no cluster named "${name}"`, {hint: 'run `citc cluster list` to see the clusters citc knows'})

export const cancelled = (message = 'cancelled') => new CitcError('cancelled', message)

/**
 * A hint with the exact command that retries. Lower layers (Terraform, the management node's setup)
 * end their hints with a generic "then run `citc create --resume`"; the workflow that caught the error
 * knows the cluster's name, so that phrase is replaced, never repeated.
 */
export function withRetry(hint: string | undefined, retry: string): string {
  const own = (hint ?? '')
    .replace(/[,;]?\s*(?:then\s+|or wait and\s+)?run `citc (?:create|destroy)[^`]*`(?: again)?(?: \([^)]*\))?\.?\s*$/, '')
    .trim()
  return own ? `${own}; then ${retry}` : retry
}
