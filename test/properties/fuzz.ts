// Shared pieces of the property tests of citc's parsers of user input (#23, "Fuzzing"): the inputs
// (any text, YAML-looking text, any YAML document, a valid file damaged one edit at a time) and the
// two promises every parser makes — a value or a located InvalidInputError, and no write to disk.
import fs from 'node:fs'
import {syncBuiltinESMExports} from 'node:module'

import fc from 'fast-check'
import {expect} from 'vitest'
import {stringify} from 'yaml'

import {InvalidInputError} from '../../src/lib/errors.js'

/**
 * Runs per property: small enough for a file under ~10 s on a loaded machine. Each run draws new inputs
 * (fast-check prints the seed and the shrunk input of a failure); CITC_PROPERTY_RUNS=5000 searches harder.
 */
export const RUNS = Number(process.env.CITC_PROPERTY_RUNS ?? 200)

/**
 * A parser call that spends more CPU than this is a hang (catastrophic backtracking, a loop on an
 * alias): far above the milliseconds a file takes. CPU time, not wall time: CI runs these beside image
 * builds and clusters on two cores, where a worker can wait seconds for a core without any fault.
 */
export const HANG_MS = 5_000

/** CPU time this process has spent, in ms (user + system, all its threads): what HANG_MS bounds. */
export const cpuMs = () => {
  const {user, system} = process.cpuUsage()
  return (user + system) / 1000
}

/** Characters that give YAML its structure, so random text reaches past the first syntax error more often. */
const YAML_CHARS = [...':-?[]{},#&*!|>\'"%@` \n\n\n\t', ...'abcxyz019._', '  ', '\r', '\u00a0', '\u0000', 'é', '🙂']
export const yamlishText = fc.array(fc.constantFrom(...YAML_CHARS), {maxLength: 120}).map((a) => a.join(''))

/** Any text at all: every code point (lone surrogates included), and control characters. */
export const anyText = fc.oneof(fc.string({unit: 'binary', maxLength: 200}), fc.string({unit: 'grapheme', maxLength: 200}), yamlishText)

/**
 * Any YAML document: fast-check's arbitrary values, map keys drawn mostly from `words` (the format's
 * own keys and names, so the generator reaches the checks behind the top-level ones), rendered by
 * the yaml library in block or flow style.
 */
export function yamlDocument(words: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof({weight: 4, arbitrary: fc.constantFrom(...words)}, {weight: 1, arbitrary: fc.string({maxLength: 12})})
  const leaf = fc.oneof(
    fc.constantFrom(...words),
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.string({maxLength: 20}),
    fc.constantFrom('2-00:00:00', '48:00:00', '90', '-1', '0', '1e400', 'parent', 'USD', '16G', 'none', 'nfs'),
  )
  const value = fc.letrec<{tree: unknown}>((tie) => ({
    tree: fc.oneof({depthSize: 'small', withCrossShrink: true}, leaf, fc.array(tie('tree'), {maxLength: 4}), fc.dictionary(key, tie('tree'), {maxKeys: 5})),
  })).tree
  const doc = fc.oneof(fc.dictionary(key, value, {maxKeys: 5}), value, fc.anything({key, maxDepth: 3}))
  return fc.tuple(doc, fc.boolean()).map(([v, flow]) => stringify(v, {collectionStyle: flow ? 'flow' : 'block'}) ?? '')
}

/** YAML's less common parts: tags (dates, sets, binary), anchors and aliases, merge keys, directives, odd numbers. */
const YAML_TOKENS = [
  '!!binary ', '!!set ', '!!omap ', '!!pairs ', '!!timestamp ', '!!str ', '!!float ', '!!int ', '!!map ', '!!seq ', '!!null ', '!custom ',
  '&a ', '*a', '<<: *a', '<<: ', '? ', '--- ', '...', '%YAML 1.1\n---\n', '0x1F', '.inf', '-.inf', '.nan', '2001-12-14', '2001-12-14T21:59:43.10-05:00',
  '1_000', '0o17', '~', '-0', '1e400', '9007199254740993', '"\\u0000"', '"a\\ud800b"', '"\\udc00"', '|-\n  x', '>\n  y', '{', '}', '[', ']',
]

/** One edit of a text: a line deleted, duplicated or swapped with the next, a character replaced, inserted or deleted. */
export function mutated(valid: readonly string[]): fc.Arbitrary<string> {
  const edit = fc.tuple(fc.nat(), fc.nat(), fc.constantFrom(...YAML_CHARS, '0', '-', 'x', ...YAML_TOKENS))
  return fc.tuple(fc.constantFrom(...valid), fc.array(edit, {minLength: 1, maxLength: 3}), fc.array(fc.constantFrom(0, 1, 2, 3, 4, 5, 6, 6), {minLength: 3, maxLength: 3})).map(
    ([text, edits, kinds]) =>
      edits.reduce((t, [a, b, c], i) => {
        const lines = t.split('\n')
        const l = a % lines.length
        const p = t.length === 0 ? 0 : b % t.length
        switch (kinds[i]) {
          case 0:
            return [...lines.slice(0, l), ...lines.slice(l + 1)].join('\n')
          case 1:
            return [...lines.slice(0, l + 1), ...lines.slice(l)].join('\n')
          case 2:
            return [...lines.slice(0, l), lines[(l + 1) % lines.length], lines[l], ...lines.slice(l + 2)].join('\n')
          case 3:
            return t.slice(0, p) + c + t.slice(p + 1)
          case 4:
            return t.slice(0, p) + c + t.slice(p)
          case 6: {
            // After a "key: " (where a tag, an anchor or an alias changes what the value is), else anywhere.
            const colons = [...t.matchAll(/: /g)].map((m) => m.index + 2)
            const q = colons.length > 0 ? colons[b % colons.length] : p
            return t.slice(0, q) + c + t.slice(q)
          }
          default:
            return t.slice(0, p) + t.slice(p + 1)
        }
      }, text),
  )
}

/**
 * The first promise: `parse(text)` returns, or throws an InvalidInputError (exit 3) whose every problem
 * is at `label:line:col` inside the text (line 1 to the line after the last), and whose message names
 * those places. Anything else — a TypeError, a RangeError, an unlocated problem — fails the property,
 * and so does a call spending more CPU than HANG_MS, and an accepted value holding text that is not well-formed.
 */
export function parsesOrLocates<T>(text: string, label: string, parse: (text: string) => T, skip?: (key: string) => boolean): T | InvalidInputError {
  const started = cpuMs()
  let result: T | InvalidInputError
  try {
    result = parse(text)
  } catch (error) {
    if (!(error instanceof InvalidInputError)) throw error
    result = error
  }
  const took = cpuMs() - started
  if (took > HANG_MS) throw new Error(`the parser spent ${Math.round(took)} ms of CPU on this input`)
  if (result instanceof InvalidInputError) expectLocated(result, text, label)
  else expectWellFormed(result, skip)
  return result
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** Every problem at `label:line:col` within the text, the message naming each place. */
export function expectLocated(error: InvalidInputError, text: string, label: string): void {
  expect(error.exitCode).toBe(3)
  expect(error.problems.length).toBeGreaterThan(0)
  // Lines as the yaml library counts them (\n; a lone \r is not a line break there).
  const lineCount = text.split('\n').length
  const at = new RegExp(`^${escapeRe(label)}:(\\d+):(\\d+)$`)
  for (const p of error.problems) {
    const m = at.exec(p.where)
    if (!m) throw new Error(`a problem is not located at ${label}:line:col: ${JSON.stringify(p)}`)
    const [line, col] = [Number(m[1]), Number(m[2])]
    if (line < 1 || line > lineCount + 1 || col < 1) throw new Error(`a problem is located outside the text (${lineCount} lines): ${JSON.stringify(p)}`)
    expect(p.message.trim()).not.toBe('')
    expect(error.message).toContain(p.where)
  }
}

/**
 * Every text in what a parser accepted is well-formed Unicode: citc writes it out as UTF-8 (slurm.conf,
 * LDIF, sacctmgr's argv), where a lone surrogate ("\\ud800" in a YAML double-quoted string) would
 * silently become U+FFFD. `skip` leaves out fields checked later (e.g. users.yaml's key specs).
 */
export function expectWellFormed(value: unknown, skip: (key: string) => boolean = () => false, path = '(value)', seen = new Set<unknown>()): void {
  if (typeof value === 'string') {
    if (Buffer.from(value, 'utf8').toString('utf8') !== value) throw new Error(`${path} was accepted with a lone surrogate: ${JSON.stringify(value)}`)
    return
  }
  if (value === null || typeof value !== 'object' || seen.has(value)) return
  seen.add(value)
  const entries: [string, unknown][] = value instanceof Map ? [...value].map(([k, v]) => [String(k), v]) : Object.entries(value)
  for (const [k, v] of entries) {
    if (skip(k)) continue
    expectWellFormed(k, skip, `${path} key`, seen)
    expectWellFormed(v, skip, `${path}.${k}`, seen)
  }
}

type Recorder = (name: string, args: unknown[]) => void

/** node:fs functions that change the disk (the sync, callback and promise forms). */
const WRITERS = [
  'writeFile', 'appendFile', 'rename', 'unlink', 'rm', 'rmdir', 'mkdir', 'mkdtemp', 'copyFile', 'cp', 'truncate',
  'symlink', 'link', 'chmod', 'chown', 'utimes',
]
/** Flags of open() that may write. */
const writesByFlags = (flags: unknown) => typeof flags === 'number' ? (flags & 3) !== 0 || (flags & 0o100) !== 0 : typeof flags === 'string' && /[wa+]/.test(flags)

/**
 * Run `fn` with every writing function of node:fs and node:fs/promises replaced by a recorder (and
 * open/createWriteStream when they would write), for modules that imported them by name too
 * (syncBuiltinESMExports updates the named exports). Returns what was attempted; nothing is written.
 */
export function fsWritesDuring(fn: () => void): string[] {
  const attempts: string[] = []
  const record: Recorder = (name, args) => attempts.push(`${name}(${JSON.stringify(args[0])})`)
  const saved: [object, string, unknown][] = []
  const replace = (target: Record<string, unknown>, name: string, make: (orig: (...a: unknown[]) => unknown) => unknown) => {
    const orig = target[name]
    if (typeof orig !== 'function') return
    saved.push([target, name, orig])
    target[name] = make(orig as (...a: unknown[]) => unknown)
  }
  const sync = fs as unknown as Record<string, unknown>
  const promises = fs.promises as unknown as Record<string, unknown>
  for (const w of WRITERS) {
    const refuse = (name: string) => () => (...args: unknown[]) => {
      record(name, args)
      throw new Error(`${name} called while parsing`)
    }
    replace(sync, w, refuse(w))
    replace(sync, `${w}Sync`, refuse(`${w}Sync`))
    replace(promises, w, refuse(`promises.${w}`))
  }
  for (const [target, name] of [[sync, 'open'], [sync, 'openSync'], [promises, 'open']] as const) {
    replace(target, name, (orig) => (...args: unknown[]) => {
      if (writesByFlags(args[1])) {
        record(name, args)
        throw new Error(`${name} for writing called while parsing`)
      }
      return orig(...args)
    })
  }
  replace(sync, 'createWriteStream', () => (...args: unknown[]) => {
    record('createWriteStream', args)
    throw new Error('createWriteStream called while parsing')
  })
  syncBuiltinESMExports()
  try {
    fn()
  } catch {
    // The parser's own answer (an error) is not what is looked at here.
  } finally {
    for (const [target, name, orig] of saved) (target as Record<string, unknown>)[name] = orig
    syncBuiltinESMExports()
  }
  return attempts
}
