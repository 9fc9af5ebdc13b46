// The watchdog's run when the cloud cannot list its machines (an API outage, issue #23 fault 5): it
// does nothing — an empty list would make every node look vanished and every run's memory wrong — says
// where it failed with the cloud's code, keeps the previous run's memory, and leaves no lock behind, so
// the next run, a minute later, acts normally. Slurm and the driver are in-memory doubles here; the
// fault suite (test/faults/cloud-api-outage.test.ts) runs the same against slurmctld and the fake EC2.
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {runNodeSync} from '../../../src/lib/nodes/node-sync.js'
import type {CloudInstance, DriverContext, NodeDriver} from '../../../src/lib/providers/types.js'
import type {NodeState} from '../../../src/lib/slurm/controller.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-sync-outage-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const ctx: DriverContext = {log: () => {}, now: () => Date.UTC(2026, 10, 26, 12), sleep: async () => {}, deadline: Number.MAX_SAFE_INTEGER}
const updates: string[][] = []
const nodes: NodeState[] = [{name: 'demo-c5-xlarge-0001', state: ['ALLOCATED', 'CLOUD'], features: 'shape=c5.xlarge', gres: '(null)'}]
const controller = {nodes: async () => nodes, update: async (args: string[]) => void updates.push(args)}
let down = true
const instances: CloudInstance[] = []
const driver: NodeDriver = {
  resume: async () => [],
  suspend: async () => [],
  async list() {
    if (down) throw Object.assign(new Error('An internal error has occurred.\n(request id …)'), {name: 'InternalError'})
    return instances
  },
  terminate: async () => [],
}
const sync = () => runNodeSync({driver, controller, ctx, stateDir: dir})

describe('node sync while the cloud cannot list its machines', () => {
  it('does nothing, names the cloud’s error, keeps the last memory and its lock free', async () => {
    const memory = {version: 1, lastRun: 1, memory: {missing: ['demo-c5-xlarge-0001'], booting: [], stuck: {}, cooldowns: []}}
    writeFileSync(join(dir, 'state.json'), JSON.stringify(memory))
    await expect(sync()).rejects.toThrow(/^could not list the cluster's instances: InternalError: An internal error has occurred\.; nothing done \(the next run tries again\)$/)
    // Above all not "instance gone" for the node missing once already: a failed list is no empty list.
    expect(updates).toEqual([])
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8'))).toEqual(memory)
    expect(existsSync(join(dir, 'lock'))).toBe(false)

    down = false
    instances.push({id: 'i-1', name: 'demo-c5-xlarge-0001', state: 'running', launchedAt: 0})
    expect(await sync()).toMatchObject({actions: [], instances: 1})
    expect(JSON.parse(readFileSync(join(dir, 'state.json'), 'utf8')).memory.missing).toEqual([])
  })
})
