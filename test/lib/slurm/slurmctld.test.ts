// The generated configuration, run by a real slurmctld (started by this test on loopback).
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'
import {parseNodeStates} from '../../../src/lib/slurm/controller.js'
import {generateConfig} from '../../../src/lib/slurm/generate.js'
import {defaultElasticSettings} from '../../../src/lib/slurm/render.js'
import {awsModule} from '../../../src/lib/providers/aws/index.js'
import {type SlurmSandbox, slurmSandbox} from '../../helpers/slurm.js'

const shapes: Record<string, Shape> = {
  'c5.xlarge': {name: 'c5.xlarge', sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'},
  'c6g.2xlarge': {name: 'c6g.2xlarge', sockets: 1, coresPerSocket: 8, threadsPerCore: 1, memoryMiB: 16384, realMemoryMiB: 14000, arch: 'arm64'},
  'p3.8xlarge': {name: 'p3.8xlarge', sockets: 1, coresPerSocket: 16, threadsPerCore: 2, memoryMiB: 249856, realMemoryMiB: 240000, arch: 'x86_64', gpu: {count: 4, model: 'v100'}},
}
const catalogue: ShapeCatalogue = {provider: 'aws', source: 'test', get: (n) => shapes[n], names: () => Object.keys(shapes)}

let sb: SlurmSandbox
beforeAll(async () => {
  sb = await slurmSandbox('rt')
})
afterAll(async () => {
  await sb?.stop()
})

describe('a real slurmctld with a generated configuration', () => {
  it('lists every node with the right CPUs, memory, features and GPUs', async () => {
    const g = generateConfig({
      provider: 'aws',
      slurm: awsModule.slurm,
      clusterId: 'rt',
      limits: {
        entries: [
          {shape: 'c5.xlarge', count: 3, where: 'l:1:1'},
          {shape: 'c6g.2xlarge', count: 2, where: 'l:2:1', features: ['graviton']},
          {shape: 'p3.8xlarge', count: 1, where: 'l:3:1'},
        ],
        staticNodes: [],
        partitions: [],
        settings: {},
      },
      catalogue,
      elastic: {...defaultElasticSettings(awsModule.slurm.power), programsDir: '/bin/true-dir'},
      current: sb.base,
      base: {clusterId: 'rt', provider: 'aws', controllerHost: 'unused', slurmUser: 'root', accounting: false},
    })
    writeFileSync(sb.confPath, g.slurmConf)
    writeFileSync(join(sb.dir, 'etc', 'gres.conf'), g.gresConf)
    await sb.startController()

    const r = sb.scontrol(['show', 'node', '--oneliner', '--all'])
    expect(r.status).toBe(0)
    const nodes = parseNodeStates(r.stdout)
    expect(nodes.map((n) => n.name)).toEqual([
      'rt-c5-xlarge-0001',
      'rt-c5-xlarge-0002',
      'rt-c5-xlarge-0003',
      'rt-c6g-2xlarge-0001',
      'rt-c6g-2xlarge-0002',
      'rt-p3-8xlarge-0001',
    ])
    const byName = Object.fromEntries(nodes.map((n) => [n.name, n]))
    expect(byName['rt-c5-xlarge-0002']).toMatchObject({cpus: 4, realMemory: 7000, features: 'shape=c5.xlarge,arch=x86_64', partitions: 'compute'})
    expect(byName['rt-c5-xlarge-0002'].state).toEqual(expect.arrayContaining(['CLOUD', 'POWERED_DOWN']))
    expect(byName['rt-c6g-2xlarge-0001']).toMatchObject({cpus: 8, realMemory: 14000, features: 'shape=c6g.2xlarge,arch=arm64,graviton'})
    expect(byName['rt-p3-8xlarge-0001']).toMatchObject({cpus: 32, realMemory: 240000, gres: 'gpu:v100:4'})
  })
})
