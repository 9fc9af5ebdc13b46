import {describe, expect, it} from 'vitest'

import {gpuGroupsInConf, gpuImageVars} from '../../../src/lib/images/gpu.js'
import {gpuDriverLabel, gpuImageCheck, gresGpuCount, noGpuDriverReason} from '../../../src/lib/images/gpu-driver.js'
import {gpuDriverOf} from '../../../src/lib/providers/image-types.js'
import {catalogueFor} from '../../../src/lib/providers/catalogues.js'
import {generateFromLimits} from '../../../src/lib/tasks/finish/generate-config.js'
import type {Shape} from '../../../src/lib/shapes/types.js'

const shape = (provider: 'aws' | 'google' | 'oracle', name: string): Shape => {
  const s = catalogueFor(provider).get(name)
  if (!s) throw new Error(`${name} missing from the ${provider} catalogue`)
  return s
}

describe('gpuImageVars', () => {
  it('is a GPU image when any shape of the limits has GPUs', () => {
    expect(gpuImageVars([shape('aws', 'c5.xlarge'), shape('aws', 'g6.xlarge')])).toEqual({compute_gpu: true})
    expect(gpuImageVars([shape('google', 'g2-standard-4')])).toEqual({compute_gpu: true})
    expect(gpuImageVars([shape('oracle', 'VM.Standard.E4.Flex.4.64'), shape('oracle', 'VM.GPU3.4')])).toEqual({compute_gpu: true})
  })

  it('is a plain image without GPU shapes, and for empty limits', () => {
    expect(gpuImageVars([shape('aws', 'c5.xlarge'), shape('aws', 't3a.medium')])).toEqual({compute_gpu: false})
    expect(gpuImageVars([])).toEqual({compute_gpu: false})
    // A zero count is no GPU.
    expect(gpuImageVars([{gpu: {count: 0, model: 'l4'}}])).toEqual({compute_gpu: false})
  })

  it('passes a driver branch only for a GPU image, and the role default otherwise', () => {
    expect(gpuImageVars([shape('aws', 'g6.xlarge')], {driverBranch: '570'})).toEqual({compute_gpu: true, nvidia_driver_branch: '570'})
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

// The shapes whose GPUs sit on NVSwitches (Fabric Manager needed), as the catalogues flag them; the
// sources are in each catalogue's comments.
const NVSWITCH_SHAPES = {
  aws: ['p4d.24xlarge', 'p5.48xlarge'],
  google: ['a2-highgpu-8g', 'a2-megagpu-16g', 'a3-highgpu-8g', 'a3-megagpu-8g'],
  oracle: ['BM.GPU4.8', 'BM.GPU.H100.8'],
} as const

describe('NVSwitch shapes and Fabric Manager', () => {
  it('the catalogues flag exactly the 8- and 16-GPU NVSwitch machines, and no smaller size of their families', () => {
    for (const provider of ['aws', 'google', 'oracle'] as const) {
      const flagged = catalogueFor(provider)
        .names()
        .filter((n) => catalogueFor(provider).get(n)?.gpu?.nvswitch)
      expect(flagged, provider).toEqual([...NVSWITCH_SHAPES[provider]])
      for (const n of flagged) expect(shape(provider, n).gpu!.count, n).toBeGreaterThanOrEqual(8)
    }
    // Same GPUs, no NVSwitch: a3-highgpu-4g (half a baseboard), p3.16xlarge (V100 NVLink mesh).
    expect(shape('google', 'a3-highgpu-4g').gpu).toEqual({count: 4, model: 'h100'})
    expect(shape('aws', 'p3.16xlarge').gpu).toEqual({count: 8, model: 'v100'})
  })

  it('sets compute_gpu_nvswitch when any shape is an NVSwitch machine, and only then', () => {
    for (const [provider, names] of Object.entries(NVSWITCH_SHAPES) as Array<[keyof typeof NVSWITCH_SHAPES, readonly string[]]>) {
      for (const n of names) expect(gpuImageVars([shape(provider, n)]), n).toEqual({compute_gpu: true, compute_gpu_nvswitch: true})
    }
    expect(gpuImageVars([shape('aws', 'g6.xlarge'), shape('aws', 'p5.48xlarge')], {driverBranch: '570'})).toEqual({
      compute_gpu: true,
      nvidia_driver_branch: '570',
      compute_gpu_nvswitch: true,
    })
    expect(gpuImageVars([shape('aws', 'g6.xlarge'), shape('aws', 'p3.16xlarge')])).not.toHaveProperty('compute_gpu_nvswitch')
  })

  it('reads the NVSwitch flag back from the shape= feature of the slurm.conf finish writes', () => {
    const conf = (provider: 'aws' | 'google' | 'oracle', limitsText: string) =>
      generateFromLimits({provider, clusterId: 'lab', limitsText, limitsFile: 'limits.yaml'}).generated.slurmConf
    expect(gpuGroupsInConf(conf('aws', 'p5.48xlarge: 2\ng6.xlarge: 1\nc5.xlarge: 1\n'))).toEqual([
      {gpu: {count: 8, model: 'h100', nvswitch: true}},
      {gpu: {count: 1, model: 'l4'}},
    ])
    expect(gpuImageVars(gpuGroupsInConf(conf('google', 'a3-megagpu-8g: 1\n')))).toEqual({compute_gpu: true, compute_gpu_nvswitch: true})
    expect(gpuImageVars(gpuGroupsInConf(conf('oracle', 'BM.GPU.H100.8: {1: 1}\n')))).toEqual({compute_gpu: true, compute_gpu_nvswitch: true})
    expect(gpuImageVars(gpuGroupsInConf(conf('google', 'a3-highgpu-4g: 1\n')))).toEqual({compute_gpu: true})
    // A hand-written line: no shape feature, or one no catalogue knows, is no NVSwitch.
    expect(gpuGroupsInConf('NodeName=x Gres=gpu:h100:8\nNodeName=y Gres=gpu:h100:8 Features="shape=unknown.8x"\n')).toEqual([
      {gpu: {count: 8, model: 'h100'}},
      {gpu: {count: 8, model: 'h100'}},
    ])
  })

  it('no GPU shape name is in two providers’ catalogues (the slurm.conf lookup searches them all)', () => {
    const seen = new Map<string, string>()
    for (const provider of ['aws', 'google', 'oracle'] as const) {
      for (const n of catalogueFor(provider).names()) {
        expect(seen.get(n), `${n} in ${provider} and ${seen.get(n)}`).toBeUndefined()
        seen.set(n, provider)
      }
    }
  })
})
