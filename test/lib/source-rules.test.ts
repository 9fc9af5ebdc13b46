// House rules over src/ as text: no module writes process.env (a test seam goes through the stand-in,
// src/lib/stand-in.ts; an SDK's own variable is set by whoever starts the process), and questions go
// through Io (src/lib/io.ts is the only importer of @inquirer/prompts). Comments are skipped.
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

const SRC = join(import.meta.dirname, '..', '..', 'src')

const sources = readdirSync(SRC, {recursive: true, encoding: 'utf8'})
  .filter((f) => f.endsWith('.ts'))
  .map((f) => ({file: `src/${f.split('\\').join('/')}`, text: readFileSync(join(SRC, f), 'utf8')}))

/** Code lines (comments dropped), numbered. */
function codeLines(text: string): Array<{n: number; line: string}> {
  const out: Array<{n: number; line: string}> = []
  let inBlock = false
  text.split('\n').forEach((raw, i) => {
    let line = raw
    if (inBlock) {
      const end = line.indexOf('*/')
      if (end < 0) return
      line = line.slice(end + 2)
      inBlock = false
    }
    line = line.replace(/\/\*.*?\*\//g, '')
    const start = line.indexOf('/*')
    if (start >= 0) {
      inBlock = true
      line = line.slice(0, start)
    }
    line = line.replace(/(^|[^:'"`])\/\/.*$/, '$1')
    if (line.trim()) out.push({n: i + 1, line})
  })
  return out
}

/** `process.env.X = …`, `process.env[k] = …` (also ??=, ||=, +=…), `delete process.env…`, Object.assign(process.env, …). */
const ENV_WRITE = /process\.env(?:\.[A-Za-z_$][\w$]*|\[[^\]]+\])\s*(?:[-+*/?|&]{0,3})=(?!=)|delete\s+process\.env\b|Object\.assign\(\s*process\.env\b/

function offenders(test: (line: string, file: string) => boolean): string[] {
  return sources.flatMap(({file, text}) => codeLines(text).filter(({line}) => test(line, file)).map(({n, line}) => `${file}:${n}: ${line.trim()}`))
}

describe('src/', () => {
  it('writes no process.env', () => {
    expect(offenders((line) => ENV_WRITE.test(line))).toEqual([])
  })

  it('the check sees the writes it is for', () => {
    const writes = ['process.env.AWS_X = "1"', "process.env['A'] = v", 'process.env[k] ??= v', 'delete process.env.GCE_METADATA_HOST', 'Object.assign(process.env, env)']
    for (const w of writes) expect(ENV_WRITE.test(w), w).toBe(true)
    for (const r of ['const a = process.env.HOME', 'if (process.env.X === "true")', 'f(process.env[k] == v)']) expect(ENV_WRITE.test(r), r).toBe(false)
  })

  it('asks questions through Io only (io.ts alone imports @inquirer/prompts)', () => {
    expect(offenders((line, file) => file !== 'src/lib/io.ts' && /['"]@inquirer\/prompts['"]/.test(line))).toEqual([])
  })
})
