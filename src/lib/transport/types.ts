// How citc reaches a management node: over SSH (clouds, registered clusters) or on this machine (local).
// Commands are argv arrays; when a shell is needed on the far side, shellQuote() in ../shell-quote.ts builds the line.

export interface RunOptions {
  /** Bytes fed to the command's stdin (secrets go here, never in argv). */
  stdin?: string | Buffer
  /** Give up after this long (the remote process is signalled). Default 10 minutes. */
  timeoutMs?: number
  /** Called with each chunk of output as it arrives (for task output and logs). */
  onOutput?: (chunk: string, stream: 'stdout' | 'stderr') => void
  /** Cancel: the remote process is signalled and run() rejects. */
  signal?: AbortSignal
  /** Extra environment for the command. */
  env?: Record<string, string>
  /**
   * On this machine: stop the command's process group even when citc itself is killed (tools/exec.ts's
   * reaper), for commands that change the machine (ansible-playbook, packer). Ignored over SSH: there
   * the remote command's fate is the connection's.
   */
  stopIfCitcDies?: boolean
}

export interface RunResult {
  stdout: string
  stderr: string
  exitCode: number
}

export interface Transport {
  /** Human description for messages, e.g. "root@203.0.113.5:22" or "this machine". */
  readonly description: string
  /** Run argv; resolves with the exit code (never rejects on a non-zero exit: check exitCode). */
  run(argv: string[], opts?: RunOptions): Promise<RunResult>
  /** Run argv and reject with a CitcError('remote') carrying stderr when it exits non-zero. */
  check(argv: string[], opts?: RunOptions): Promise<RunResult>
  /** Read a whole remote file; undefined if it does not exist. */
  readFile(path: string): Promise<Buffer | undefined>
  /**
   * Write a remote file atomically: the bytes go to a temporary file in the same directory,
   * are flushed, then renamed over `path`. An interrupted upload leaves `path` untouched.
   */
  writeFile(path: string, data: string | Buffer, opts?: {mode?: number}): Promise<void>
  close(): Promise<void>
}
