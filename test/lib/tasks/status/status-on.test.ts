// statusOn asks slurmctld three things through the cluster's Transport: ping, the nodes, and the jobs
// waiting for nodes. With the controller up, the nodes and the waiting jobs are asked at once (one
// round trip less over SSH); down, nothing but the ping. Counted here through a Transport that
// records each call — one call each, whatever the number of nodes — and what each failure costs.
import {describe, expect, it} from 'vitest'

import type {ClusterRecord} from '../../../../src/lib/cluster/schema.js'
import {statusOn} from '../../../../src/lib/tasks/status/cluster-status.js'
import type {RunResult, Transport} from '../../../../src/lib/transport/types.js'

const NODES = 1000
const nodeLine = (i: number, state = 'IDLE+CLOUD+POWERED_DOWN') =>
  `NodeName=c-local-small-${String(i).padStart(4, '0')} CoresPerSocket=1 CPUAlloc=0 CPUTot=1 AvailableFeatures=shape=local.small,arch=x86_64 NodeAddr=127.0.0.1 RealMemory=512 State=${state} Partitions=compute`
const SHOW_NODE = Array.from({length: NODES}, (_, i) => nodeLine(i + 1, i === 0 ? 'ALLOCATED+CLOUD' : i === 1 ? 'IDLE+CLOUD+POWERING_UP' : undefined)).join('\n') + '\n'

type Kind = 'ping' | 'nodes' | 'squeue' | 'other'
const kindOf = (argv: string[]): Kind => {
  const s = argv.join(' ')
  if (s.includes('scontrol ping')) return 'ping'
  if (s.includes('scontrol show node')) return 'nodes'
  if (s.includes('squeue')) return 'squeue'
  return 'other'
}

interface Script {
  up?: boolean
  nodes?: RunResult
  squeue?: RunResult
}

/** A Transport that answers as slurmctld would and records every call; the nodes' answer waits (bounded) until squeue was asked. */
function recording(script: Script = {}) {
  const calls: Kind[] = []
  let squeueAsked: () => void
  const squeueSeen = new Promise<void>((resolve) => (squeueAsked = resolve))
  const log: string[] = []
  const transport: Transport = {
    description: 'test',
    async run(argv) {
      const kind = kindOf(argv)
      calls.push(kind)
      log.push(`asked ${kind}`)
      if (kind === 'ping') return {exitCode: 0, stdout: script.up === false ? 'Slurmctld(primary) at x is DOWN\n' : 'Slurmctld(primary) at x is UP\n', stderr: ''}
      if (kind === 'squeue') {
        squeueAsked()
        return script.squeue ?? {exitCode: 0, stdout: '1700000100\n42|alice|1700000000|c-local-small-[0001-0002]\n', stderr: ''}
      }
      if (kind === 'nodes') {
        await Promise.race([squeueSeen, new Promise((resolve) => setTimeout(resolve, 2000))])
        log.push('answered nodes')
        return script.nodes ?? {exitCode: 0, stdout: SHOW_NODE, stderr: ''}
      }
      throw new Error(`unexpected call: ${argv.join(' ')}`)
    },
    check: () => Promise.reject(new Error('not used')),
    readFile: () => Promise.reject(new Error('not used')),
    writeFile: () => Promise.reject(new Error('not used')),
    close: async () => {},
  }
  return {transport, calls, log}
}

const record = (cloud = false): ClusterRecord =>
  ({
    name: 'c',
    provider: cloud ? 'aws' : 'local',
    createdAt: '2026-11-26T00:00:00Z',
    origin: 'created',
    mgmt: {host: cloud ? '203.0.113.5' : 'localhost', port: 22, user: 'root'},
    slurm: {confPath: '/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'},
    ...(cloud ? {cloud: {region: 'eu-west-2', mgmtShape: 't3.medium'}} : {}),
  }) as ClusterRecord

describe('statusOn', () => {
  it(`asks ping, then the nodes and the waiting jobs at once: three calls for ${NODES} nodes`, async () => {
    const {transport, calls, log} = recording()
    const doc = await statusOn(record(), transport)
    expect(calls.filter((c) => c === 'ping')).toHaveLength(1)
    expect(calls[0]).toBe('ping')
    expect([...calls].sort()).toEqual(['nodes', 'ping', 'squeue'])
    // squeue was asked before the nodes' answer came back: at once, not one after the other.
    expect(log.indexOf('asked squeue')).toBeLessThan(log.indexOf('answered nodes'))
    expect(doc.controller.up).toBe(true)
    expect(doc.nodes).toHaveLength(NODES)
    expect(doc.summary).toEqual({up: 1, 'powering-up': 1, 'powering-down': 0, down: NODES - 2})
    expect(doc.waitingJobs).toMatchObject([{id: '42', user: 'alice', total: 2, poweringUp: 1, waitingSeconds: 100}])
    expect(doc).not.toHaveProperty('waitingJobsError')
  })

  it('with the controller down asks nothing more than the ping', async () => {
    const {transport, calls} = recording({up: false})
    const doc = await statusOn(record(), transport)
    expect(calls).toEqual(['ping'])
    expect(doc).toMatchObject({controller: {up: false}, nodes: [], waitingJobs: []})
  })

  it('a failing squeue costs only the waiting jobs, said in waitingJobsError', async () => {
    const {transport} = recording({squeue: {exitCode: 1, stdout: '', stderr: 'squeue: error: Invalid user\n'}})
    const doc = await statusOn(record(), transport)
    expect(doc.nodes).toHaveLength(NODES)
    expect(doc.waitingJobs).toEqual([])
    expect(doc.waitingJobsError).toMatch(/squeue failed: squeue: error: Invalid user/)
  })

  it('a failing scontrol show node is the error of a local cluster, and what a cloud cluster’s status says', async () => {
    const failing = {exitCode: 1, stdout: '', stderr: 'slurm_load_node error: Unable to contact slurm controller\n'}
    await expect(statusOn(record(), recording({nodes: failing}).transport)).rejects.toThrow(/scontrol show node failed: slurm_load_node error/)
    const doc = await statusOn(record(true), recording({nodes: failing}).transport)
    expect(doc.controller).toMatchObject({up: false, error: expect.stringMatching(/scontrol show node failed/)})
    expect(doc.nodes).toEqual([])
  })
})
