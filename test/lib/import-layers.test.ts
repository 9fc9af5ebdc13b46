// Dependencies in src/lib point one way, downwards (design.md, "Layout"): checked on the real import
// graph — every import and export-from, `import type` included, every `import('…')` — so a new
// edge that closes a loop fails here, with the path of the loop and the import that makes each step.
//
// A layer is a folder directly under src/lib (providers/aws/driver.ts is in `providers`); a file
// directly in src/lib is a layer of its own (one "root" layer would tie errors.ts, which everything
// imports, to base-command.ts, which imports io.ts and errors.ts).
//
// The order differs from design.md's rough one in one place: cluster/ is above providers/, because
// cluster.yaml's and cluster.json's schemas are made from the provider modules (the registry's list),
// and a provider reads a cluster through providers/cluster-view.ts.
import {fileURLToPath} from 'node:url'

import {describe, expect, it} from 'vitest'

import {cycles, importGraph, layerGraph, layerOf, shortestCycle, specifiers} from '../helpers/import-graph.js'

const LIB = fileURLToPath(new URL('../../src/lib', import.meta.url))

/**
 * The layers, top to bottom: a file may import from its own layer and from the layers below it,
 * never from one above. Layers on one line are peers (no order between them; a loop between two
 * peers still fails the cycle check).
 */
const LAYERS: string[][] = [
  // Workflows: one folder per command; nodes/node-sync.ts's syncFromHost is the node sync program,
  // which starts from cluster.json as tasks/node/node-programs.ts's do.
  ['tasks', 'nodes'],
  // citc monitor: reaching a cluster's Prometheus (reach.ts), its query API, the page's server.
  ['monitoring'],
  // What citc does on a cluster: accounts, users, usage, images.
  ['usage', 'accounts', 'users', 'images'],
  // limits.yaml (parsed into slurm/'s model, checked against the provider's module) and the YAML reader.
  ['config'],
  // A cluster as citc keeps it: cluster.yaml, cluster.json, keys, lock, journal, the way to its
  // management node. Their provider parts come from the provider modules below (the registry's list).
  ['cluster'],
  // Everything provider-specific, behind ProviderModule. Reads a cluster through ClusterView
  // (providers/cluster-view.ts) and is handed what lives in cluster/ (the management contract's reader).
  ['providers'],
  ['metrics'], // citc metrics collect's parsers, cycle and textfile writer: reads slurm/'s node model.
  // slurm.conf's node model and renderers (pure), hostlists, scontrol: told what a provider needs, never which.
  ['slurm'],
  ['shapes'],
  ['transport'],
  // exec (the one importer of execa), Terraform, Ansible, tar.
  ['tools'],
  // The commands' base class (src/commands extend it); in src/lib only its types are imported.
  ['base-command.ts'],
  // Leaves: each imports errors.ts at most (stand-in.ts: the test seams).
  ['io.ts', 'cluster-name.ts', 'edit-distance.ts', 'package-root.ts', 'proc.ts', 'shell-quote.ts', 'ssh-fingerprint.ts', 'stand-in.ts', 'well-formed.ts'],
  ['errors.ts'],
]

const graph = importGraph(LIB)
const layers = layerGraph(graph)
const rank = new Map(LAYERS.flatMap((line, i) => line.map((layer) => [layer, i] as const)))

const step = (from: string, to: string) => {
  const [file, target] = layers.get(from)!.get(to)!
  return `  ${from} → ${to}   (${file} imports ${target})`
}

describe('the import graph of src/lib', () => {
  it('has no cycle between layers', () => {
    const next = (l: string) => layers.get(l)?.keys() ?? []
    // Each tangle (layers that all reach each other), then a shortest loop through each of its layers.
    const found = cycles(layers.keys(), next).map((component) => {
      const loops = new Map<string, string>()
      for (const loop of component.map((l) => shortestCycle(l, next, new Set(component)))) {
        const steps = loop.slice(1).map((to, i) => step(loop[i], to))
        // The same loop from another start: once.
        loops.set([...steps].sort().join('\n'), steps.join('\n'))
      }
      return [`${component.join(', ')}:`, ...[...loops.values()].map((loop, i) => `loop ${i + 1}:\n${loop}`)].join('\n')
    })
    expect(found, `layers that import each other (each loop: its layers, then one path through them):\n${found.join('\n')}`).toEqual([])
  })

  it('points downwards: no layer imports one above it', () => {
    const unplaced = [...layers.keys()].filter((l) => !rank.has(l))
    expect(unplaced, 'new folders or files under src/lib: give each its place in LAYERS (test/lib/import-layers.test.ts)').toEqual([])
    const upwards = [...layers].flatMap(([from, edges]) => [...edges.keys()].filter((to) => rank.get(to)! < rank.get(from)!).map((to) => step(from, to)))
    expect(upwards, `imports from a layer above (the order is LAYERS in this file):\n${upwards.join('\n')}`).toEqual([])
  })
})

describe('the graph this test reads', () => {
  it('sees static, type-only, re-exported and dynamic imports', () => {
    const text = [
      `import {a} from './a.js'`,
      `import type {B} from '../b.js'`,
      `export {c} from './c.js'`,
      `export type * from './d.js'`,
      `const e = await import('./e.js')`,
      `type F = import('./f.js').F`,
      `import 'node:fs'`,
    ].join('\n')
    expect(specifiers('x.ts', text)).toEqual(['./a.js', '../b.js', './c.js', './d.js', './e.js', './f.js', 'node:fs'])
  })

  it('refuses an import() it cannot follow', () => {
    expect(() => specifiers('x.ts', 'await import(`./${name}.js`)')).toThrow(/computed specifier/)
    expect(() => specifiers('x.ts', 'await import(name)')).toThrow(/computed specifier/)
  })

  it('knows the files and their layers', () => {
    expect(graph.get('providers/registry.ts')).toContain('providers/aws/index.ts')
    expect(layerOf('providers/aws/driver.ts')).toBe('providers')
    expect(layerOf('errors.ts')).toBe('errors.ts')
    // The shared helpers are in the bottom layer.
    expect([...layers.keys()]).toContain('errors.ts')
  })

  it('finds a loop and its path', () => {
    const g = new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]])
    const next = (n: string) => g.get(n) ?? []
    const [component] = cycles(g.keys(), next)
    expect(component.sort()).toEqual(['a', 'b', 'c'])
    expect(shortestCycle('a', next, new Set(component))).toEqual(['a', 'b', 'c', 'a'])
  })
})
