import {describe, expect, it} from 'vitest'

import {googleCatalogue} from '../../../../src/lib/providers/google/shapes.js'
import {citcOverheadMiB} from '../../../../src/lib/shapes/memory.js'
import type {Shape} from '../../../../src/lib/shapes/types.js'

const get = (name: string): Shape => {
  const s = googleCatalogue.get(name)
  if (!s) throw new Error(`${name} missing`)
  return s
}
const vcpus = (s: Shape) => s.sockets * s.coresPerSocket * s.threadsPerCore

describe('google catalogue', () => {
  it('n1-standard-2: 7680 MiB, and a RealMemory far above CitC buggy 972', () => {
    const s = get('n1-standard-2')
    expect(s).toMatchObject({sockets: 1, coresPerSocket: 1, threadsPerCore: 2, memoryMiB: 7680, arch: 'x86_64'})
    // CitC's Google formula kept only the overhead term.
    expect(Math.floor(citcOverheadMiB(7680))).toBe(972)
    expect(s.realMemoryMiB).toBe(6707)
    expect(s.realMemoryMiB).toBeGreaterThan(5 * 972)
  })

  it('a one-vCPU type is one thread of one core', () => {
    expect(get('n1-standard-1')).toMatchObject({sockets: 1, coresPerSocket: 1, threadsPerCore: 1, memoryMiB: 3840})
    expect(get('t2a-standard-1')).toMatchObject({coresPerSocket: 1, threadsPerCore: 1, arch: 'arm64'})
  })

  it('has known vCPU and memory values (MiB as the API reports memoryMb)', () => {
    const known: Array<[string, number, number]> = [
      ['n1-highmem-2', 2, 13312],
      ['n1-highcpu-2', 2, 1843],
      ['n1-highcpu-16', 16, 14746],
      ['n1-standard-96', 96, 368640],
      ['n2-standard-2', 2, 8192],
      ['n2-highmem-128', 128, 864 * 1024],
      ['n2-highcpu-96', 96, 96 * 1024],
      ['n2d-standard-224', 224, 896 * 1024],
      ['e2-micro', 2, 1024],
      ['e2-small', 2, 2048],
      ['e2-medium', 2, 4096],
      ['e2-highmem-16', 16, 128 * 1024],
      ['c2-standard-60', 60, 240 * 1024],
      ['c2d-standard-112', 112, 448 * 1024],
      ['c3-standard-22', 22, 88 * 1024],
      ['c3-standard-176', 176, 704 * 1024],
      ['t2a-standard-48', 48, 192 * 1024],
      ['a2-highgpu-1g', 12, 85 * 1024],
      ['a2-highgpu-8g', 96, 680 * 1024],
      ['g2-standard-4', 4, 16 * 1024],
      ['g2-standard-96', 96, 384 * 1024],
      ['a3-highgpu-1g', 26, 234 * 1024],
      ['a3-highgpu-2g', 52, 468 * 1024],
      ['a3-highgpu-4g', 104, 936 * 1024],
      ['a3-highgpu-8g', 208, 1872 * 1024],
      ['a3-megagpu-8g', 208, 1872 * 1024],
    ]
    for (const [name, cpus, mib] of known) {
      expect(vcpus(get(name)), name).toBe(cpus)
      expect(get(name).memoryMiB, name).toBe(mib)
    }
  })

  it('sockets × cores × threads is the vCPU count in the name, for every shape', () => {
    for (const name of googleCatalogue.names()) {
      const m = /^(?:n1|n2|n2d|e2|c2|c2d|c3|t2a|g2)-[a-z]+-(\d+)$/.exec(name)
      if (m) expect(vcpus(get(name)), name).toBe(Number(m[1]))
    }
  })

  it('lists A100 and L4 GPUs', () => {
    expect(get('a2-highgpu-1g').gpu).toEqual({count: 1, model: 'a100'})
    expect(get('a2-highgpu-2g').gpu).toEqual({count: 2, model: 'a100'})
    expect(get('a2-highgpu-4g').gpu).toEqual({count: 4, model: 'a100'})
    expect(get('a2-highgpu-8g').gpu).toEqual({count: 8, model: 'a100', nvswitch: true})
    expect(get('g2-standard-8').gpu).toEqual({count: 1, model: 'l4'})
    expect(get('g2-standard-24').gpu).toEqual({count: 2, model: 'l4'})
    expect(get('g2-standard-48').gpu).toEqual({count: 4, model: 'l4'})
    expect(get('g2-standard-96').gpu).toEqual({count: 8, model: 'l4'})
    expect(get('n1-standard-8').gpu).toBeUndefined()
  })

  it('lists H100 GPUs on A3, one to eight, the 8-GPU sizes on two sockets', () => {
    expect(get('a3-highgpu-1g').gpu).toEqual({count: 1, model: 'h100'})
    expect(get('a3-highgpu-2g').gpu).toEqual({count: 2, model: 'h100'})
    expect(get('a3-highgpu-4g')).toMatchObject({gpu: {count: 4, model: 'h100'}, sockets: 1, coresPerSocket: 52})
    expect(get('a3-highgpu-8g')).toMatchObject({gpu: {count: 8, model: 'h100'}, sockets: 2, coresPerSocket: 52, threadsPerCore: 2})
    expect(get('a3-megagpu-8g').gpu).toEqual({count: 8, model: 'h100', nvswitch: true})
    // Not confirmed offline: not listed (see the catalogue's comment).
    expect(googleCatalogue.get('a3-ultragpu-8g')).toBeUndefined()
  })

  it('x86 types have 2 threads per core; t2a is arm64 with 1', () => {
    for (const name of googleCatalogue.names()) {
      const s = get(name)
      if (name.startsWith('t2a-')) expect(s, name).toMatchObject({arch: 'arm64', threadsPerCore: 1})
      else expect(s.arch, name).toBe('x86_64')
      if (!name.startsWith('t2a-') && vcpus(s) > 1) expect(s.threadsPerCore, name).toBe(2)
    }
  })

  it('shows types larger than one host socket as two sockets, smaller ones as one', () => {
    expect(get('n1-standard-32').sockets).toBe(1)
    expect(get('n1-standard-64')).toMatchObject({sockets: 2, coresPerSocket: 16, threadsPerCore: 2})
    expect(get('n2-standard-64').sockets).toBe(1)
    expect(get('n2-standard-128')).toMatchObject({sockets: 2, coresPerSocket: 32})
    expect(get('c2-standard-30').sockets).toBe(1)
    expect(get('c2-standard-60')).toMatchObject({sockets: 2, coresPerSocket: 15})
    expect(get('c3-standard-176')).toMatchObject({sockets: 2, coresPerSocket: 44})
    expect(get('e2-standard-32').sockets).toBe(1)
    expect(get('t2a-standard-48').sockets).toBe(1)
  })

  it('covers every requested series', () => {
    const names = googleCatalogue.names()
    for (const prefix of ['n1-standard-', 'n1-highmem-', 'n1-highcpu-', 'n2-standard-', 'n2-highmem-', 'n2-highcpu-', 'n2d-standard-', 'e2-standard-', 'e2-highmem-', 'e2-highcpu-', 'c2-standard-', 'c2d-standard-', 'c3-standard-', 't2a-standard-', 'a2-highgpu-', 'a3-highgpu-', 'a3-megagpu-', 'g2-standard-']) {
      expect(names.some((n) => n.startsWith(prefix)), prefix).toBe(true)
    }
  })
})
