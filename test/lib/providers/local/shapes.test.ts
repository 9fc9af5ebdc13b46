import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import type {LocalGpu} from '../../../../src/lib/providers/local/gpus.js'
import {archOf, detectHost, localCatalogue, physicalCores} from '../../../../src/lib/providers/local/shapes.js'
import {standInGpuRoot} from '../../../doubles/nvidia-gpus.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-shapes-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

describe('local catalogue', () => {
  it('has small, medium and large, one socket, one thread per core', () => {
    const c = localCatalogue({cpus: 8, cores: 4, memoryMiB: 16384, arch: 'x86_64'})
    expect(c.names()).toEqual(['local.small', 'local.medium', 'local.large'])
    expect(c.get('local.small')).toMatchObject({sockets: 1, coresPerSocket: 1, threadsPerCore: 1, memoryMiB: 512, realMemoryMiB: 512})
    expect(c.get('local.medium')).toMatchObject({sockets: 1, coresPerSocket: 2, threadsPerCore: 1, memoryMiB: 1024})
    // Every physical core (hyperthreads are not cores), half the memory.
    expect(c.get('local.large')).toMatchObject({sockets: 1, coresPerSocket: 4, threadsPerCore: 1, memoryMiB: 8192, realMemoryMiB: 8192})
    expect(c.provider).toBe('local')
  })

  it('never asks more than a small host has', () => {
    const c = localCatalogue({cpus: 1, memoryMiB: 600})
    expect(c.get('local.small')).toMatchObject({coresPerSocket: 1, memoryMiB: 300})
    expect(c.get('local.medium')).toMatchObject({coresPerSocket: 1, memoryMiB: 300})
    expect(c.get('local.large')).toMatchObject({coresPerSocket: 1, memoryMiB: 300})
  })

  it('takes cores = cpus when only cpus are given, and arch from the host', () => {
    const c = localCatalogue({cpus: 6, memoryMiB: 4096, arch: 'arm64'})
    expect(c.get('local.large')).toMatchObject({coresPerSocket: 6, memoryMiB: 2048, arch: 'arm64'})
    expect(archOf('x64')).toBe('x86_64')
    expect(archOf('arm64')).toBe('arm64')
  })

  it('counts physical cores from the sysfs topology (hyperthread siblings once)', () => {
    const sys = join(dir, 'cpu')
    // 2 packages × 2 cores × 2 threads = 8 CPUs, plus an offline cpu8 without topology.
    let n = 0
    for (const pkg of [0, 1]) {
      // Linux numbers the second thread of each core after all first threads: cores 0, 1, 0, 1.
      for (const core of [0, 1, 0, 1]) {
        const topo = join(sys, `cpu${n++}`, 'topology')
        mkdirSync(topo, {recursive: true})
        writeFileSync(join(topo, 'physical_package_id'), `${pkg}\n`)
        writeFileSync(join(topo, 'core_id'), `${core}\n`)
      }
    }
    mkdirSync(join(sys, 'cpu8'), {recursive: true})
    mkdirSync(join(sys, 'cpufreq'), {recursive: true})
    expect(physicalCores(sys)).toBe(4)
    expect(physicalCores(join(dir, 'nowhere'))).toBeUndefined()
  })

  it("detects this machine: never more cores or memory than slurmd itself finds here", () => {
    const host = detectHost()
    expect(host.cpus).toBeGreaterThanOrEqual(1)
    expect(host.cores).toBeGreaterThanOrEqual(1)
    expect(host.cores).toBeLessThanOrEqual(host.cpus)

    // slurmd -C prints the hardware as slurmd will register it.
    const r = spawnSync('slurmd', ['-C'], {encoding: 'utf8', env: {...process.env, PATH: `${process.env.PATH}:/usr/sbin:/sbin`}})
    expect(r.status, `slurmd -C: ${r.stderr}`).toBe(0)
    const field = (k: string) => Number(new RegExp(`\\b${k}=(\\d+)`).exec(r.stdout)?.[1])
    const hwCores = field('SocketsPerBoard') * field('CoresPerSocket') * field('Boards')
    const hwThreads = hwCores * field('ThreadsPerCore')
    const hwMemory = field('RealMemory')

    const c = localCatalogue()
    for (const name of c.names()) {
      const s = c.get(name)!
      const cores = s.sockets * s.coresPerSocket
      expect(cores, name).toBeLessThanOrEqual(hwCores)
      expect(cores * s.threadsPerCore, name).toBeLessThanOrEqual(hwThreads)
      expect(s.realMemoryMiB, name).toBeLessThanOrEqual(hwMemory)
    }
  })
})

const gpu = (type: string, minor: number): LocalGpu => ({modelName: `NVIDIA ${type.toUpperCase()}`, type, minor, device: `/dev/nvidia${minor}`, bus: `0000:${minor}:00.0`})

describe('local GPU shapes', () => {
  it('no GPU: no GPU shape, and the source says so', () => {
    const c = localCatalogue({cpus: 8, cores: 4, memoryMiB: 16384, gpus: []})
    expect(c.names()).toEqual(['local.small', 'local.medium', 'local.large'])
    expect(c.source).toMatch(/no NVIDIA GPU$/)
  })

  it('4 GPUs of one type: local.h100x1 (a quarter of the cores and of the cap each) and local.h100x4 (all)', () => {
    const c = localCatalogue({cpus: 64, cores: 32, memoryMiB: 512 * 1024, gpus: [0, 1, 2, 3].map((m) => gpu('h100', m))})
    expect(c.names()).toEqual(['local.small', 'local.medium', 'local.large', 'local.h100x1', 'local.h100x4'])
    const devices = ['/dev/nvidia0', '/dev/nvidia1', '/dev/nvidia2', '/dev/nvidia3']
    expect(c.get('local.h100x1')).toMatchObject({sockets: 1, coresPerSocket: 8, threadsPerCore: 1, memoryMiB: 65536, realMemoryMiB: 65536, gpu: {count: 1, model: 'h100', devices}})
    expect(c.get('local.h100x4')).toMatchObject({sockets: 1, coresPerSocket: 32, threadsPerCore: 1, memoryMiB: 262144, gpu: {count: 4, model: 'h100', devices}})
    // The CPU shapes are as without GPUs.
    expect(c.get('local.large')).toMatchObject({coresPerSocket: 32, memoryMiB: 262144})
    expect(c.get('local.small')).toMatchObject({coresPerSocket: 1, memoryMiB: 512})
    expect(c.source).toContain('4 h100 GPU(s) (/dev/nvidia0, /dev/nvidia1, /dev/nvidia2, /dev/nvidia3)')
  })

  it('two types: shares divide by every GPU; one GPU of a type has no xN shape; never below one core', () => {
    const c = localCatalogue({cpus: 2, cores: 2, memoryMiB: 3000, gpus: [gpu('rtx4090', 0), gpu('a100', 1), gpu('rtx4090', 2)]})
    expect(c.names()).toEqual(['local.small', 'local.medium', 'local.large', 'local.rtx4090x1', 'local.rtx4090x2', 'local.a100x1'])
    // 2 cores / 3 GPUs → 1 core; 1500 MiB cap / 3 → 500 MiB.
    expect(c.get('local.rtx4090x1')).toMatchObject({coresPerSocket: 1, memoryMiB: 500, gpu: {count: 1, model: 'rtx4090', devices: ['/dev/nvidia0', '/dev/nvidia2']}})
    expect(c.get('local.rtx4090x2')).toMatchObject({coresPerSocket: 2, memoryMiB: 1500, gpu: {count: 2, model: 'rtx4090', devices: ['/dev/nvidia0', '/dev/nvidia2']}})
    expect(c.get('local.a100x1')).toMatchObject({coresPerSocket: 1, memoryMiB: 500, gpu: {count: 1, model: 'a100', devices: ['/dev/nvidia1']}})
    expect(c.get('local.a100x2')).toBeUndefined()
  })

  it('detectHost reads the GPUs under gpuRoot', () => {
    const r = standInGpuRoot([{model: 'NVIDIA L40S', minor: 1}, {model: 'NVIDIA L40S', minor: 0}], dir)
    const host = detectHost(undefined, r)
    expect(host.gpus.map((g) => [g.type, g.device])).toEqual([['l40s', '/dev/nvidia0'], ['l40s', '/dev/nvidia1']])
    expect(localCatalogue(host).names()).toContain('local.l40sx2')
  })
})
