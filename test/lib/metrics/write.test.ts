import {mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {PROM_FILE, readPromFile, writePromFile} from '../../../src/lib/metrics/write.js'

const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'citc-textfile-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

describe('writePromFile', () => {
  it('replaces citc.prom whole, readable by node_exporter, and leaves no temporary file', () => {
    const dir = tempDir()
    writeFileSync(join(dir, PROM_FILE), 'old 1\n')
    const file = writePromFile(dir, 'citc_slurm_up 1\n')
    expect(file).toBe(join(dir, PROM_FILE))
    expect(readFileSync(file, 'utf8')).toBe('citc_slurm_up 1\n')
    expect(statSync(file).mode & 0o777).toBe(0o644)
    expect(readdirSync(dir)).toEqual([PROM_FILE])
    expect(readPromFile(dir)).toBe('citc_slurm_up 1\n')
  })

  it('renames a temporary file of the same directory over it (never a .prom until complete)', () => {
    const dir = tempDir()
    writePromFile(dir, 'a 1\n')
    const inode = statSync(join(dir, PROM_FILE)).ino
    writePromFile(dir, 'a 2\n')
    // A new inode: a rename, not a rewrite in place (node_exporter could read a half-written file).
    expect(statSync(join(dir, PROM_FILE)).ino).not.toBe(inode)
  })

  it('says which directory it cannot write, and leaves nothing behind', () => {
    const dir = tempDir()
    expect(() => writePromFile(join(dir, 'missing'), 'a 1\n')).toThrow(/cannot write .*missing\/citc\.prom.*directory/)
    expect(readdirSync(dir)).toEqual([])
  })

  it('reads no previous file as undefined', () => {
    expect(readPromFile(tempDir())).toBeUndefined()
  })
})
