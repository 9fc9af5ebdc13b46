// `citc node resume|suspend|fail` as slurmctld runs them (the built CLI), with a cluster.json they
// cannot use: they stop before touching any node, exit 4, and say which file, what is wrong and what
// to do — not a stack trace. And what they load on the way: slurmctld starts one on every power event.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {afterAll, describe, expect, it} from 'vitest'

import {citc, ROOT} from '../helpers/cli.js'

const work = mkdtempSync(join(tmpdir(), 'citc-node-program-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

/** A stand-in file (src/lib/stand-in.ts) naming this cluster.json instead of /etc/citc/cluster.json. */
function standIn(clusterJson: string): string {
  const file = `${clusterJson}.stand-in.json`
  writeFileSync(file, JSON.stringify({clusterJson}))
  return file
}

describe('node programs with an unusable cluster.json', () => {
  it.each([
    ['resume', {name: 'lab', provider: 'local', sharedDir: '/mnt/shared'}, /was written by an older citc \(it has no "version"; this citc reads version 1\) Try: re-run `citc create --name lab`/],
    ['suspend', {version: 1, name: 'lab', provider: 'local'}, /is not what citc writes: sharedDir: .* Try: re-run `citc create --name lab`/],
  ])('%s: exit 4 with the file, the field and the way out', async (program, doc, expected) => {
    const file = join(work, `${program}.json`)
    writeFileSync(file, JSON.stringify(doc))
    const r = await citc(['node', program, 'lab-small-0001', '--stand-in', standIn(file)])
    expect(r.code).toBe(4)
    // oclif wraps the message to the terminal's width, with › margins.
    const said = r.stderr.replace(/[\s›]+/g, ' ')
    expect(said).toContain(`Error: ${file} on this machine `)
    expect(said).toMatch(expected)
  })
})

describe('what a node program loads', () => {
  it('reaches cluster.json without the shape catalogues or any Terraform code', async () => {
    // A module hook (node --import) writes every file the program loads; the unusable cluster.json
    // stops it right after its static imports.
    const loaded = join(work, 'loaded.txt')
    const hooks = join(work, 'hooks.mjs')
    writeFileSync(hooks, `import {appendFileSync} from 'node:fs'\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(loaded)}, url + '\\n')\n  return next(url, context)\n}\n`)
    const register = join(work, 'register.mjs')
    writeFileSync(register, `import {register} from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
    const file = join(work, 'bad.json')
    writeFileSync(file, JSON.stringify({version: 1, name: 'lab', provider: 'local'}))
    const r = await citc(['node', 'resume', 'lab-small-0001', '--stand-in', standIn(file)], {env: {NODE_OPTIONS: `--import=${pathToFileURL(register).href}`}})
    expect(r.code).toBe(4)
    const dist = pathToFileURL(join(ROOT, 'dist')).href
    const ours = readFileSync(loaded, 'utf8').split('\n').filter((u) => u.startsWith(dist)).map((u) => u.slice(dist.length + 1))
    expect(ours).toContain('lib/tasks/node/node-programs.js')
    expect(ours).toContain('lib/cluster/management-contract.js')
    // bin/run.js's fast path, --stand-in included: oclif's command index (dist/index.js) is never loaded.
    expect(ours).not.toContain('index.js')
    expect(ours.filter((f) => /(^|\/)shapes(\/|\.js$)|^lib\/providers\/(cloud|catalogues)\.js$|^lib\/tools\/terraform\.js$/.test(f))).toEqual([])
  })
})
