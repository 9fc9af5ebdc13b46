// Fabric Manager reaches the image build: the variables compute.yml gets from inputsStep hold
// compute_gpu_nvswitch: true exactly when the slurm.conf the cluster runs has a node group of an
// NVSwitch shape (catalogue flag Gpu.nvswitch, read back through finish's shape= feature).
import {describe, expect, it} from 'vitest'

import type {ClusterRecord} from '../../../../src/lib/cluster/schema.js'
import type {ImageBuilder} from '../../../../src/lib/providers/image-types.js'
import {generateFromLimits} from '../../../../src/lib/tasks/finish/generate-config.js'
import {type ImageContext, inputsStep} from '../../../../src/lib/tasks/rebuild-image/image-steps.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const CONF = '/mnt/shared/etc/slurm/slurm.conf'

async function buildVars(provider: 'aws' | 'google', limitsText: string): Promise<Record<string, unknown>> {
  const conf = generateFromLimits({provider, clusterId: 'lab', limitsText, limitsFile: 'limits.yaml'}).generated.slurmConf
  const node = new MemoryTransport({files: {[CONF]: conf}})
  node.on(['dpkg-query', '-W', '-f=${Version}', 'slurmctld'], {stdout: '22.05.8-4+deb12u3'})
  const ctx = {
    record: {name: 'lab', provider, slurm: {confPath: CONF}} as unknown as ClusterRecord,
    management: node,
    builder: {gpuDriverInImage: true, playbookVars: async () => ({provider, cluster_name: 'lab'})} as unknown as ImageBuilder,
    arch: 'x86_64',
    keep: 3,
  } as unknown as ImageContext
  await inputsStep<ImageContext>().run(ctx, {output: ''} as never)
  return ctx.playbookVars!
}

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
