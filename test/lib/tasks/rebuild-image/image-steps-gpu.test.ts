// The GPU driver reaches the image build: the variables compute.yml gets (inputsStep) hold
// compute_gpu: true exactly when the slurm.conf the cluster runs has a GPU node group — the defect of
// issue #19 item 0 was that nothing called gpuImageVars, so no image ever ran roles/nvidia_gpu.
import {describe, expect, it} from 'vitest'

import {gpuGroupsInConf} from '../../../../src/lib/images/gpu.js'
import {generateFromLimits} from '../../../../src/lib/tasks/finish/generate-config.js'
import {imageBuildVars} from '../../../helpers/image-inputs.js'


/** slurm.conf as finish renders it for these AWS limits. */
const confFor = (limitsText: string) =>
  generateFromLimits({provider: 'aws', clusterId: 'lab', limitsText, limitsFile: 'limits.yaml'}).generated.slurmConf

const GPU_LIMITS = 'c5.xlarge: 4\ng6.xlarge: 2\n'
const CPU_LIMITS = 'c5.xlarge: 4\n'

const buildVars = (conf: string | undefined, gpuDriverInImage = true) => imageBuildVars(conf, {gpuDriverInImage})

describe('the GPU driver in image builds', () => {
  it('finish’s GPU lines are read back: one group per GPU shape, with its count and model', () => {
    expect(gpuGroupsInConf(confFor(GPU_LIMITS))).toEqual([{gpu: {count: 1, model: 'l4'}}])
    expect(gpuGroupsInConf(confFor(CPU_LIMITS))).toEqual([])
    expect(gpuGroupsInConf('NodeName=a[1-2] Gres=gpu:4 CPUs=8\n# NodeName=b Gres=gpu:h100:8\n')).toEqual([{gpu: {count: 4, model: 'gpu'}}])
  })

  it('a cluster with a GPU shape builds its image with compute_gpu: true, next to the builder’s own variables', async () => {
    expect(await buildVars(confFor(GPU_LIMITS))).toEqual({provider: 'aws', cluster_name: 'lab', compute_gpu: true})
  })

  it('a cluster without one, or without node groups yet, builds with compute_gpu: false', async () => {
    expect(await buildVars(confFor(CPU_LIMITS))).toMatchObject({compute_gpu: false})
    expect(await buildVars(undefined)).toMatchObject({compute_gpu: false})
  })

  it('a builder whose nodes take the driver from the host (local) never installs one, GPU shapes or not', async () => {
    expect(await buildVars(confFor(GPU_LIMITS), false)).toMatchObject({compute_gpu: false})
  })
})
