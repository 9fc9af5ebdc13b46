import {describe, expect, it} from 'vitest'

import {gpuDriverLabel, gpuImageCheck, gpuImageVars, gresGpuCount, noGpuDriverReason} from '../../../src/lib/images/gpu.js'
import {gpuDriverOf} from '../../../src/lib/providers/image-types.js'
import {catalogueFor} from '../../../src/lib/providers/catalogues.js'
import type {Shape} from '../../../src/lib/shapes/types.js'

const shape = (provider: 'aws' | 'google' | 'oracle', name: string): Shape => {
  const s = catalogueFor(provider).get(name)
  if (!s) throw new Error(`${name} missing from the ${provider} catalogue`)
  return s
}

describe('gpuImageVars', () => {
  it('is a GPU image when any shape of the limits has GPUs', () => {
    expect(gpuImageVars([shape('aws', 'c5.xlarge'), shape('aws', 'g6.xlarge')])).toEqual({compute_gpu: true})
    expect(gpuImageVars([shape('google', 'a3-highgpu-8g')])).toEqual({compute_gpu: true})
    expect(gpuImageVars([shape('oracle', 'VM.Standard.E4.Flex.4.64'), shape('oracle', 'BM.GPU.H100.8')])).toEqual({compute_gpu: true})
  })

  it('is a plain image without GPU shapes, and for empty limits', () => {
    expect(gpuImageVars([shape('aws', 'c5.xlarge'), shape('aws', 't3a.medium')])).toEqual({compute_gpu: false})
    expect(gpuImageVars([])).toEqual({compute_gpu: false})
    // A zero count is no GPU.
    expect(gpuImageVars([{gpu: {count: 0, model: 'l4'}}])).toEqual({compute_gpu: false})
  })

  it('passes a driver branch only for a GPU image, and the role default otherwise', () => {
    expect(gpuImageVars([shape('aws', 'p5.48xlarge')], {driverBranch: '570'})).toEqual({compute_gpu: true, nvidia_driver_branch: '570'})
    expect(gpuImageVars([shape('aws', 'c5.xlarge')], {driverBranch: '570'})).toEqual({compute_gpu: false})
    expect(gpuImageVars([shape('aws', 'p5.48xlarge')])).not.toHaveProperty('nvidia_driver_branch')
  })

  it('refuses a branch that is not a branch number (it becomes part of package names)', () => {
    for (const bad of ['', '58', '580-server', '580; rm -rf /', '0580', 'latest']) {
      expect(() => gpuImageVars([shape('aws', 'g6.xlarge')], {driverBranch: bad}), bad).toThrow(/not a branch number/)
    }
  })
})

describe("an image's GPU driver", () => {
  it("is read from the image's own record: a label, null for none, undefined when it does not say", () => {
    expect(gpuDriverOf({name: 'x', gpu_driver: '580'})).toBe('580')
    expect(gpuDriverOf({name: 'x', gpu_driver: '535 (Debian 12)'})).toBe('535 (Debian 12)')
    expect(gpuDriverOf({name: 'x', gpu_driver: null})).toBeNull()
    // An older citc's image.json has no gpu_driver: citc does not guess "none".
    expect(gpuDriverOf({name: 'x'})).toBeUndefined()
    expect(gpuDriverOf({gpu_driver: ''})).toBeUndefined()
    expect(gpuDriverOf({gpu_driver: 580})).toBeUndefined()
    expect(gpuDriverOf(undefined)).toBeUndefined()
    expect([gpuDriverLabel('580'), gpuDriverLabel(null), gpuDriverLabel(undefined)]).toEqual(['580', 'none', '?'])
  })

  it("counts a node's GPUs from scontrol's Gres", () => {
    expect(gresGpuCount('gpu:h100:8(S:0-1)')).toBe(8)
    expect(gresGpuCount('gpu:2')).toBe(2)
    expect(gresGpuCount('gpu:l4:1,gpu:t4:2')).toBe(3)
    expect(gresGpuCount('(null)')).toBe(0)
    expect(gresGpuCount('mps:100')).toBe(0)
    expect(gresGpuCount(undefined)).toBe(0)
  })
})

describe('a GPU node and the image it boots', () => {
  const image = (gpuDriver?: string | null) => ({name: 'citc-slurm-compute-demo-v20261126053000', version: '20261126053000', ...(gpuDriver === undefined ? {} : {gpuDriver})})

  it('is refused, with a reason that says what to run, only when the image is recorded without a driver', () => {
    expect(noGpuDriverReason(1, image(null))).toBe('citc: config: image v20261126053000 has no GPU driver; run citc rebuild-image')
    expect(noGpuDriverReason(8, image('580'))).toBeUndefined()
    // Not recorded: citc cannot tell, so the node starts (citc-gpu-check reports a missing device).
    expect(noGpuDriverReason(1, image())).toBeUndefined()
    // No GPUs, or no image to judge (the driver reports a missing image itself).
    expect(noGpuDriverReason(0, image(null))).toBeUndefined()
    expect(noGpuDriverReason(1, undefined)).toBeUndefined()
  })

  it("finish: the GPU shapes whose architecture's current image has no driver, and those images", () => {
    const groups = [
      {shape: 'c5.xlarge', arch: 'x86_64'},
      {shape: 'g6.xlarge', arch: 'x86_64', gpu: {count: 1}},
      {shape: 'p5.48xlarge', arch: 'x86_64', gpu: {count: 8}},
      {shape: 'g5g.xlarge', arch: 'arm64', gpu: {count: 1}},
    ]
    const x86 = {...image(null), arch: 'x86_64'}
    expect(gpuImageCheck(groups, [x86])).toEqual({shapes: ['g6.xlarge', 'p5.48xlarge'], images: [{name: x86.name, version: x86.version, arch: 'x86_64'}]})
    expect(gpuImageCheck(groups, [{...image('580'), arch: 'x86_64'}])).toBeUndefined()
    expect(gpuImageCheck(groups, [{...image(), arch: 'x86_64'}])).toBeUndefined()
    expect(gpuImageCheck(groups, [])).toBeUndefined()
    expect(gpuImageCheck([{shape: 'c5.xlarge', arch: 'x86_64'}], [x86])).toBeUndefined()
    const arm = {...image(null), name: 'arm', arch: 'arm64'}
    expect(gpuImageCheck(groups, [x86, arm])?.shapes).toEqual(['g6.xlarge', 'p5.48xlarge', 'g5g.xlarge'])
  })
})
