// This machine's NVIDIA GPUs as the local catalogue sees them: the information files of a stand-in
// gpuRoot (test/doubles/nvidia-gpus.ts), the type Slurm gets from each model name, and odd files skipped.
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {detectGpus, gpuType, nvidiaGpusDir, parseGpuInformation} from '../../../../src/lib/providers/local/gpus.js'
import {gpuInformation, standInGpuRoot} from '../../../doubles/nvidia-gpus.js'

const roots: string[] = []
const root = (...args: Parameters<typeof standInGpuRoot>) => {
  const r = standInGpuRoot(...args)
  roots.push(r)
  return r
}
afterAll(() => roots.forEach((r) => rmSync(r, {recursive: true, force: true})))

describe('gpuType: Slurm Gres type from the driver\'s model name', () => {
  it.each([
    ['NVIDIA H100 80GB HBM3', 'h100'],
    ['NVIDIA H100 PCIe', 'h100'],
    ['NVIDIA H100 NVL', 'h100'],
    ['NVIDIA A100-SXM4-80GB', 'a100'],
    ['NVIDIA A100 80GB PCIe', 'a100'],
    ['Tesla V100-SXM2-16GB', 'v100'],
    ['Tesla T4', 't4'],
    ['NVIDIA L40S', 'l40s'],
    ['NVIDIA L4', 'l4'],
    ['NVIDIA GeForce RTX 4090', 'rtx4090'],
    ['NVIDIA GeForce RTX 3080 Ti', 'rtx3080'],
    ['NVIDIA RTX A6000', 'rtxa6000'],
    ['Quadro RTX 8000', 'rtx8000'],
    ['NVIDIA GeForce GTX 1080', 'gtx1080'],
    ['NVIDIA TITAN V', 'titanv'],
    ['NVIDIA GH200 480GB', 'gh200'],
    ['NVIDIA', 'gpu'],
  ])('%s → %s', (model, type) => {
    expect(gpuType(model)).toBe(type)
    // Always a valid Gres type for limits.yaml's gpu model rule.
    expect(gpuType(model)).toMatch(/^[a-z0-9_]+$/)
  })
})

describe('parseGpuInformation', () => {
  it('reads model, bus location, device minor and excluded from the driver\'s layout', () => {
    expect(parseGpuInformation(gpuInformation({model: 'NVIDIA H100 80GB HBM3', minor: 3, bus: '0000:17:00.0'}))).toEqual({
      modelName: 'NVIDIA H100 80GB HBM3',
      bus: '0000:17:00.0',
      minor: 3,
      excluded: false,
    })
    expect(parseGpuInformation(gpuInformation({model: 'NVIDIA L4', minor: 0, bus: '0000:01:00.0', excluded: true}))?.excluded).toBe(true)
  })

  it('gives nothing for a file without a model or a numeric minor', () => {
    expect(parseGpuInformation('')).toBeUndefined()
    expect(parseGpuInformation('Model: \t NVIDIA L4\nDevice Minor: \t ?\n')).toBeUndefined()
    expect(parseGpuInformation('Device Minor: \t 0\n')).toBeUndefined()
  })
})

describe('detectGpus', () => {
  it('lists the usable GPUs sorted by minor, leaving out excluded ones and odd directories, without throwing', () => {
    const r = root([
      // Bus order is not minor order: the list is by minor (node k gets the k-th device).
      {model: 'NVIDIA H100 80GB HBM3', minor: 2, bus: '0000:01:00.0'},
      {model: 'NVIDIA H100 80GB HBM3', minor: 0},
      {model: 'NVIDIA H100 80GB HBM3', minor: 1, excluded: true},
      {model: 'NVIDIA L40S', minor: 3, bus: '0000:a1:00.0'},
    ])
    const dir = nvidiaGpusDir(r)
    mkdirSync(join(dir, '0000:b1:00.0')) // a directory without information (a GPU being reset)
    mkdirSync(join(dir, '0000:c1:00.0'))
    writeFileSync(join(dir, '0000:c1:00.0', 'information'), 'garbage\n')
    mkdirSync(join(dir, '0000:d1:00.0', 'information'), {recursive: true}) // unreadable as a file
    writeFileSync(join(dir, 'stray-file'), 'x')
    expect(detectGpus(r)).toEqual([
      {modelName: 'NVIDIA H100 80GB HBM3', type: 'h100', minor: 0, device: '/dev/nvidia0', bus: '0000:17:00.0'},
      {modelName: 'NVIDIA H100 80GB HBM3', type: 'h100', minor: 2, device: '/dev/nvidia2', bus: '0000:01:00.0'},
      {modelName: 'NVIDIA L40S', type: 'l40s', minor: 3, device: '/dev/nvidia3', bus: '0000:a1:00.0'},
    ])
  })

  it('no NVIDIA directory (no driver): no GPUs', () => {
    expect(detectGpus(root([]))).toEqual([])
    expect(detectGpus(join(root([]), 'nowhere'))).toEqual([])
  })
})
