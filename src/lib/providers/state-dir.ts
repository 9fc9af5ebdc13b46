// The node programs' own state on a management node (role common makes it: owner the Slurm user, 0700):
// what they keep between runs — Oracle's session token (oracle/session-cache.ts), cluster.json as checked
// (tasks/node/checked-once.ts). A stand-in's driver.stateDir stands in for it (src/lib/stand-in.ts).
// Its files are this user's alone: written 0600 (a temp file, then renamed over), and read back only
// when nobody else may read or write them. node:fs and node:crypto only.
import {randomBytes} from 'node:crypto'
import {closeSync, fstatSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'

export const NODE_PROGRAMS_STATE_DIR = '/var/lib/citc/node-programs'

/** A state file's JSON, if it is a file of this user's alone that parses; else undefined (never an error). */
export function readPrivateJson(file: string): unknown {
  let fd: number
  try {
    fd = openSync(file, 'r')
  } catch {
    return undefined
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile() || (st.mode & 0o077) !== 0 || (process.getuid && st.uid !== process.getuid())) return undefined
    return JSON.parse(readFileSync(fd, 'utf8')) as unknown
  } catch {
    return undefined
  } finally {
    closeSync(fd)
  }
}

/**
 * Write a state file 0600, replacing it atomically (its directory made 0700 if missing). False when it
 * cannot be written: the state is only not kept, never an error.
 */
export function writePrivateJson(file: string, value: unknown): boolean {
  const tmp = `${file}.${randomBytes(6).toString('hex')}`
  try {
    mkdirSync(dirname(file), {recursive: true, mode: 0o700})
    const fd = openSync(tmp, 'wx', 0o600)
    try {
      writeSync(fd, `${JSON.stringify(value)}\n`)
    } finally {
      closeSync(fd)
    }
    renameSync(tmp, file)
    return true
  } catch {
    try {
      rmSync(tmp, {force: true})
    } catch {
      // no directory to leave a temp file in
    }
    return false
  }
}
