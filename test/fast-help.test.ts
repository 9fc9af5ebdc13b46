// src/fast-help.ts prints help from the manifest without oclif's Config.load, through oclif's
// formatting classes and a copy of oclif's Help flow (manifest-help.ts). Its text must be what oclif
// prints: here, in process, for the root, every topic and every command (hidden ones and the plugins'
// included), fastHelp's output against citc's help class (help.ts: oclif's Help) on oclif's own Config
// — so a fact the fast path reads differently (a topic, a plugin's command, the version line, a
// template) or a step of the flow it does differently (the SEE ALSO and exit codes, a topic's list) fails here. test/cli/fast-help.test.ts compares the built CLI with oclif's own start-up at other
// widths and in colour. And what it must leave to oclif, it leaves.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Config} from '@oclif/core'
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {asksForHelp, fastHelp, helpConfig} from '../src/fast-help.js'
import CitcHelp from '../src/help.js'
import {ROOT} from './helpers/cli.js'

const scratch = mkdtempSync(join(tmpdir(), 'citc-fast-help-'))
/** As a user runs the built CLI (vitest's NODE_ENV=test would make both sides step aside), with no theme or user plugins of this machine's. */
const env: NodeJS.ProcessEnv = {...process.env, NODE_ENV: 'production', CITC_CONFIG_DIR: join(scratch, 'config'), CITC_DATA_DIR: join(scratch, 'data'), CITC_DISABLE_THEME: undefined}

/** What `fn` writes to stdout, and its result. */
async function captured<T>(fn: () => Promise<T>): Promise<{out: string; result: T}> {
  let out = ''
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()
    return true
  })
  try {
    return {result: await fn(), out}
  } finally {
    spy.mockRestore()
  }
}

let subjects: string[][]
const reference = new Map<string, string>()

beforeAll(async () => {
  const saved = {...process.env}
  Object.assign(process.env, {CITC_CONFIG_DIR: env.CITC_CONFIG_DIR, CITC_DATA_DIR: env.CITC_DATA_DIR})
  try {
    // oclif's own configuration, loaded once per subject: its help rewrites command ids in place.
    const first = await Config.load({root: ROOT})
    const ids = [...new Set([...first.commands.map((c) => c.id), ...first.topics.map((t) => t.name)])].sort()
    subjects = [[], ['--help'], ...ids.map((id) => [...id.split(':'), '--help'])]
    for (const argv of subjects) {
      const config = await Config.load({root: ROOT})
      const {out} = await captured(() => new CitcHelp(config).showHelp(argv))
      reference.set(argv.join(' '), out)
    }
  } finally {
    process.env = saved
  }
}, 120_000)
afterAll(() => rmSync(scratch, {recursive: true, force: true}))
afterEach(() => {
  rmSync(join(scratch, 'config'), {recursive: true, force: true})
  rmSync(join(scratch, 'data'), {recursive: true, force: true})
})

describe('fastHelp', () => {
  it('prints, byte for byte, what citc’s help class prints with oclif’s Config: root, every topic, every command', async () => {
    expect(subjects.length).toBeGreaterThan(30)
    for (const argv of subjects) {
      const {out, result} = await captured(() => fastHelp(ROOT, argv, env))
      expect(result, `citc ${argv.join(' ')} served`).toBe(true)
      expect(out, `citc ${argv.join(' ')}`).toBe(reference.get(argv.join(' ')))
    }
    // Not vacuous: the texts are help, and the templates were rendered.
    expect(reference.get('finish --help')).toMatch(/^USAGE\n {2}\$ citc finish/m)
    expect(reference.get('--help')).toContain('VERSION\n  citc/')
    expect([...reference.values()].join('')).not.toContain('<%')
  })

  it('gives a topic made of its commands the description oclif gives it: its first command in oclif’s order', async () => {
    // No such topic in citc today (its topics with several commands are in package.json): a CLI of two.
    const root = join(scratch, 'two')
    mkdirSync(root)
    writeFileSync(join(root, 'package.json'), JSON.stringify({name: 'two', version: '1.0.0', oclif: {bin: 'two', topicSeparator: ' ', commands: './commands'}}))
    const command = (id: string, summary: string) => ({id, summary, flags: {}, args: {}, aliases: [], hiddenAliases: [], examples: [], pluginName: 'two', pluginType: 'core', hasDynamicHelp: false, strict: true})
    // Not in oclif's order in the file: B_b sorts before b_a by the ids' code units, after it by localeCompare.
    writeFileSync(join(root, 'oclif.manifest.json'), JSON.stringify({version: '1.0.0', commands: {'x:B_b': command('x:B_b', 'second'), 'x:b_a': command('x:b_a', 'first'), y: command('y', 'why')}}))
    const twoEnv = {...env, TWO_CONFIG_DIR: join(scratch, 'config'), TWO_DATA_DIR: join(scratch, 'data')}
    for (const argv of [[], ['x', '--help']]) {
      const config = await Config.load({root})
      const {out: expected} = await captured(() => new CitcHelp(config).showHelp(argv))
      const {out, result} = await captured(() => fastHelp(root, argv, twoEnv))
      expect(result).toBe(true)
      expect(out, argv.join(' ')).toBe(expected)
    }
    const {out} = await captured(() => fastHelp(root, [], twoEnv))
    expect(out).toMatch(/^ {2}x {2}first$/m)
  })

  it('leaves to oclif what is no help, or no command or topic it knows', async () => {
    for (const argv of [['--version'], ['status'], ['status', '--', '--help'], ['nosuch', '--help'], ['finish', 'nosuch', '--help']]) {
      const {out, result} = await captured(() => fastHelp(ROOT, argv, env))
      expect(result, argv.join(' ')).toBe(false)
      expect(out).toBe('')
    }
    expect(asksForHelp([])).toBe(true)
    expect(asksForHelp(['status', '--json', '--help'])).toBe(true)
    expect(asksForHelp(['--version', '--help'])).toBe(false)
  })

  it('leaves to oclif a user’s theme, user-installed plugins, development runs, a manifest of another version', async () => {
    expect(helpConfig(ROOT, env)).toBeDefined()
    mkdirSync(join(scratch, 'config'), {recursive: true})
    writeFileSync(join(scratch, 'config', 'theme.json'), '{"sectionHeader": "red"}')
    expect(helpConfig(ROOT, env)).toBeUndefined()
    expect(helpConfig(ROOT, {...env, CITC_DISABLE_THEME: 'true'})).toBeDefined()
    rmSync(join(scratch, 'config'), {recursive: true})
    mkdirSync(join(scratch, 'data'), {recursive: true})
    writeFileSync(join(scratch, 'data', 'package.json'), '{"oclif": {"plugins": []}}')
    expect(helpConfig(ROOT, env)).toBeUndefined()
    rmSync(join(scratch, 'data'), {recursive: true})
    expect(helpConfig(ROOT, {...env, NODE_ENV: 'development'})).toBeUndefined()

    // A root whose manifest is of another version (oclif warns about it).
    const stale = join(scratch, 'stale')
    mkdirSync(stale)
    writeFileSync(join(stale, 'package.json'), JSON.stringify({name: 'citc', version: '9.9.9', oclif: {bin: 'citc'}}))
    writeFileSync(join(stale, 'oclif.manifest.json'), JSON.stringify({version: '0.1.0', commands: {}}))
    expect(helpConfig(stale, env)).toBeUndefined()
    writeFileSync(join(stale, 'oclif.manifest.json'), JSON.stringify({version: '9.9.9', commands: {}}))
    expect(helpConfig(stale, env)).toBeDefined()
  })
})
