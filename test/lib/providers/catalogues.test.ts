// Invariants that hold for every shape of every catalogue: a NodeName line Slurm accepts, with a
// RealMemory that never drains the node.
import {describe, expect, it} from 'vitest'

import {catalogueFor} from '../../../src/lib/providers/catalogues.js'
import {PROVIDER_NAMES} from '../../../src/lib/providers/registry.js'
import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'

/** Every shape of a catalogue, with Oracle's flex families at a few sizes inside their limits. */
function allShapes(c: ShapeCatalogue): Shape[] {
  const out: Shape[] = []
  for (const name of c.names()) {
    if (!name.includes('<')) {
      const s = c.get(name)
      expect(s, name).toBeDefined()
      out.push(s!)
      continue
    }
    const family = name.replace(/\.<ocpus>\.<gb>$/, '')
    for (const size of ['1.1', '1.16', '2.32', '4.64', '8.512', '16.256', '18.256']) {
      const s = c.get(`${family}.${size}`)
      if (s) out.push(s)
    }
  }
  return out
}

const catalogues = PROVIDER_NAMES.map((p) => [p, catalogueFor(p)] as const)

describe.each(catalogues)('%s catalogue', (provider, c) => {
  const shapes = allShapes(c)

  it('knows its provider and names its source with a date', () => {
    expect(c.provider).toBe(provider)
    if (provider !== 'local') expect(c.source).toMatch(/checked 20\d\d-\d\d/)
    expect(shapes.length).toBeGreaterThanOrEqual(3)
  })

  it('has unique names, and get() returns the shape under its own name', () => {
    const names = c.names()
    expect(new Set(names).size).toBe(names.length)
    for (const s of shapes) expect(c.get(s.name)?.name).toBe(s.name)
  })

  it('gives positive whole sockets, cores and threads (1 or 2)', () => {
    for (const s of shapes) {
      for (const n of [s.sockets, s.coresPerSocket, s.threadsPerCore]) {
        expect(Number.isInteger(n) && n >= 1, `${s.name}: ${n}`).toBe(true)
      }
      expect([1, 2], s.name).toContain(s.threadsPerCore)
      expect([1, 2], s.name).toContain(s.sockets)
      if (s.arch === 'arm64') expect(s.threadsPerCore, s.name).toBe(1)
    }
  })

  it('keeps RealMemory a whole number above 0 and never above the memory (below it on clouds)', () => {
    for (const s of shapes) {
      expect(Number.isInteger(s.realMemoryMiB), s.name).toBe(true)
      expect(s.realMemoryMiB, s.name).toBeGreaterThan(0)
      if (provider === 'local') expect(s.realMemoryMiB, s.name).toBeLessThanOrEqual(s.memoryMiB)
      else expect(s.realMemoryMiB, s.name).toBeLessThan(s.memoryMiB)
    }
  })

  it('describes GPUs with a positive count and a lower-case Gres type', () => {
    for (const s of shapes.filter((x) => x.gpu)) {
      expect(s.gpu!.count, s.name).toBeGreaterThan(0)
      expect(s.gpu!.model, s.name).toMatch(/^[a-z0-9]+$/)
    }
  })

  it('hands out copies: changing a returned shape does not change the catalogue', () => {
    const s = shapes[0]
    const got = c.get(s.name)!
    got.realMemoryMiB = -1
    expect(c.get(s.name)!.realMemoryMiB).toBe(s.realMemoryMiB)
  })

  it('knows no shape under an empty, unknown or differently-cased name', () => {
    expect(c.get('')).toBeUndefined()
    expect(c.get('no-such-shape')).toBeUndefined()
    const name = shapes[0].name
    if (name.toUpperCase() !== name) expect(c.get(name.toUpperCase())).toBeUndefined()
  })
})

describe('catalogueFor', () => {
  it('returns the catalogue of each provider', () => {
    expect(catalogueFor('aws').get('c5.xlarge')).toBeDefined()
    expect(catalogueFor('google').get('n1-standard-1')).toBeDefined()
    expect(catalogueFor('oracle').get('VM.Standard2.1')).toBeDefined()
    expect(catalogueFor('local').get('local.small')).toBeDefined()
  })

  it('builds the local catalogue for a given host', () => {
    const c = catalogueFor('local', {host: {cpus: 16, cores: 8, memoryMiB: 65536}})
    expect(c.get('local.large')).toMatchObject({coresPerSocket: 8, memoryMiB: 32768})
  })
})
