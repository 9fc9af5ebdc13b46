import {describe, expect, it} from 'vitest'

import {awsCatalogue, awsSizeVcpus} from '../../../../src/lib/providers/aws/shapes.js'
import type {Shape} from '../../../../src/lib/shapes/types.js'

const get = (name: string): Shape => {
  const s = awsCatalogue.get(name)
  if (!s) throw new Error(`${name} missing`)
  return s
}
const vcpus = (s: Shape) => s.sockets * s.coresPerSocket * s.threadsPerCore

describe('aws catalogue', () => {
  it('t3a.medium: 2 vCPUs = 1 socket × 1 core × 2 threads, 4 GiB, x86_64', () => {
    expect(get('t3a.medium')).toMatchObject({sockets: 1, coresPerSocket: 1, threadsPerCore: 2, memoryMiB: 4096, arch: 'x86_64'})
    expect(get('t3a.medium').gpu).toBeUndefined()
  })

  it('Graviton is arm64 with one thread per core', () => {
    expect(get('c6g.xlarge')).toMatchObject({sockets: 1, coresPerSocket: 4, threadsPerCore: 1, memoryMiB: 8192, arch: 'arm64'})
    expect(get('c6g.medium')).toMatchObject({coresPerSocket: 1, threadsPerCore: 1, memoryMiB: 2048})
    expect(get('t4g.micro')).toMatchObject({coresPerSocket: 2, threadsPerCore: 1, memoryMiB: 1024, arch: 'arm64'})
    expect(get('m7g.metal')).toMatchObject({sockets: 1, coresPerSocket: 64, memoryMiB: 256 * 1024})
    for (const name of awsCatalogue.names().filter((n) => /^(t4g|c6g|c7g|m6g|m7g|r6g)\./.test(n))) {
      expect(get(name).arch, name).toBe('arm64')
      expect(get(name).threadsPerCore, name).toBe(1)
    }
  })

  it('x86 families have 2 threads per core', () => {
    for (const name of awsCatalogue.names().filter((n) => !/^(t4g|c6g|c7g|m6g|m7g|r6g)\./.test(n))) {
      expect(get(name).arch, name).toBe('x86_64')
      expect(get(name).threadsPerCore, name).toBe(2)
    }
  })

  it('has known vCPU and memory values', () => {
    const known: Array<[string, number, number]> = [
      ['t3.nano', 2, 0.5],
      ['t3.2xlarge', 8, 32],
      ['c5.large', 2, 4],
      ['c5.9xlarge', 36, 72],
      ['c5.18xlarge', 72, 144],
      ['c5.metal', 96, 192],
      ['c5a.24xlarge', 96, 192],
      ['c6i.32xlarge', 128, 256],
      ['c6a.48xlarge', 192, 384],
      ['c7i.metal-24xl', 96, 192],
      ['c7i.metal-48xl', 192, 384],
      ['m5.xlarge', 4, 16],
      ['m5a.24xlarge', 96, 384],
      ['m6i.metal', 128, 512],
      ['m6a.metal', 192, 768],
      ['m6g.medium', 1, 4],
      ['m7i.48xlarge', 192, 768],
      ['r5.large', 2, 16],
      ['r5.metal', 96, 768],
      ['r6i.32xlarge', 128, 1024],
      ['r6g.16xlarge', 64, 512],
      ['p3.2xlarge', 8, 61],
      ['p4d.24xlarge', 96, 1152],
      ['p5.48xlarge', 192, 2048],
      ['g6.xlarge', 4, 16],
      ['g6.12xlarge', 48, 192],
      ['g6.48xlarge', 192, 768],
      ['g6e.xlarge', 4, 32],
      ['g6e.16xlarge', 64, 512],
      ['g6e.48xlarge', 192, 1536],
    ]
    for (const [name, cpus, gib] of known) {
      expect(vcpus(get(name)), name).toBe(cpus)
      expect(get(name).memoryMiB, name).toBe(gib * 1024)
    }
  })

  it('lists GPUs: g4dn T4, g5 A10G, p3 V100, p4d A100', () => {
    expect(get('g4dn.xlarge')).toMatchObject({gpu: {count: 1, model: 't4'}, memoryMiB: 16384})
    expect(get('g4dn.12xlarge').gpu).toEqual({count: 4, model: 't4'})
    expect(get('g4dn.metal').gpu).toEqual({count: 8, model: 't4'})
    expect(get('g5.xlarge').gpu).toEqual({count: 1, model: 'a10g'})
    expect(get('g5.48xlarge')).toMatchObject({gpu: {count: 8, model: 'a10g'}, memoryMiB: 768 * 1024})
    expect(get('p3.8xlarge')).toMatchObject({gpu: {count: 4, model: 'v100'}, memoryMiB: 244 * 1024})
    expect(get('p3.16xlarge').gpu).toEqual({count: 8, model: 'v100'})
    expect(get('p4d.24xlarge').gpu).toEqual({count: 8, model: 'a100', nvswitch: true})
    expect(get('c5.xlarge').gpu).toBeUndefined()
  })

  it('lists current GPUs: p5 H100, g6 L4, g6e L40S, with their multi-GPU sizes', () => {
    expect(get('p5.48xlarge')).toMatchObject({gpu: {count: 8, model: 'h100'}, sockets: 2, coresPerSocket: 48, threadsPerCore: 2})
    const counts = (family: string) => Object.fromEntries(awsCatalogue.names().filter((n) => n.startsWith(`${family}.`)).map((n) => [n, get(n).gpu?.count]))
    expect(counts('g6')).toEqual({
      'g6.xlarge': 1, 'g6.2xlarge': 1, 'g6.4xlarge': 1, 'g6.8xlarge': 1,
      'g6.12xlarge': 4, 'g6.16xlarge': 1, 'g6.24xlarge': 4, 'g6.48xlarge': 8,
    })
    expect(counts('g6e')).toEqual({
      'g6e.xlarge': 1, 'g6e.2xlarge': 1, 'g6e.4xlarge': 1, 'g6e.8xlarge': 1,
      'g6e.12xlarge': 4, 'g6e.16xlarge': 1, 'g6e.24xlarge': 4, 'g6e.48xlarge': 8,
    })
    expect(get('g6.2xlarge').gpu?.model).toBe('l4')
    expect(get('g6e.24xlarge').gpu?.model).toBe('l40s')
  })

  it('shows instances larger than one host socket as two sockets', () => {
    expect(get('c5.12xlarge')).toMatchObject({sockets: 1, coresPerSocket: 24})
    expect(get('c5.24xlarge')).toMatchObject({sockets: 2, coresPerSocket: 24, threadsPerCore: 2})
    expect(get('m6i.32xlarge')).toMatchObject({sockets: 2, coresPerSocket: 32})
    expect(get('c6a.24xlarge')).toMatchObject({sockets: 1, coresPerSocket: 48})
    expect(get('p3.16xlarge')).toMatchObject({sockets: 2, coresPerSocket: 16})
  })

  it('covers every requested family', () => {
    const families = new Set(awsCatalogue.names().map((n) => n.split('.')[0]))
    for (const f of 't3 t3a t4g c5 c5a c6i c6a c6g c7g c7i m5 m5a m6i m6a m6g m7g m7i r5 r6i r6g g4dn g5 g6 g6e p3 p4d p5'.split(' ')) {
      expect(families.has(f), f).toBe(true)
    }
  })

  it('sockets × cores × threads is the vCPU count the size name says, for every shape', () => {
    for (const name of awsCatalogue.names()) {
      const size = name.split('.')[1]
      if (!/^(\d*xlarge|large|metal-\d+xl)$/.test(size)) continue
      expect(vcpus(get(name)), name).toBe(awsSizeVcpus(size))
    }
  })

  it('reads EC2 size names', () => {
    expect(awsSizeVcpus('medium')).toBe(1)
    expect(awsSizeVcpus('large')).toBe(2)
    expect(awsSizeVcpus('xlarge')).toBe(4)
    expect(awsSizeVcpus('9xlarge')).toBe(36)
    expect(awsSizeVcpus('metal-48xl')).toBe(192)
    expect(awsSizeVcpus('metal:96')).toBe(96)
    expect(() => awsSizeVcpus('huge')).toThrow(/unknown EC2 size/)
  })

  it('does not invent sizes a family does not have', () => {
    for (const name of ['t3.4xlarge', 'c5a.metal', 'm5a.metal', 'c6g.24xlarge', 'g5.metal', 'c5.medium', 'T3a.medium']) {
      expect(awsCatalogue.get(name), name).toBeUndefined()
    }
  })
})
