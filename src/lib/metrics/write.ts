// citc.prom into node_exporter's textfile directory, atomically: a temporary file in the same
// directory (same filesystem, so rename replaces in one step), fsynced, renamed over the old one.
// node_exporter only reads *.prom, so it never sees the half-written temporary file. nodes.json and
// node-events.json are written the same way (writeAtomic).
import {chmodSync, closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'

export const PROM_FILE = 'citc.prom'

/**
 * A temporary file in the same directory (same filesystem, so the rename replaces in one step), fsynced,
 * renamed over `file`: readers (node_exporter, Prometheus's file_sd, the next run) never see half a
 * file. Mode 0644 whatever the umask: node_exporter and Prometheus run as their own user.
 */
export function writeAtomic(file: string, text: string) {
  const tmp = `${file}.${process.pid}.tmp`
  try {
    const fd = openSync(tmp, 'w', 0o644)
    try {
      writeSync(fd, text)
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    chmodSync(tmp, 0o644)
    renameSync(tmp, file)
  } catch (e) {
    rmSync(tmp, {force: true})
    throw new Error(`cannot write ${file}: ${(e as Error).message} (is ${dirname(file)} a directory citc may write to?)`)
  }
}

/** Write `text` as <dir>/citc.prom (node_exporter reads only *.prom: never the temporary file); returns the path. */
export function writePromFile(dir: string, text: string): string {
  const file = join(dir, PROM_FILE)
  writeAtomic(file, text)
  return file
}

/** The file the last cycle wrote, or undefined when there is none yet. */
export function readPromFile(dir: string): string | undefined {
  try {
    return readFileSync(join(dir, PROM_FILE), 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw e
  }
}
