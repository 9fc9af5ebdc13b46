// `citc node resume` in this process, with a stand-in cluster.json, slurmctld's side replaced by a
// recording Controller and the provider's driver by a double that boots an image recorded without
// the GPU driver: the GPU node goes DOWN at once with the reason (and is powered down), the driver
// starts only the other node, and nothing waits.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it, vi} from 'vitest'

import type {NodeDriver, NodeSpec} from '../../../../src/lib/providers/types.js'

const seen = vi.hoisted(() => ({updates: [] as string[][], resumed: [] as string[]}))

vi.mock('../../../../src/lib/slurm/controller.js', () => ({
  Controller: class {
    async nodes() {
      return [
        {name: 'demo-g6-xlarge-0001', state: ['IDLE', 'POWERING_UP'], features: 'shape=g6.xlarge,arch=x86_64', gres: 'gpu:l4:1'},
        {name: 'demo-c5-xlarge-0001', state: ['IDLE', 'POWERING_UP'], features: 'shape=c5.xlarge,arch=x86_64', gres: '(null)'},
      ]
    }
    async update(args: string[]) {
      seen.updates.push(args)
    }
  },
}))

vi.mock('../../../../src/lib/providers/registry.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../../src/lib/providers/registry.js')>()
  const driver: NodeDriver = {
    bootImage: () => ({name: 'citc-slurm-compute-demo-v20261126053000', version: '20261126053000', gpuDriver: null}),
    resume: async (nodes: NodeSpec[]) => nodes.map((n) => (seen.resumed.push(n.name), {name: n.name, ok: true})),
    suspend: async (nodes: NodeSpec[]) => nodes.map((n) => ({name: n.name, ok: true})),
    list: async () => [],
    terminate: async () => [],
  }
  return {...actual, providerModule: (name: string) => ({...actual.providerModule(name as never), nodeDriver: async () => () => driver})}
})

const {runNodeProgram} = await import('../../../../src/lib/tasks/node/node-programs.js')

const work = mkdtempSync(join(tmpdir(), 'citc-resume-gpu-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('resume of a GPU node whose image has no GPU driver', () => {
  it('reports it DOWN with the reason at once and starts only the other node', async () => {
    const clusterJson = join(work, 'cluster.json')
    const elasticLog = join(work, 'elastic.log')
    writeFileSync(
      clusterJson,
      JSON.stringify({version: 1, name: 'demo', sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog, provider: 'local', driver: {}}),
    )
    const t0 = Date.now()
    const outcomes = await runNodeProgram('resume', 'demo-g6-xlarge-0001,demo-c5-xlarge-0001', {clusterJson})
    expect(Date.now() - t0).toBeLessThan(5000)
    const reason = 'citc: config: image v20261126053000 has no GPU driver; run citc rebuild-image'
    expect(outcomes.map((o) => [o.name, o.ok, o.error])).toEqual([
      ['demo-g6-xlarge-0001', false, reason],
      ['demo-c5-xlarge-0001', true, undefined],
    ])
    expect(seen.resumed).toEqual(['demo-c5-xlarge-0001'])
    expect(seen.updates).toEqual([
      ['NodeName=demo-g6-xlarge-0001', 'State=DOWN', `Reason=${reason}`],
      ['NodeName=demo-g6-xlarge-0001', 'State=POWER_DOWN_FORCE'],
    ])
    expect(readFileSync(elasticLog, 'utf8')).toContain(`demo-g6-xlarge-0001: reported to Slurm as DOWN ("${reason}") and powered down`)
  })
})
