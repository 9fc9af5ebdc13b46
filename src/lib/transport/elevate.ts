// A Transport that runs everything as root through a prefix (`sudo -n` on cloud images, whose login
// user has passwordless sudo): for the management node of a cloud cluster, where citc logs in as
// ubuntu/admin but configures the machine as root.
//
// - Commands: prefix + `env K=V …` + argv (sudo resets the environment, so variables travel in argv;
//   secrets still travel on stdin, never in argv).
// - writeFile: the bytes go by the inner transport (SFTP, as the login user) to a private temp file,
//   then, as root, into a temp file next to the target, chmod, and rename(2) over it: atomic as the
//   plain transports are. The login user's temp file is removed in every case.
// - readFile: `cat` as root (for text files: configuration, keys in PEM; binary content is not kept).
import {posix} from 'node:path'

import {remoteError} from '../errors.js'
import {checkResult} from './check.js'
import type {RunOptions, RunResult, Transport} from './types.js'

export const SUDO_PREFIX = ['sudo', '-n'] as const
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** Exit status of the read script when the file does not exist. */
const ABSENT = 3

/** argv run as root: prefix, then `env K=V …` when there is an environment, then argv. */
export function elevatedArgv(prefix: readonly string[], argv: string[], env?: Record<string, string>): string[] {
  const vars = Object.entries(env ?? {})
  const bad = vars.find(([k]) => !ENV_NAME.test(k))
  if (bad) throw new Error(`invalid environment variable name "${bad[0]}"`)
  // `env` would take a first word with "=" for one more variable, not for the command.
  if (vars.length > 0 && argv[0]?.includes('=')) throw new Error('with env, argv[0] cannot contain "="')
  return [...prefix, ...(vars.length > 0 ? ['env', ...vars.map(([k, v]) => `${k}=${v}`)] : []), ...argv]
}

/** The root side of writeFile: copy `src` to a temp file beside `dest`, set the mode, rename over dest. */
const INSTALL_SCRIPT = [
  'set -e',
  'dest=$1; src=$2; mode=$3',
  'if [ -z "$mode" ]; then if [ -e "$dest" ]; then mode=$(stat -c %a "$dest"); else mode=644; fi; fi',
  'tmp=$(mktemp "$(dirname "$dest")/.$(basename "$dest").citc-tmp-XXXXXX")',
  'trap \'rm -f "$tmp"\' EXIT',
  'cat "$src" > "$tmp"',
  'chmod "$mode" "$tmp"',
  'sync "$tmp" 2>/dev/null || true',
  'mv -f "$tmp" "$dest"',
  'trap - EXIT',
].join('\n')

const READ_SCRIPT = `if [ -e "$1" ]; then exec cat "$1"; else exit ${ABSENT}; fi`

/**
 * `inner` as root through `prefix`. With an empty prefix (the login user is root) it is `inner` itself.
 * `label` says so in messages, e.g. "ubuntu@203.0.113.5:22 (sudo)".
 */
export function elevated(inner: Transport, prefix: readonly string[] = SUDO_PREFIX): Transport {
  if (prefix.length === 0) return inner
  const description = `${inner.description} (${prefix[0]})`
  const run = (argv: string[], opts: RunOptions = {}): Promise<RunResult> => {
    const {env, ...rest} = opts
    return inner.run(elevatedArgv(prefix, argv, env), rest)
  }
  return {
    description,
    run,
    check: async (argv, opts) => checkResult(argv, await run(argv, opts), description),
    async readFile(path) {
      const r = await run(['sh', '-c', READ_SCRIPT, 'sh', path], {timeoutMs: 120_000})
      if (r.exitCode === ABSENT) return undefined
      if (r.exitCode !== 0) throw remoteError(`cannot read ${path} on ${description}: ${(r.stderr || r.stdout).trim()}`)
      return Buffer.from(r.stdout, 'utf8')
    },
    async writeFile(path, data, opts = {}) {
      const made = await inner.run(['mktemp', '-d', '/tmp/citc-upload.XXXXXXXX'], {timeoutMs: 60_000})
      if (made.exitCode !== 0) throw remoteError(`cannot make a temp directory on ${inner.description}: ${made.stderr.trim()}`)
      const dir = made.stdout.trim()
      try {
        const staged = posix.join(dir, 'data')
        await inner.writeFile(staged, data, {mode: 0o600})
        const mode = opts.mode === undefined ? '' : (opts.mode & 0o7777).toString(8)
        const argv = ['sh', '-c', INSTALL_SCRIPT, 'sh', path, staged, mode]
        checkResult(argv, await run(argv, {timeoutMs: 120_000}), description)
      } finally {
        await inner.run(['rm', '-rf', dir], {timeoutMs: 60_000}).catch(() => {})
      }
    },
    close: () => inner.close(),
  }
}
