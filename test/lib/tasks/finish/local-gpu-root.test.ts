// finish on a local cluster whose cluster.json names stand-in GPUs (standIn.driver.gpuRoot, as the local
// e2e test writes it): the catalogue finish validates limits.yaml against lists those GPUs; without it,
// this machine's ('/'). An in-memory management node (test/doubles/memory-transport.ts).
import {existsSync, rmSync} from 'node:fs'
import {afterAll, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../../../src/lib/errors.js'
import {Controller} from '../../../../src/lib/slurm/controller.js'
import {readClusterState, standInGpuRoot} from '../../../../src/lib/tasks/finish/apply-config.js'
import {generateAndPlan} from '../../../../src/lib/tasks/finish/generate-config.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'
import {standInGpuRoot as makeGpuRoot} from '../../../doubles/nvidia-gpus.js'

const CONF = '/etc/slurm/slurm.conf'
const gpuRoot = makeGpuRoot([{model: 'NVIDIA H100 80GB HBM3', minor: 0}, {model: 'NVIDIA H100 80GB HBM3', minor: 1}])
afterAll(() => rmSync(gpuRoot, {recursive: true, force: true}))

const request = {provider: 'local' as const, clusterId: 'ws', limitsText: 'local.small: 1\nlocal.h100x1: 2\n', limitsFile: 'limits.yaml'}

async function state(clusterJson?: string) {
  const t = new MemoryTransport({files: clusterJson === undefined ? {} : {'/etc/citc/cluster.json': clusterJson}, dirs: ['/etc/slurm']}).on(() => true, {exitCode: 1})
  return readClusterState(t, new Controller(t, {confPath: CONF, restartCommand: ['true']}), '/usr/local/libexec/citc')
}

describe('standInGpuRoot', () => {
  it('reads standIn.driver.gpuRoot only; anything else (none, no file, not JSON, not absolute) is no stand-in', () => {
    expect(standInGpuRoot(JSON.stringify({version: 1, standIn: {driver: {gpuRoot: '/tmp/g'}}}))).toBe('/tmp/g')
    expect(standInGpuRoot(JSON.stringify({version: 1}))).toBeUndefined()
    expect(standInGpuRoot(undefined)).toBeUndefined()
    expect(standInGpuRoot('{not json')).toBeUndefined()
    expect(standInGpuRoot('null')).toBeUndefined()
    expect(standInGpuRoot(JSON.stringify({standIn: {driver: {gpuRoot: 'relative'}}}))).toBeUndefined()
  })
})

describe('finish on a local cluster with stand-in GPUs', () => {
  it('the GPU shapes of cluster.json\'s stand-in are known, and gres.conf gives each node its own', async () => {
    const s = await state(JSON.stringify({version: 1, provider: 'local', standIn: {driver: {gpuRoot}}}))
    expect(s.gpuRoot).toBe(gpuRoot)
    const {generated} = generateAndPlan(s, request, CONF)
    expect(generated.gresConf).toContain('NodeName=ws-local-h100x1-0001 Name=gpu Type=h100 File=/dev/nvidia0\n')
    expect(generated.gresConf).toContain('NodeName=ws-local-h100x1-0002 Name=gpu Type=h100 File=/dev/nvidia1\n')
  })

  // Skipped (and reported so) where this machine has NVIDIA GPUs: there the shape may exist.
  it.skipIf(existsSync('/proc/driver/nvidia/gpus'))('without a stand-in, this machine\'s GPUs: a machine without them has no local.h100x1', async () => {
    const s = await state()
    expect(s.gpuRoot).toBeUndefined()
    expect(() => generateAndPlan(s, request, CONF)).toThrow(InvalidInputError)
  })
})
