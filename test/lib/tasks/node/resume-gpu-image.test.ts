// `citc node resume` in this process, with a stand-in cluster.json, slurmctld's side replaced by a
// recording Controller and the provider's driver by a double that boots an image recorded without
// the GPU driver: the GPU node goes DOWN at once with the reason (and is powered down), the driver
// starts only the other node, and nothing waits.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, afterEach, describe, expect, it, vi} from 'vitest'

import {localModule} from '../../../../src/lib/providers/local/index.js'
import type {NodeDriver, NodeSpec} from '../../../../src/lib/providers/types.js'
import {Controller, type NodeState} from '../../../../src/lib/slurm/controller.js'
import {runNodeProgram} from '../../../../src/lib/tasks/node/node-programs.js'

// Spies, not vi.mock: unit files share their worker's module cache (vitest.config.ts, isolate: false).
const seen = {updates: [] as string[][], resumed: [] as string[]}
function doubles() {
  const states: NodeState[] = [
    {name: 'demo-g6-xlarge-0001', state: ['IDLE', 'POWERING_UP'], features: 'shape=g6.xlarge,arch=x86_64', gres: 'gpu:l4:1'},
    {name: 'demo-c5-xlarge-0001', state: ['IDLE', 'POWERING_UP'], features: 'shape=c5.xlarge,arch=x86_64', gres: '(null)'},
  ]
  vi.spyOn(Controller.prototype, 'nodes').mockResolvedValue(states)
  vi.spyOn(Controller.prototype, 'update').mockImplementation(async (args: string[]) => void seen.updates.push(args))
  const driver: NodeDriver = {
    bootImage: () => ({name: 'citc-slurm-compute-demo-v20261126053000', version: '20261126053000', gpuDriver: null}),
    resume: async (nodes: NodeSpec[]) => nodes.map((n) => (seen.resumed.push(n.name), {name: n.name, ok: true})),
    suspend: async (nodes: NodeSpec[]) => nodes.map((n) => ({name: n.name, ok: true})),
    list: async () => [],
    terminate: async () => [],
  }
  vi.spyOn(localModule, 'nodeDriver').mockResolvedValue(() => driver)
}
afterEach(() => {
  vi.restoreAllMocks()
})

const work = mkdtempSync(join(tmpdir(), 'citc-resume-gpu-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('resume of a GPU node whose image has no GPU driver', () => {
  it('reports it DOWN with the reason at once and starts only the other node', async () => {
    doubles()
    const clusterJson = join(work, 'cluster.json')
    const elasticLog = join(work, 'elastic.log')
    writeFileSync(
      clusterJson,
      JSON.stringify({version: 1, name: 'demo', sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog, provider: 'local', driver: {}}),
    )
    // "At once" is what Slurm sees: the node DOWN with the reason and powered down (the updates below),
    // so no job waits ResumeTimeout for it; the doubles have no waits, so real elapsed time (bounded
    // before, which a loaded machine could exceed) proves nothing more.
    const outcomes = await runNodeProgram('resume', 'demo-g6-xlarge-0001,demo-c5-xlarge-0001', {clusterJson})
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
