// What `citc status` and `citc nodes` load before they ask anything: module loading is most of their
// time on a local cluster (bench/status-1000.ts). execa is loaded only to spawn a detached process; SSH (ssh2) is loaded only for a cluster reached over
// SSH (cluster/management-node.ts imports it when it connects), and listr2 not at all (Ctrl-C handling
// is tasks/interrupts.ts). Checked on the static value imports — what Node loads with the module —
// from the TypeScript sources; `import type` and dynamic `import()` are not followed.
import {existsSync, readFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import ts from 'typescript'
import {describe, expect, it} from 'vitest'

const SRC = fileURLToPath(new URL('../../../../src', import.meta.url))

/** Specifiers of the imports Node loads with the module: not type-only, not dynamic. */
function staticValueImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false)
  const found: string[] = []
  for (const node of source.statements) {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause
      if (clause?.isTypeOnly) continue
      const named = clause?.namedBindings
      const onlyTypes = clause && !clause.name && named && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)
      if (!onlyTypes) found.push(node.moduleSpecifier.text)
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) && !node.isTypeOnly) {
      found.push(node.moduleSpecifier.text)
    }
  }
  return found
}

/** The packages a source file loads, with the chain of files that leads to each. */
function packagesLoadedBy(entry: string): Map<string, string[]> {
  const packages = new Map<string, string[]>()
  const seen = new Set<string>()
  const walk = (file: string, chain: string[]) => {
    if (seen.has(file)) return
    seen.add(file)
    for (const spec of staticValueImports(file)) {
      if (spec.startsWith('.')) {
        const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'))
        walk(existsSync(target) ? target : join(target.replace(/\.ts$/, ''), 'index.ts'), [...chain, file.slice(SRC.length + 1)])
      } else if (!spec.startsWith('node:')) {
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]
        if (!packages.has(name)) packages.set(name, [...chain, file.slice(SRC.length + 1)])
      }
    }
  }
  walk(join(SRC, entry), [])
  return packages
}

describe('what status and nodes load', () => {
  it('neither ssh2, listr2 nor execa before connecting (cluster-status.ts and what it imports)', () => {
    const loaded = packagesLoadedBy('lib/tasks/status/cluster-status.ts')
    // The walk works: the packages status needs are found, with their chains.
    expect(loaded.get('yaml')?.length).toBeGreaterThan(0)
    // execa: tools/exec.ts imports it only when a detached process is spawned.
    for (const pkg of ['ssh2', 'listr2', 'execa']) expect(loaded.get(pkg), `${pkg} is loaded through ${loaded.get(pkg)?.join(' > ')}`).toBeUndefined()
  })

  it('the commands themselves load their work only when they run', () => {
    for (const command of ['commands/status.ts', 'commands/nodes.ts']) {
      const loaded = packagesLoadedBy(command)
      expect([...loaded.keys()].sort(), command).toEqual(['@oclif/core', 'chalk'])
    }
  })
})
