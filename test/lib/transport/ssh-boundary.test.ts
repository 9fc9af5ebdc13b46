// House rule: only the SSH transport's own folder imports ssh2 (the rest of citc sees a Transport).
import {readdirSync, readFileSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'

const SRC = join(import.meta.dirname, '../../../src')

function sources(dir: string): string[] {
  return readdirSync(dir, {withFileTypes: true}).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []))
}

describe('ssh2', () => {
  it('is imported only under src/lib/transport/ssh/', () => {
    const importers = sources(SRC)
      .filter((f) => /from ['"]ssh2['"]|import\(['"]ssh2['"]\)|require\(['"]ssh2['"]\)/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f))
    expect(importers.length).toBeGreaterThan(0)
    expect(importers.filter((f) => !f.startsWith('lib/transport/ssh/'))).toEqual([])
  })
})
