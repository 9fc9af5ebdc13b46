// `citc --help` and `citc COMMAND --help`: what a user reads before running anything. Every command of
// the map is documented with its summary, examples and the shared exit codes; hidden node programs
// (run by slurmctld) stay out of the listing.
import {existsSync} from 'node:fs'
import {join} from 'node:path'

import type {Command} from '@oclif/core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {DOCS_PAGES} from '../../src/docs-pages.js'
import {commands} from '../../src/index.js'
import {EXIT_CODE_HELP} from '../../src/lib/errors.js'
import {type CliResult, cliSandbox, limited, ROOT} from './support.js'

const sandbox = cliSandbox('help')
afterAll(() => sandbox.cleanup())

const classes = Object.entries(commands as unknown as Record<string, typeof Command>)
const visible = classes.filter(([, c]) => !c.hidden)
const hidden = classes.filter(([, c]) => c.hidden)
/** How a user types a command id (topic separator is a space). */
const words = (id: string) => id.split(':')
const typed = (id: string) => words(id).join(' ')
/** oclif re-wraps text to the terminal width: compare with whitespace collapsed. */
const flat = (s: string) => s.replace(/\s+/g, ' ').trim()

/** The entries of a help section ("COMMANDS", "TOPICS"): the first word of each indented line. */
function section(help: string, title: string): string[] {
  const m = help.match(new RegExp(`^${title}\\n((?:  .*\\n?|\\n(?=  ))*)`, 'm'))
  if (!m) return []
  return m[1]
    .split('\n')
    .filter((l) => /^ {2}\S/.test(l))
    .map((l) => l.trim().split(/\s{2,}/)[0])
}

let root: CliResult
let topicHelp: Record<string, CliResult>
const perCommand: Record<string, CliResult> = {}

beforeAll(async () => {
  root = await sandbox.run(['--help'])
  const topics = [...new Set(visible.filter(([id]) => id.includes(':')).map(([id]) => words(id)[0]))]
  const topicRuns = await limited(
    3,
    topics.map((t) => () => sandbox.run([t, '--help'])),
  )
  topicHelp = Object.fromEntries(topics.map((t, i) => [t, topicRuns[i]]))
  const runs = await limited(
    3,
    classes.map(([id]) => () => sandbox.run([...words(id), '--help'])),
  )
  classes.forEach(([id], i) => (perCommand[id] = runs[i]))
})

describe('citc --help', () => {
  it('lists every visible command: top-level ones under COMMANDS, the others under their topic', () => {
    expect(root.code, root.stderr).toBe(0)
    expect(root.stdout).toMatch(/^USAGE\n {2}\$ citc \[COMMAND\]/m)
    const listed = section(root.stdout, 'COMMANDS')
    const topics = section(root.stdout, 'TOPICS')
    for (const [id] of visible) {
      if (id.includes(':')) {
        const topic = words(id)[0]
        expect(topics, `topic ${topic} (for ${typed(id)})`).toContain(topic)
        const sub = topicHelp[topic]
        expect(sub.code, sub.stderr).toBe(0)
        expect(section(sub.stdout, 'COMMANDS'), `citc ${topic} --help`).toContain(typed(id))
      } else {
        expect(listed, id).toContain(id)
      }
    }
    // The plugins' commands are there too.
    expect(listed).toEqual(expect.arrayContaining(['autocomplete', 'help']))
  })

  it('does not list the hidden node programs', () => {
    expect(hidden.length).toBeGreaterThan(0)
    for (const [id] of hidden) {
      // A topic with visible commands of its own (node: add, remove) is listed; its hidden ones are not.
      const sharesTopic = visible.some(([v]) => v.includes(':') && words(v)[0] === words(id)[0])
      if (!sharesTopic) {
        expect(section(root.stdout, 'COMMANDS'), id).not.toContain(words(id)[0])
        expect(section(root.stdout, 'TOPICS'), id).not.toContain(words(id)[0])
      }
      expect(root.stdout).not.toContain(typed(id))
      for (const t of Object.values(topicHelp)) expect(t.stdout).not.toContain(typed(id))
    }
  })

  it('writes help to stdout only', () => {
    expect(root.stderr).toBe('')
  })
})

describe('citc COMMAND --help', () => {
  it.each(classes.map(([id, c]) => [typed(id), id, c] as const))('citc %s --help: summary, usage and EXIT CODES', (_t, id, cls) => {
    const r = perCommand[id]
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe('')
    expect(cls.summary, `${id} has no summary`).toBeTruthy()
    expect(flat(r.stdout)).toContain(flat(cls.summary!))
    expect(r.stdout).toMatch(new RegExp(`^USAGE\\n {2}\\$ citc ${typed(id)}`, 'm'))
    expect(r.stdout.trimEnd().endsWith(EXIT_CODE_HELP), `${id}: EXIT CODES is not the last section`).toBe(true)
    for (const code of ['0', '1', '2', '3', '4', '5', '130']) expect(r.stdout).toMatch(new RegExp(`^ {2}${code} +\\S`, 'm'))
  })

  it.each(classes.map(([id]) => [typed(id), id] as const))('citc %s --help: at least one example of the command itself', (_t, id) => {
    const r = perCommand[id]
    expect(r.stdout, `${typed(id)} --help shows no EXAMPLES`).toMatch(/^EXAMPLES$/m)
    const examples = r.stdout.slice(r.stdout.indexOf('\nEXAMPLES\n'), r.stdout.indexOf('\nEXIT CODES\n'))
    expect(examples).toContain(`$ citc ${typed(id)}`)
  })

  it.each(Object.entries(DOCS_PAGES).map(([id, pages]) => [typed(id), id, pages] as const))('citc %s --help: SEE ALSO, before EXIT CODES, gives its docs/ pages as paths that open', (_t, id, pages) => {
    const r = perCommand[id]
    const paths = pages.map((p) => join(ROOT, p))
    expect(r.stdout).toContain(`\nSEE ALSO\n${paths.map((p) => `  ${p}`).join('\n')}\n\nEXIT CODES\n`)
    for (const p of paths) expect(existsSync(p), p).toBe(true)
  })

  it('`citc help COMMAND` is the same help', async () => {
    const r = await sandbox.run(['help', 'finish'])
    expect(r.code).toBe(0)
    expect(r.stdout).toBe(perCommand.finish.stdout)
  })

  it('citc autocomplete --help works (plugin-autocomplete is registered)', async () => {
    const r = await sandbox.run(['autocomplete', '--help'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toMatch(/^USAGE\n {2}\$ citc autocomplete/m)
    expect(r.stdout).toContain('bash')
    expect(r.stdout).toContain('zsh')
  })
})
