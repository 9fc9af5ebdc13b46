// shellQuote is checked by the shells themselves: the quoted line is run by sh (dash) and bash, which
// print their argv back NUL-separated; it must be exactly what went in.
import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'

import {quoteWord, shellQuote} from '../../src/lib/shell-quote.js'
import {NASTY} from '../helpers/nasty.js'

const SHELLS = ['/usr/bin/dash', '/usr/bin/bash'].filter((s) => spawnSync(s, ['-c', 'true']).status === 0)

/** Run `line` with a shell; return the argv printf saw. */
function argvSeenBy(shell: string, words: string[]): string[] {
  const line = shellQuote(['printf', '%s\\0', ...words])
  const r = spawnSync(shell, ['-c', line], {encoding: 'utf8'})
  expect(r.status, r.stderr).toBe(0)
  return r.stdout.split('\0').slice(0, -1)
}

describe('shellQuote', () => {
  it.each(SHELLS)('every nasty word comes back literally through %s', (shell) => {
    expect(argvSeenBy(shell, NASTY)).toEqual(NASTY)
  })

  it.each(NASTY.map((w) => [JSON.stringify(w), w]))('word %s alone through sh', (_label, word) => {
    expect(argvSeenBy('/bin/sh', [word])).toEqual([word])
  })

  it('leaves safe words bare and quotes everything else', () => {
    expect(shellQuote(['scontrol', 'show', 'node', 'tst-1', '/etc/slurm/slurm.conf'])).toBe('scontrol show node tst-1 /etc/slurm/slurm.conf')
    expect(quoteWord('')).toBe("''")
    expect(quoteWord("it's")).toBe(`'it'\\''s'`)
    expect(quoteWord('a b')).toBe("'a b'")
  })

  it('an assignment-looking first word is a command name, not an assignment', () => {
    const r = spawnSync('/bin/sh', ['-c', shellQuote(['A=1', 'true'])], {encoding: 'utf8'})
    expect(r.status).toBe(127) // "A=1: not found", not "set A and run true"
  })

  it('refuses a NUL byte (no argv can carry it)', () => {
    expect(() => shellQuote(['a\0b'])).toThrow(/NUL/)
  })
})
