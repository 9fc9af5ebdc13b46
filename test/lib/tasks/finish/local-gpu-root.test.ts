// finish on a local cluster whose cluster.json names stand-in GPUs (standIn.driver.gpuRoot, as the local
// e2e test writes it): the catalogue finish validates limits.yaml against, before connecting, lists those
// GPUs; without it, this machine's ('/'). Clouds never read it.
import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import type {ClusterRecord} from '../../../../src/lib/cluster/schema.js'
import {InvalidInputError} from '../../../../src/lib/errors.js'
import {generateFromLimits, requestFor} from '../../../../src/lib/tasks/finish/generate-config.js'
import {standInGpuRoot, thisMachineGpuRoot} from '../../../../src/lib/tasks/finish/stand-in-gpus.js'
import {standInGpuRoot as makeGpuRoot} from '../../../doubles/nvidia-gpus.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-finish-gpus-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
const gpuRoot = makeGpuRoot([{model: 'NVIDIA H100 80GB HBM3', minor: 0}, {model: 'NVIDIA H100 80GB HBM3', minor: 1}], dir)
const clusterJson = (doc: unknown) => {
  const file = join(mkdtempSync(join(dir, 'etc-')), 'cluster.json')
  writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc))
  return file
}
const withStandIn = clusterJson({version: 1, provider: 'local', standIn: {driver: {gpuRoot}}})

const record = (provider: 'local' | 'aws'): ClusterRecord =>
  ({name: 'ws', provider, createdAt: '2026-11-26T00:00:00Z', origin: 'created', mgmt: {host: 'localhost', user: 'root'}, slurm: {confPath: '/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc', restartCommand: ['true']}}) as unknown as ClusterRecord
const LIMITS = 'local.small: 1\nlocal.h100x1: 2\n'

describe('standInGpuRoot', () => {
  it('reads standIn.driver.gpuRoot only; anything else (none, no file, not JSON, not absolute) is no stand-in', () => {
    expect(standInGpuRoot(JSON.stringify({version: 1, standIn: {driver: {gpuRoot: '/tmp/g'}}}))).toBe('/tmp/g')
    expect(standInGpuRoot(JSON.stringify({version: 1}))).toBeUndefined()
    expect(standInGpuRoot(undefined)).toBeUndefined()
    expect(standInGpuRoot('{not json')).toBeUndefined()
    expect(standInGpuRoot('null')).toBeUndefined()
    expect(standInGpuRoot(JSON.stringify({standIn: {driver: {gpuRoot: 'relative'}}}))).toBeUndefined()
  })

  it('thisMachineGpuRoot: only for a provider whose management node is this machine, from its cluster.json', () => {
    expect(thisMachineGpuRoot('local', withStandIn)).toBe(gpuRoot)
    expect(thisMachineGpuRoot('aws', withStandIn)).toBeUndefined()
    expect(thisMachineGpuRoot('local', join(dir, 'missing.json'))).toBeUndefined()
  })
})

describe('finish on a local cluster with stand-in GPUs', () => {
  it('the GPU shapes of cluster.json\'s stand-in are known, and gres.conf gives each node its own', () => {
    const request = requestFor(record('local'), 'limits.yaml', LIMITS, withStandIn)
    expect(request.gpuRoot).toBe(gpuRoot)
    const {generated} = generateFromLimits(request)
    expect(generated.gresConf).toContain('NodeName=ws-local-h100x1-0001 Name=gpu Type=h100 File=/dev/nvidia0\n')
    expect(generated.gresConf).toContain('NodeName=ws-local-h100x1-0002 Name=gpu Type=h100 File=/dev/nvidia1\n')
  })

  // Skipped (and reported so) where this machine has NVIDIA GPUs: there the shape may exist.
  it.skipIf(existsSync('/proc/driver/nvidia/gpus'))('without a stand-in, this machine\'s GPUs: a machine without them has no local.h100x1', () => {
    const request = requestFor(record('local'), 'limits.yaml', LIMITS, clusterJson({version: 1, provider: 'local'}))
    expect(request.gpuRoot).toBeUndefined()
    expect(() => generateFromLimits(request)).toThrow(InvalidInputError)
  })
})
