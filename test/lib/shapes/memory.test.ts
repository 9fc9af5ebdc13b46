import {describe, expect, it} from 'vitest'

import {localRealMemory} from '../../../src/lib/providers/local/shapes.js'
import {catalogueFor} from '../../../src/lib/providers/catalogues.js'
import {citcOverheadMiB, cloudRealMemory} from '../../../src/lib/shapes/memory.js'

/** RealMemory as finish writes it: every shape of the provider's catalogue follows `rule`. */
function followsRule(provider: 'aws' | 'google' | 'oracle' | 'local', rule: (mib: number) => number) {
  const catalogue = catalogueFor(provider, {host: {cpus: 8, memoryMiB: 24104}})
  for (const name of catalogue.names()) {
    const s = catalogue.get(name)
    if (s) expect(s.realMemoryMiB, `${provider} ${name}`).toBe(rule(s.memoryMiB))
  }
}

describe('RealMemory policy', () => {
  it("is CitC's AWS formula in the usual range: MiB − (MiB^0.7 × 0.9 + 500), floored", () => {
    for (const mib of [2048, 4096, 7680, 8192, 16384, 32768]) {
      expect(cloudRealMemory(mib), String(mib)).toBe(Math.floor(mib - (mib ** 0.7 * 0.9 + 500)))
    }
    expect(cloudRealMemory(4096)).toBe(3291)
    expect(cloudRealMemory(8192)).toBe(7198)
    expect(catalogueFor('aws').get('t3a.medium')?.realMemoryMiB).toBe(3291)
  })

  it('is the same rule on every cloud: each catalogue uses it (without CitC Google bug)', () => {
    followsRule('aws', cloudRealMemory)
    followsRule('google', cloudRealMemory)
    followsRule('oracle', cloudRealMemory)
    expect(Math.floor(citcOverheadMiB(7680))).toBe(972) // what CitC wrote for n1-standard-2
    expect(catalogueFor('google').get('n1-standard-2')?.realMemoryMiB).toBe(6707)
  })

  it('never keeps more than 95 % on large machines, where the formula would overstate MemTotal', () => {
    // At 1 TiB the formula keeps only 1.45 %: less than the kernel's page map (1/64 of RAM) alone.
    const tib = 1024 * 1024
    expect(tib - (tib ** 0.7 * 0.9 + 500)).toBeGreaterThan(tib * (1 - 1 / 64))
    expect(cloudRealMemory(tib)).toBe(Math.floor(tib * 0.95))
    expect(cloudRealMemory(768 * 1024)).toBe(Math.floor(768 * 1024 * 0.95))
  })

  it('keeps half of a machine too small for the formula', () => {
    expect(512 - citcOverheadMiB(512)).toBeLessThan(0)
    expect(cloudRealMemory(512)).toBe(256)
    expect(cloudRealMemory(1024)).toBe(512)
    expect(cloudRealMemory(2)).toBe(1)
    expect(cloudRealMemory(1)).toBe(1)
  })

  it('is a whole number, above 0 and below the memory, everywhere from 2 MiB to 4 TiB', () => {
    for (let mib = 2; mib <= 4 * 1024 * 1024; mib = Math.ceil(mib * 1.07)) {
      const r = cloudRealMemory(mib)
      expect(Number.isInteger(r), String(mib)).toBe(true)
      expect(r, String(mib)).toBeGreaterThan(0)
      expect(r, String(mib)).toBeLessThan(mib)
    }
  })

  it('grows with the memory (a bigger shape never gets less)', () => {
    let last = 0
    for (let mib = 1; mib <= 4 * 1024 * 1024; mib = Math.ceil(mib * 1.03)) {
      const r = cloudRealMemory(mib)
      expect(r, String(mib)).toBeGreaterThanOrEqual(last)
      last = r
    }
  })

  it('local uses the shape memory as is (already a cap)', () => {
    expect(localRealMemory(512)).toBe(512)
    expect(localRealMemory(12052)).toBe(12052)
    expect(localRealMemory(0)).toBe(1)
    followsRule('local', localRealMemory)
  })
})
