import {describe, expect, it} from 'vitest'

import {gpuImageVars} from '../../../src/lib/images/gpu.js'
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
