// The log of a run: every command with its output, but a data-sized output (sacct over a month) only
// by its start, its end and its size.
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {LOG_OUTPUT_MAX, loggedOutput, withLog} from '../../../src/lib/transport/logged.js'
import {MemoryTransport} from '../../doubles/memory-transport.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-logged-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('loggedOutput', () => {
  it('keeps ordinary output whole', () => {
    expect(loggedOutput('a\nb')).toBe('a\nb\n')
    const big = 'x'.repeat(LOG_OUTPUT_MAX - 1) + '\n'
    expect(loggedOutput(big)).toBe(big)
  })

  it('logs the head and tail of a data-sized output, saying how much is left out', () => {
    const lines = Array.from({length: 200_000}, (_, i) => `job ${i}|alice|physics`).join('\n')
    const text = loggedOutput(lines)
    expect(text.length).toBeLessThan(100 * 1024)
    expect(text.startsWith('job 0|alice|physics\n')).toBe(true)
    expect(text.endsWith('job 199999|alice|physics\n')).toBe(true)
    expect(text).toMatch(/\n\[… \d+ characters, about \d+ lines, not logged …\]\n/)
  })
})

describe('withLog', () => {
  it('writes the command, its output, stderr and exit code, and never stdin', async () => {
    const t = new MemoryTransport()
    t.on((a) => a[0] === 'sacct', () => ({stdout: 'x'.repeat(LOG_OUTPUT_MAX * 2), stderr: 'warn', exitCode: 0}))
    const log = join(dir, 'run.log')
    const r = await withLog(t, log).run(['sacct', '--allusers'], {stdin: 'secret'})
    expect(r.stdout.length).toBe(LOG_OUTPUT_MAX * 2) // the caller gets everything
    const text = readFileSync(log, 'utf8')
    expect(text).toMatch(/\$ sacct --allusers <stdin not logged>/)
    expect(text).not.toContain('secret')
    expect(text).toContain('[stderr] warn')
    expect(text).toMatch(/exit 0\n$/)
    expect(text.length).toBeLessThan(100 * 1024)
  })
})
