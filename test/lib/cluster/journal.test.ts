import {existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {Journal} from '../../../src/lib/cluster/journal.js'
import {InvalidInputError} from '../../../src/lib/errors.js'

let dir: string
let file: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'citc-journal-'))
  file = join(dir, 'journal')
})
afterEach(() => rmSync(dir, {recursive: true, force: true}))

describe('Journal', () => {
  it('a missing file is an empty journal', () => {
    const j = new Journal(file).load()
    expect(j.steps()).toEqual([])
    expect(j.done('terraform-apply')).toBe(false)
  })

  it('round trip: steps and their data survive a reload, in order, as JSON lines (0600)', () => {
    const j = new Journal(file)
    j.markDone('keys')
    j.markDone('terraform-apply', {outputs: {ip: '203.0.113.7'}, count: 2})
    j.markDone('ansible')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l).step)).toEqual(['keys', 'terraform-apply', 'ansible'])

    const again = new Journal(file)
    expect(again.done('keys')).toBe(true)
    expect(again.done('finish')).toBe(false)
    expect(again.data('terraform-apply')).toEqual({outputs: {ip: '203.0.113.7'}, count: 2})
    expect(again.data('keys')).toBeUndefined()
    expect(again.steps().map((s) => s.step)).toEqual(['keys', 'terraform-apply', 'ansible'])
    expect(again.steps().every((s) => !Number.isNaN(Date.parse(s.at)))).toBe(true)
  })

  it('marking a step again replaces its data and keeps its place', () => {
    const j = new Journal(file)
    j.markDone('a', 1)
    j.markDone('b')
    j.markDone('a', 2)
    const again = new Journal(file)
    expect(again.steps().map((s) => [s.step, s.data])).toEqual([
      ['a', 2],
      ['b', undefined],
    ])
  })

  it('steps() returns copies; reset() forgets everything and deletes the file', () => {
    const j = new Journal(file)
    j.markDone('a')
    j.steps()[0].step = 'mutated'
    expect(j.done('a')).toBe(true)
    j.reset()
    expect(existsSync(file)).toBe(false)
    expect(j.steps()).toEqual([])
    expect(new Journal(file).done('a')).toBe(false)
    j.reset() // twice is fine
  })

  it('load() picks up what another writer added', () => {
    const a = new Journal(file)
    const b = new Journal(file)
    expect(b.done('x')).toBe(false)
    a.markDone('x')
    expect(b.done('x')).toBe(false)
    expect(b.load().done('x')).toBe(true)
  })

  it('a damaged line is invalid input located at file:line', () => {
    writeFileSync(file, '{"step":"a","at":"2026-11-21T00:00:00.000Z"}\nnot json\n')
    try {
      new Journal(file).load()
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidInputError)
      expect((error as InvalidInputError).problems[0].where).toBe(`${file}:2:1`)
    }
  })
})
