// Nothing outside a provider's own folder asks which provider it is by name (issue #19, design.md "Node
// kinds"): it asks the module (src/lib/providers/module.ts) for the capability. This test scans src/
// with TypeScript's parser and fails on any provider name of PROVIDER_NAMES used as a string value
// outside src/lib/providers/<that name>/ and src/lib/providers/registry.ts.
//
// What counts: a string literal, a template literal without substitutions, or one text part of a
// template literal, whose text IS a provider name ('local', `aws`, the `oracle` in `${x}oracle${y}`
// when it stands alone as that part): that is how code compares or records a provider (`provider ===
// 'local'`, `{provider: 'aws'}`, a type `'local' | CloudProvider`). Literal types count (they are
// string literals). Not counted: comments; identifiers (`localModule`); import paths; prose that
// merely contains the word ("a local cluster", "--provider aws" in help text) — a message may name a
// provider, a decision may not.
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join, relative, sep} from 'node:path'

import ts from 'typescript'
import {describe, expect, it} from 'vitest'

import {PROVIDER_NAMES} from '../../../src/lib/providers/registry.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')

/**
 * Literals that are the same word but not a provider: file (relative to the repository) and text.
 * Each needs its reason; a new entry is a decision to read twice.
 */
const NOT_A_PROVIDER: Array<{file: string; text: string; why: string}> = [
  {file: 'src/lib/tools/ansible.ts', text: 'local', why: "Ansible's connection plugin named local (ansible-playbook -c local)"},
  {file: 'src/lib/users/validate.ts', text: 'google', why: 'a reserved user name: the default login user of Google Cloud images'},
]

interface Hit {
  file: string
  line: number
  name: string
}

/** Provider names used as string values in one source text. */
export function providerLiterals(file: string, source: string, names: readonly string[]): Hit[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true)
  const hits: Hit[] = []
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      if (names.includes(node.text)) hits.push({file, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, name: node.text})
    }
    node.forEachChild(visit)
  }
  visit(sf)
  return hits
}

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) yield* sourceFiles(path)
    else if (/\.(ts|mts|cts)$/.test(entry)) yield path
  }
}

/** Where a provider's name may be written: its own folder and the registry. */
function allowed(hit: Hit): boolean {
  if (hit.file.startsWith(`src/lib/providers/${hit.name}/`) || hit.file === 'src/lib/providers/registry.ts') return true
  return NOT_A_PROVIDER.some((n) => n.file === hit.file && n.text === hit.name)
}

function scanSrc(): Hit[] {
  const hits: Hit[] = []
  for (const path of sourceFiles(join(ROOT, 'src'))) {
    const file = relative(ROOT, path).split(sep).join('/')
    hits.push(...providerLiterals(file, readFileSync(path, 'utf8'), PROVIDER_NAMES))
  }
  return hits
}

describe('provider names in src/', () => {
  it('are written only in their own folder and the registry', () => {
    const outside = scanSrc()
      .filter((h) => !allowed(h))
      .map((h) => `${h.file}:${h.line} '${h.name}'`)
    expect(outside, 'ask the provider module for the capability instead (src/lib/providers/module.ts)').toEqual([])
  })

  it('are found however the literal is written, and not in comments, identifiers or prose', () => {
    const source = [
      "import {localModule} from './local/index.js' // 'aws'",
      "if (p === 'local') x()",
      'const a = {provider: "aws"}',
      'const b = `google`',
      'const c = `${x}oracle${y}`',
      "type S = 'local' | Other",
      "const prose = 'a local cluster on aws'",
      '/* provider === "oracle" */ const localThing = 1',
    ].join('\n')
    expect(providerLiterals('x.ts', source, ['local', 'aws', 'google', 'oracle']).map((h) => `${h.line}:${h.name}`)).toEqual([
      '2:local',
      '3:aws',
      '4:google',
      '5:oracle',
      '6:local',
    ])
  })

  it('keeps every exception in use (a stale one would hide a new literal in that file)', () => {
    const hits = scanSrc()
    for (const n of NOT_A_PROVIDER) expect(hits.some((h) => h.file === n.file && h.name === n.text), `${n.file} '${n.text}'`).toBe(true)
  })
})
