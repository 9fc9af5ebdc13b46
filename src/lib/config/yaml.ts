// YAML with positions: parse a user's file once, keep the node tree and a line counter, and answer
// "where is the thing at this path" as file:line:col. Generic: limits.yaml and cluster.yaml both use it.
//
// Conventions (kept by every caller, so messages read the same everywhere):
// - A path is a list of segments: a string is a map key, a number is a sequence index.
// - The position of a map entry is the position of its KEY (the line the user wrote the name on);
//   the position of a sequence item is the item itself; the root is where the document's content
//   starts (1:1 for an empty file). A path that does not exist (a missing key) is located at its
//   nearest existing parent.
// - Paths are shown unambiguously: `shapes["c5.xlarge"].count`, `partitions.gpu.options.OverSubscribe`,
//   `shapes["g4dn.xlarge"].features[1]` — a key made of [A-Za-z0-9_-] is written `.key`, any other key
//   (dots, spaces, quotes, empty) is written `["key"]` (JSON-quoted), a sequence index `[n]`. The
//   first key is written as the user typed it when it is a dotted name (`local.medum`, a shape at
//   the top of limits.yaml): nothing comes before it to confuse it with, and the key after it is
//   bracketed (`VM.Standard2.1["2"]`) so that the boundary stays visible.
// - Syntax errors, unresolved aliases, keys that are not plain scalars and DUPLICATE keys are all
//   errors. Two keys are duplicates when they read the same as text (`1` and `"1"` too), because they
//   would collapse into one entry of a plain object.
import {
  Document,
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  type Node as YamlNode,
  type Pair,
  type ParsedNode,
} from 'yaml'
import type {z} from 'zod'

import {InvalidInputError, type InputProblem} from '../errors.js'
import {editDistance} from '../edit-distance.js'
import {loneSurrogateProblem} from '../well-formed.js'

export type YamlPath = readonly (string | number)[]

export interface YamlPosition {
  /** 0-based offset in the text. */
  offset: number
  /** 1-based line and column. */
  line: number
  col: number
}

export interface YamlFile {
  /** The label used in messages, e.g. "limits.yaml". */
  file: string
  doc: Document.Parsed
  /** The document as plain JavaScript (aliases resolved); null for an empty or comment-only file. */
  value: unknown
  /** The node at a path (aliases followed), or undefined. */
  node(path: YamlPath): YamlNode | undefined
  /** Position of the node at a path (its key for a map entry), or of its nearest existing parent. */
  position(path: YamlPath): YamlPosition
  /** "file:line:col" of `position(path)`. */
  where(path: YamlPath): string
  /** A problem at a path: where(path), and the message prefixed by the rendered path. */
  problem(path: YamlPath, message: string): InputProblem
}

const PLAIN_KEY = /^[A-Za-z0-9_-]+$/
/** A name with dots (a shape: c5.xlarge, VM.Standard2.1, local.medium), no empty part. */
const DOTTED_NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)+$/

/**
 * `shapes["c5.xlarge"].count`: unambiguous even when keys contain dots; a dotted first key as typed
 * (`local.medum`, `VM.Standard2.1["2"]`). Empty path: "(the document)".
 */
export function formatPath(path: YamlPath): string {
  if (path.length === 0) return '(the document)'
  const [first] = path
  const leadingName = typeof first === 'string' && DOTTED_NAME.test(first)
  let out = leadingName ? first : ''
  for (const [i, seg] of path.entries()) {
    if (i === 0 && leadingName) continue
    if (typeof seg === 'number') out += `[${seg}]`
    // `.key`, except right after the leading dotted name: `VM.Standard2.1.2` would read as one name.
    else if (PLAIN_KEY.test(seg) && !(i === 1 && leadingName)) out += out === '' ? seg : `.${seg}`
    else out += `[${JSON.stringify(seg)}]`
  }
  return out
}

/** A map key as text ("" for a null key); undefined for a key that is not a plain scalar. */
export function keyText(key: unknown): string | undefined {
  if (isScalar(key)) return key.value === null || key.value === undefined ? '' : String(key.value)
  if (key === null || key === undefined) return ''
  return undefined
}

/** Follow an alias to its anchor's node (undefined if it cannot be resolved). */
function deref(doc: Document, node: unknown): YamlNode | undefined {
  let n = node
  for (let i = 0; i < 100 && isAlias(n); i++) n = n.resolve(doc)
  return isAlias(n) ? undefined : ((n ?? undefined) as YamlNode | undefined)
}

/** The pair of a map whose key reads as `key`. */
function findPair(map: {items: Pair[]}, key: string | number): Pair | undefined {
  const want = String(key)
  return map.items.find((p) => keyText(p.key) === want)
}

/** Sort problems by their file:line:col (stable; problems without a position keep their place at the end). */
export function byPosition(problems: InputProblem[]): InputProblem[] {
  const pos = (p: InputProblem): [number, number] => {
    const m = /:(\d+):(\d+)$/.exec(p.where)
    return m ? [Number(m[1]), Number(m[2])] : [Number.MAX_SAFE_INTEGER, 0]
  }
  return problems
    .map((p, i) => ({p, i, at: pos(p)}))
    .sort((a, b) => a.at[0] - b.at[0] || a.at[1] - b.at[1] || a.i - b.i)
    .map((x) => x.p)
}

/**
 * Parse YAML text. Throws InvalidInputError with every syntax error, unresolved alias, complex key
 * and duplicate key, each at file:line:col. A file with nothing but comments is an empty document
 * (`value` null).
 */
export function parseYamlDocument(text: string, fileLabel: string): YamlFile {
  const lineCounter = new LineCounter()
  // Our own duplicate check (below) compares keys as text and names the first occurrence.
  const doc = parseDocument(text, {lineCounter, prettyErrors: false, uniqueKeys: false})
  const at = (offset: number): string => {
    const {line, col} = lineCounter.linePos(offset)
    return `${fileLabel}:${line}:${col}`
  }

  const problems: InputProblem[] = []
  for (const e of [...doc.errors, ...doc.warnings]) {
    const first = e.message.split('\n')[0]
    problems.push({where: at(e.pos[0]), message: `${first}; fix the YAML syntax here`})
  }
  if (problems.length === 0) checkTree(doc, doc.contents, at, problems, new Set())
  if (problems.length > 0) throw new InvalidInputError(byPosition(problems), `fix ${fileLabel} at the lines shown`)

  let value: unknown
  try {
    value = doc.toJS({maxAliasCount: 1000})
  } catch (error) {
    throw new InvalidInputError([{where: at(0), message: `cannot read the document: ${(error as Error).message}`}])
  }

  const node = (path: YamlPath): YamlNode | undefined => {
    let n = deref(doc, doc.contents)
    for (const seg of path) {
      if (isMap(n)) n = deref(doc, findPair(n, seg)?.value)
      else if (isSeq(n) && typeof seg === 'number') n = deref(doc, n.items[seg])
      else return undefined
    }
    return n
  }

  const position = (path: YamlPath): YamlPosition => {
    let offset = (doc.contents as ParsedNode | null)?.range?.[0] ?? 0
    let n = deref(doc, doc.contents)
    for (const seg of path) {
      let next: unknown
      let here: number | undefined
      if (isMap(n)) {
        const pair = findPair(n, seg)
        if (!pair) break
        here = (pair.key as ParsedNode | null)?.range?.[0] ?? (pair.value as ParsedNode | null)?.range?.[0]
        next = pair.value
      } else if (isSeq(n) && typeof seg === 'number' && seg >= 0 && seg < n.items.length) {
        next = n.items[seg]
        here = (next as ParsedNode | null)?.range?.[0]
      } else {
        break
      }
      if (here !== undefined) offset = here
      n = deref(doc, next)
    }
    const {line, col} = lineCounter.linePos(offset)
    return {offset, line, col}
  }

  const where = (path: YamlPath) => {
    const p = position(path)
    return `${fileLabel}:${p.line}:${p.col}`
  }

  return {
    file: fileLabel,
    doc,
    value,
    node,
    position,
    where,
    problem: (path, message) => (path.length === 0 ? {where: where(path), message} : {where: where(path), path: formatPath(path), message}),
  }
}

/**
 * Walk the tree once: duplicate keys, keys that are not plain scalars, aliases without an anchor, text
 * that is not well-formed Unicode.
 */
function checkTree(doc: Document, node: unknown, at: (offset: number) => string, problems: InputProblem[], seen: Set<unknown>): void {
  if (node === null || node === undefined || seen.has(node)) return
  seen.add(node)
  if (isScalar(node) && typeof node.value === 'string') {
    const message = loneSurrogateProblem(node.value)
    if (message) problems.push({where: at(node.range?.[0] ?? 0), message})
    return
  }
  if (isAlias(node)) {
    if (deref(doc, node) === undefined) {
      problems.push({where: at(node.range?.[0] ?? 0), message: `alias *${node.source} has no anchor before it; define &${node.source} first or write the value out`})
    }
    return
  }
  if (isMap(node)) {
    const first = new Map<string, number>()
    for (const pair of node.items) {
      if (!isPair(pair)) continue
      const keyOffset = (pair.key as ParsedNode | null)?.range?.[0] ?? (pair.value as ParsedNode | null)?.range?.[0] ?? node.range?.[0] ?? 0
      const text = keyText(pair.key)
      if (text === undefined) {
        problems.push({where: at(keyOffset), message: 'a key must be a plain name or number, not a list or a map'})
      } else if (loneSurrogateProblem(text)) {
        problems.push({where: at(keyOffset), message: `in this key, ${loneSurrogateProblem(text) as string}`})
      } else if (first.has(text)) {
        const prev = at(first.get(text) as number).split(':').at(-2)
        problems.push({where: at(keyOffset), message: `duplicate key ${JSON.stringify(text)} (first at line ${prev}); keep only one of them`})
      } else {
        first.set(text, keyOffset)
      }
      checkTree(doc, pair.value, at, problems, seen)
    }
    return
  }
  if (isSeq(node)) for (const item of node.items) checkTree(doc, item, at, problems, seen)
}

export interface ZodProblemOptions {
  /** Prepended to every issue path (when the schema validated a part of the document). */
  prefix?: YamlPath
  /** The keys allowed in the object at a path (for "did you mean" on unknown keys). */
  keysAt?: (path: YamlPath) => readonly string[] | undefined
}

/**
 * Zod issues as problems located in the file: `file:line:col` and `path: message`. An unknown key
 * (strict objects) is reported at the key itself, with a suggestion when `keysAt` knows the keys; a
 * required key that is not written reads "is required" and is located at its parent.
 */
export function zodProblems(issues: readonly z.core.$ZodIssue[], yaml: Pick<YamlFile, 'problem' | 'node'>, opts: ZodProblemOptions = {}): InputProblem[] {
  const prefix = opts.prefix ?? []
  const toPath = (p: readonly PropertyKey[]): (string | number)[] => [...prefix, ...p.map((s) => (typeof s === 'number' ? s : String(s)))]
  return issues.flatMap((issue) => {
    const path = toPath(issue.path)
    if (issue.code === 'unrecognized_keys') {
      const known = opts.keysAt?.(path) ?? []
      return issue.keys.map((key) => {
        const guess = didYouMean(key, known)
        const hint = guess.length > 0 ? `did you mean ${guess.map((g) => JSON.stringify(g)).join(' or ')}?` : known.length > 0 ? `allowed: ${known.join(', ')}` : 'remove it'
        return yaml.problem([...path, key], `unknown key ${JSON.stringify(key)}; ${hint}`)
      })
    }
    // Missing = nothing written at that path (zod's own `input` is only there with reportInput).
    const missing = issue.code === 'invalid_type' && yaml.node(path) === undefined
    return [yaml.problem(path, missing ? 'is required; add it' : issue.message)]
  })
}

/** Up to `max` candidates close to `word` (case-insensitive; distance ≤ a third of its length, at least 2). */
export function didYouMean(word: string, candidates: readonly string[], max = 2): string[] {
  const w = word.toLowerCase()
  const limit = Math.max(2, Math.floor(w.length / 3))
  return candidates
    .map((c, i) => ({c, i, d: editDistance(w, c.toLowerCase())}))
    .filter((x) => x.d <= limit)
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, max)
    .map((x) => x.c)
}

/** A value as a problem names it: text quoted, a list, a map, nothing, or the number/boolean as written. */
export function showValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v)
  if (v === null || v === undefined) return 'nothing'
  if (Array.isArray(v)) return 'a list'
  if (typeof v === 'object') return 'a map'
  return String(v)
}
