// The import graph of src/lib as the TypeScript parser reads it: every import and export-from
// statement, `import type` included, every dynamic `import('…')` and every `import('…').T` type.
// Only relative specifiers count (packages and node: builtins are not part of src/lib's layers);
// `./x.js` resolves to `./x.ts`, `./x` to `./x.ts` or `./x/index.ts`.
import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {dirname, join, relative, resolve, sep} from 'node:path'

import ts from 'typescript'

/** File path relative to src/lib (e.g. `providers/aws/index.ts`) → the files it imports. */
export type ImportGraph = Map<string, Set<string>>

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return tsFiles(path)
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : []
  })
}

/** Every module specifier a file names, static or dynamic, value or type. */
export function specifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false)
  const found: string[] = []
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push(node.moduleSpecifier.text)
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.push(node.moduleReference.expression.text)
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments
      // A computed specifier would hide an edge from this graph: refuse it rather than miss it.
      if (!arg || !ts.isStringLiteralLike(arg)) throw new Error(`${fileName}: import() with a computed specifier (${node.getText(source)}); the layer test cannot follow it`)
      found.push(arg.text)
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push(node.argument.literal.text)
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

function resolveRelative(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec)
  const candidates = spec.endsWith('.js') ? [base.slice(0, -3) + '.ts'] : [base, `${base}.ts`, join(base, 'index.ts')]
  return candidates.find((c) => existsSync(c) && statSync(c).isFile())
}

/** The graph of every .ts file under `root` (src/lib), edges to files under `root` only. */
export function importGraph(root: string): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const file of tsFiles(root)) {
    const edges = new Set<string>()
    for (const spec of specifiers(file, readFileSync(file, 'utf8'))) {
      if (!spec.startsWith('.')) continue
      const target = resolveRelative(file, spec)
      if (!target) throw new Error(`${relative(root, file)}: cannot resolve ${spec}`)
      const rel = relative(root, target)
      if (rel.startsWith('..')) continue
      edges.add(rel.split(sep).join('/'))
    }
    graph.set(relative(root, file).split(sep).join('/'), edges)
  }
  return graph
}

/**
 * The layer a file belongs to: its first folder under src/lib (`providers/aws/driver.ts` →
 * `providers`). A file directly in src/lib is a layer of its own, named by its file name: errors.ts
 * sits at the bottom and base-command.ts near the top, so one "root" layer would make a cycle of
 * two files that have nothing to do with each other.
 */
export function layerOf(file: string): string {
  const slash = file.indexOf('/')
  return slash === -1 ? file : file.slice(0, slash)
}

/** The graph between layers, each edge with one file-level import that makes it. */
export function layerGraph(graph: ImportGraph): Map<string, Map<string, [string, string]>> {
  const out = new Map<string, Map<string, [string, string]>>()
  for (const [file, targets] of graph) {
    const from = layerOf(file)
    if (!out.has(from)) out.set(from, new Map())
    for (const target of targets) {
      const to = layerOf(target)
      if (to === from) continue
      const edges = out.get(from)!
      if (!edges.has(to)) edges.set(to, [file, target])
    }
  }
  return out
}

/** Strongly connected components with more than one member (Tarjan), largest first. */
export function cycles<T>(nodes: Iterable<T>, next: (n: T) => Iterable<T>): T[][] {
  let index = 0
  const idx = new Map<T, number>()
  const low = new Map<T, number>()
  const stack: T[] = []
  const onStack = new Set<T>()
  const out: T[][] = []
  const connect = (v: T): void => {
    idx.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    onStack.add(v)
    for (const w of next(v)) {
      if (!idx.has(w)) {
        connect(w)
        low.set(v, Math.min(low.get(v)!, low.get(w)!))
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, idx.get(w)!))
      }
    }
    if (low.get(v) === idx.get(v)) {
      const component: T[] = []
      let w: T
      do {
        w = stack.pop()!
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1) out.push(component)
    }
  }
  for (const n of nodes) if (!idx.has(n)) connect(n)
  return out.sort((a, b) => b.length - a.length)
}

/** A shortest path from `from` back to itself inside `within` (breadth first), as a list of nodes. */
export function shortestCycle<T>(from: T, next: (n: T) => Iterable<T>, within: Set<T>): T[] {
  const previous = new Map<T, T>()
  const queue: T[] = [from]
  while (queue.length > 0) {
    const v = queue.shift()!
    for (const w of next(v)) {
      if (!within.has(w)) continue
      if (w === from) {
        const path = [v]
        while (path[0] !== from) path.unshift(previous.get(path[0])!)
        return [...path, from]
      }
      if (!previous.has(w)) {
        previous.set(w, v)
        queue.push(w)
      }
    }
  }
  return []
}
