// The Transport for this machine (the local provider: this machine is the management node).
// Commands go through tools/exec.ts; files through node:fs, written atomically (temp file in the
// same directory, fsync, chmod, rename over the target).
import {randomBytes} from 'node:crypto'
import {open, readFile, rename, stat, unlink} from 'node:fs/promises'
import {dirname, posix} from 'node:path'

import {remoteError} from '../errors.js'
import {run as exec} from '../tools/exec.js'
import {checkResult} from './check.js'
import type {RunOptions, RunResult, Transport} from './types.js'

/** RunOptions.timeoutMs's documented default. */
const DEFAULT_TIMEOUT_MS = 10 * 60_000
const DESCRIPTION = 'this machine'

const errCode = (error: unknown) => (error as NodeJS.ErrnoException)?.code

export function localTransport(): Transport {
  const run = (argv: string[], opts: RunOptions = {}): Promise<RunResult> => {
    if (argv.length === 0) throw new Error('run: empty argv')
    return exec(argv[0], argv.slice(1), {
      input: opts.stdin,
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      signal: opts.signal,
      onOutput: opts.onOutput,
      env: opts.env,
      stopIfCitcDies: opts.stopIfCitcDies,
    })
  }
  return {
    description: DESCRIPTION,
    run,
    check: async (argv, opts) => checkResult(argv, await run(argv, opts), DESCRIPTION),
    async readFile(path) {
      try {
        return await readFile(path)
      } catch (error) {
        if (errCode(error) === 'ENOENT') return undefined
        throw remoteError(`cannot read ${path} on ${DESCRIPTION}: ${(error as Error).message}`, {cause: error})
      }
    },
    writeFile: (path, data, opts) => writeFileAtomic(path, data, opts?.mode),
    async close() {},
  }
}

/** A hidden name next to the target (same filesystem, so the rename is atomic). Used by ssh/sftp.ts too. */
export function tempPathFor(path: string): string {
  return posix.join(posix.dirname(path), `.${posix.basename(path)}.citc-tmp-${randomBytes(6).toString('hex')}`)
}

async function writeFileAtomic(path: string, data: string | Buffer, mode?: number): Promise<void> {
  const tmp = tempPathFor(path)
  try {
    // Without a mode, keep the mode of the file being replaced (0644 for a new file).
    const finalMode = mode ?? (await stat(path).then((s) => s.mode & 0o7777, () => 0o644))
    const fh = await open(tmp, 'wx', 0o600)
    try {
      await fh.writeFile(data)
      await fh.chmod(finalMode) // explicit: open()'s mode is filtered by the umask
      await fh.sync()
    } finally {
      await fh.close()
    }
    await rename(tmp, path)
  } catch (error) {
    await unlink(tmp).catch(() => {})
    throw remoteError(`cannot write ${path} on ${DESCRIPTION}: ${(error as Error).message}`, {cause: error})
  }
  // Make the rename itself durable (best effort: not every filesystem lets a directory be fsynced).
  try {
    const dh = await open(dirname(path), 'r')
    await dh.sync().finally(() => dh.close())
  } catch {
    // ignore
  }
}
