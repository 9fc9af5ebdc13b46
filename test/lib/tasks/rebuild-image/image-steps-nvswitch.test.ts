// Fabric Manager reaches the image build: the variables compute.yml gets from inputsStep hold
// compute_gpu_nvswitch: true exactly when the slurm.conf the cluster runs has a node group of an
// NVSwitch shape (catalogue flag Gpu.nvswitch, read back through finish's shape= feature).
import {describe, expect, it} from 'vitest'

import {generateFromLimits} from '../../../../src/lib/tasks/finish/generate-config.js'
import {imageBuildVars} from '../../../helpers/image-inputs.js'

/** The build's variables for the slurm.conf finish writes from these limits. */
const buildVars = (provider: 'aws' | 'google', limitsText: string) =>
  imageBuildVars(generateFromLimits({provider, clusterId: 'lab', limitsText, limitsFile: 'limits.yaml'}).generated.slurmConf, {provider})

describe('Fabric Manager in image builds', () => {
  it('a cluster with an NVSwitch shape builds with compute_gpu_nvswitch: true', async () => {
    expect(await buildVars('aws', 'c5.xlarge: 2\np5.48xlarge: 1\n')).toEqual({provider: 'aws', cluster_name: 'lab', compute_gpu: true, compute_gpu_nvswitch: true})
    expect(await buildVars('google', 'a3-highgpu-8g: 1\n')).toMatchObject({compute_gpu: true, compute_gpu_nvswitch: true})
  })

  it('GPU shapes without NVSwitch leave it out (the image inputs stay what they were)', async () => {
    expect(await buildVars('aws', 'g6.xlarge: 2\np3.16xlarge: 1\n')).toEqual({provider: 'aws', cluster_name: 'lab', compute_gpu: true})
    expect(await buildVars('google', 'a3-highgpu-4g: 1\n')).not.toHaveProperty('compute_gpu_nvswitch')
  })
})
