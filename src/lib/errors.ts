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

/**
 * A "Try:" hint in parts, so that no layer has to take another's words apart. `fix` is what to do
 * about the cause; `retry` is how to try again as far as the layer that failed knows it ("then run
 * `citc create --resume`"): the workflow that caught the error knows the exact command and puts it
 * in its place (withRetry). `log` is the file with the full output.
 */
export interface Hint {
  fix?: string
  retry?: string
  log?: string
}

/** A hint as people read it: "fix, retry (full output: log)". */
export function hintText(h: Hint): string | undefined {
  const text = [h.fix, h.retry].filter(Boolean).join(', ')
  const log = h.log ? `(full output: ${h.log})` : ''
  return [text, log].filter(Boolean).join(' ') || undefined
}

export interface CitcErrorOptions {
  /** Plain text is all `fix`. */
  hint?: string | Hint
  details?: Record<string, unknown>
  cause?: unknown
}

export class CitcError extends Error {
  readonly kind: ErrorKind
  /** The hint as people (and --json) read it. */
  readonly hint?: string
  /** The same hint in its parts (see Hint). */
  readonly hintParts: Hint
  /** Extra structured information for --json output (never secrets). */
  readonly details?: Record<string, unknown>

  constructor(kind: ErrorKind, message: string, opts: CitcErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : {cause: opts.cause})
    this.kind = kind
    this.hintParts = typeof opts.hint === 'string' ? {fix: opts.hint} : {...opts.hint}
    this.hint = hintText(this.hintParts)
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
const formatProblem = (p: InputProblem) => (p.path ? `${p.where} ${p.path}: ${p.message}` : `${p.where}: ${p.message}`)

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

export const remoteError = (message: string, opts: CitcErrorOptions = {}) => new CitcError('remote', message, opts)

/**
 * The server's host key is not the one citc pinned: the connection was refused before logging in.
 * Never retried (it will not get better, and may be an attack) and never accepted.
 */
export class HostKeyMismatchError extends CitcError {
  constructor(
    readonly where: string,
    readonly expectedFingerprint: string,
    readonly receivedFingerprint: string,
    readonly algorithm: string,
  ) {
    super(
      'remote',
      `the host key of ${where} does not match the pinned key (it changed): refusing to connect\n` +
        `  expected ${expectedFingerprint}\n  received ${receivedFingerprint} (${algorithm})`,
      {
        hint:
          'if the machine was rebuilt, check its new key on the machine itself (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub) ' +
          'before registering it again; otherwise someone may be intercepting the connection',
        details: {expectedFingerprint, receivedFingerprint, algorithm},
      },
    )
  }
}

export const noSuchCluster = (name: string) =>
  new CitcError('noCluster', `no cluster named "${name}"`, {hint: 'run `citc cluster list` to see the clusters citc knows'})

export const cancelled = (message = 'cancelled') => new CitcError('cancelled', message)

/**
 * A hint with the exact command that retries: the failed layer's own `retry` (its generic "then run
 * `citc create --resume`") gives way to `retry`, which the workflow that caught the error knows.
 */
export function withRetry(error: CitcError, retry: string): string {
  const {fix, log} = error.hintParts
  const own = hintText({fix, log})
  return own ? `${own}; then ${retry}` : retry
}
