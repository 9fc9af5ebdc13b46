// `citc node resume|suspend|fail` as slurmctld runs them (the built CLI), with a cluster.json they
// cannot use: they stop before touching any node, exit 4, and say which file, what is wrong and what
// to do — not a stack trace.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {citc} from '../helpers/cli.js'

const work = mkdtempSync(join(tmpdir(), 'citc-node-program-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('node programs with an unusable cluster.json', () => {
  it.each([
    ['resume', {name: 'lab', provider: 'local', sharedDir: '/mnt/shared'}, /was written by an older citc \(it has no "version"; this citc reads version 1\) Try: re-run `citc create --name lab`/],
    ['suspend', {version: 1, name: 'lab', provider: 'local'}, /is not what citc writes: sharedDir: .* Try: re-run `citc create --name lab`/],
  ])('%s: exit 4 with the file, the field and the way out', async (program, doc, expected) => {
    const file = join(work, `${program}.json`)
    writeFileSync(file, JSON.stringify(doc))
    const r = await citc(['node', program, 'lab-small-0001'], {env: {CITC_NODE_CONFIG: file}})
    expect(r.code).toBe(4)
    // oclif wraps the message to the terminal's width, with › margins.
    const said = r.stderr.replace(/[\s›]+/g, ' ')
    expect(said).toContain(`Error: ${file} on this machine `)
    expect(said).toMatch(expected)
  })
})
