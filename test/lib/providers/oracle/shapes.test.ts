import {describe, expect, it} from 'vitest'

import {FLEX_FAMILIES, flexProblem, oracleCatalogue} from '../../../../src/lib/providers/oracle/shapes.js'
import type {Shape} from '../../../../src/lib/shapes/types.js'

const get = (name: string): Shape => {
  const s = oracleCatalogue.get(name)
  if (!s) throw new Error(`${name} missing`)
  return s
}

describe('oracle catalogue: fixed shapes', () => {
  it('VM.Standard2.1: 1 OCPU = 1 core × 2 threads, 15 GB', () => {
    expect(get('VM.Standard2.1')).toMatchObject({sockets: 1, coresPerSocket: 1, threadsPerCore: 2, memoryMiB: 15 * 1024, arch: 'x86_64'})
  })

  it('has known OCPU and memory values', () => {
    const known: Array<[string, number, number]> = [
      ['VM.Standard2.24', 24, 320],
      ['VM.Standard.E2.1', 1, 8],
      ['VM.Standard.E2.8', 8, 64],
      ['BM.Standard2.52', 52, 768],
      ['BM.Standard.E3.128', 128, 2048],
      ['BM.Standard.E4.128', 128, 2048],
      ['VM.GPU2.1', 12, 72],
      ['VM.GPU3.1', 6, 90],
      ['VM.GPU3.4', 24, 360],
      ['BM.GPU4.8', 64, 2048],
      ['BM.GPU.H100.8', 112, 2048],
    ]
    for (const [name, ocpus, gb] of known) {
      const s = get(name)
      expect(s.sockets * s.coresPerSocket, name).toBe(ocpus)
      expect(s.threadsPerCore, name).toBe(2)
      expect(s.memoryMiB, name).toBe(gb * 1024)
    }
  })

  it('bare metal is two sockets, VMs one', () => {
    expect(get('BM.Standard2.52')).toMatchObject({sockets: 2, coresPerSocket: 26})
    expect(get('BM.Standard.E4.128')).toMatchObject({sockets: 2, coresPerSocket: 64})
    expect(get('BM.GPU4.8')).toMatchObject({sockets: 2, coresPerSocket: 32})
    expect(get('VM.Standard2.24').sockets).toBe(1)
  })

  it('lists H100 bare metal: 8 GPUs, two sockets of 56 cores', () => {
    expect(get('BM.GPU.H100.8')).toMatchObject({gpu: {count: 8, model: 'h100'}, sockets: 2, coresPerSocket: 56, threadsPerCore: 2})
  })

  it('lists GPUs: P100, V100, A100', () => {
    expect(get('VM.GPU2.1').gpu).toEqual({count: 1, model: 'p100'})
    expect(get('VM.GPU3.1').gpu).toEqual({count: 1, model: 'v100'})
    expect(get('VM.GPU3.2').gpu).toEqual({count: 2, model: 'v100'})
    expect(get('VM.GPU3.4').gpu).toEqual({count: 4, model: 'v100'})
    expect(get('BM.GPU4.8').gpu).toEqual({count: 8, model: 'a100', nvswitch: true})
  })
})

describe('oracle catalogue: flexible shapes', () => {
  it('parses VM.Standard.E4.Flex.4.64', () => {
    expect(get('VM.Standard.E4.Flex.4.64')).toEqual(
      expect.objectContaining({name: 'VM.Standard.E4.Flex.4.64', sockets: 1, coresPerSocket: 4, threadsPerCore: 2, memoryMiB: 64 * 1024, arch: 'x86_64'}),
    )
  })

  it('A1 is arm64 with one thread per OCPU', () => {
    expect(get('VM.Standard.A1.Flex.4.24')).toMatchObject({coresPerSocket: 4, threadsPerCore: 1, memoryMiB: 24 * 1024, arch: 'arm64'})
    expect(get('VM.Standard.A1.Flex.80.512')).toMatchObject({coresPerSocket: 80, threadsPerCore: 1})
  })

  it('refuses sizes outside the family limits', () => {
    for (const name of [
      'VM.Standard.E4.Flex.0.1', // no OCPUs
      'VM.Standard.E4.Flex.65.128', // above 64 OCPUs
      'VM.Standard.E4.Flex.65.1024',
      'VM.Standard.E4.Flex.4.3', // below 1 GB per OCPU
      'VM.Standard.E4.Flex.4.257', // above 64 GB per OCPU
      'VM.Standard.E4.Flex.32.1025', // above 1024 GB
      'VM.Standard.A1.Flex.81.512',
      'VM.Standard.A1.Flex.16.513',
      'VM.Standard3.Flex.33.64',
      'VM.Optimized3.Flex.19.64',
      'VM.Optimized3.Flex.8.257',
      'VM.Standard.E5.Flex.95.128',
    ]) {
      expect(oracleCatalogue.get(name), name).toBeUndefined()
      expect(flexProblem(name), name).toBeDefined()
    }
  })

  it('accepts the edges of the limits', () => {
    for (const name of [
      'VM.Standard.E4.Flex.1.1',
      'VM.Standard.E4.Flex.1.64',
      'VM.Standard.E4.Flex.64.64',
      'VM.Standard.E4.Flex.64.1024',
      'VM.Standard.E3.Flex.16.1024',
      'VM.Standard.E5.Flex.94.1049',
      'VM.Standard3.Flex.32.512',
      'VM.Optimized3.Flex.18.256',
    ]) {
      expect(oracleCatalogue.get(name), name).toBeDefined()
      expect(flexProblem(name), name).toBeUndefined()
    }
  })

  it('refuses malformed sizes and a bare family name', () => {
    for (const name of [
      'VM.Standard.E4.Flex',
      'VM.Standard.E4.Flex.4',
      'VM.Standard.E4.Flex.4.64.1',
      'VM.Standard.E4.Flex.04.64',
      'VM.Standard.E4.Flex.4.64.',
      'VM.Standard.E4.Flex.1.5.16',
      'VM.Standard.E4.Flex.x.16',
      'VM.Standard.E4.Flex.-1.16',
      'vm.standard.e4.flex.4.64',
      'VM.Standard.E4.FlexX.4.64',
    ]) {
      expect(oracleCatalogue.get(name), name).toBeUndefined()
    }
    expect(flexProblem('VM.Standard.E4.Flex')).toMatch(/needs its size/)
    expect(flexProblem('VM.Standard.E4.Flex.65.100')).toMatch(/1-64 OCPUs/)
    expect(flexProblem('VM.Standard.E4.Flex.4.300')).toMatch(/4-256 GB/)
    expect(flexProblem('VM.Standard2.1')).toBeUndefined()
  })

  it('lists flex families by their pattern', () => {
    const names = oracleCatalogue.names()
    for (const f of FLEX_FAMILIES) expect(names).toContain(`${f.name}.<ocpus>.<gb>`)
    expect(names).toContain('VM.Standard.E4.Flex.<ocpus>.<gb>')
    expect(oracleCatalogue.get('VM.Standard.E4.Flex.<ocpus>.<gb>')).toBeUndefined()
  })
})
