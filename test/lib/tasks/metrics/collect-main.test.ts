// The collector's IO around the pure cycle: which files it writes, what it keeps and logs when Slurm
// does not answer, the loop's stop, and the node programs' part. The Slurm calls here come from a
// Transport that replays the real 22.05 outputs (test/lib/metrics/fixtures); collect.test.ts runs
// them against a real slurmctld.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it, vi} from 'vitest'

import {MANAGEMENT_CONTRACT_VERSION, type ManagementContract} from '../../../../src/lib/cluster/management-contract.js'
import {NODES_FILE} from '../../../../src/lib/metrics/file-sd.js'
import {NODE_EVENTS_FILE, readNodeEvents} from '../../../../src/lib/metrics/node-events.js'
import {PROM_FILE} from '../../../../src/lib/metrics/write.js'
import {parseNodeStates} from '../../../../src/lib/slurm/controller.js'
import {collectLoop, collectOnce, metricsCollectMain, type Monitoring} from '../../../../src/lib/tasks/metrics/collect-main.js'
import {nodeProgramMetrics, resumeEvents} from '../../../../src/lib/tasks/metrics/node-program-metrics.js'
import type {RunResult, Transport} from '../../../../src/lib/transport/types.js'
import {nodeLine, scontrolNodes, sdiagReport, squeueJobs} from '../../metrics/fixtures.js'

const dirs: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'citc-collect-'))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, {recursive: true, force: true})
})

/** tst-small-0001 once registered from 10.0.0.7: the one node nodes.json lists. */
const onNode = nodeLine('tst-small-0001').replace('State=IDLE+CLOUD+NOT_RESPONDING+POWERING_UP', 'State=IDLE+CLOUD').replace('NodeAddr=tst-small-0001', 'NodeAddr=10.0.0.7')
const nodesOut = scontrolNodes.replace(nodeLine('tst-small-0001'), onNode)

/** A Transport answering the three calls by program name; `down` makes each exit 1 as Slurm does. */
function replay(state: {down: boolean; calls: string[][]}): Transport {
  const run = async (argv: string[]): Promise<RunResult> => {
    state.calls.push(argv)
    if (state.down) return {exitCode: 1, stdout: '', stderr: `${argv[3]}: error: Unable to contact slurm controller (connect failure)`}
    const stdout = {scontrol: nodesOut, squeue: squeueJobs, sdiag: sdiagReport}[argv[3] as 'scontrol']
    return {exitCode: 0, stdout, stderr: ''}
  }
  return {description: 'replay', run, check: run, readFile: async () => undefined, writeFile: async () => {}, close: async () => {}}
}

const cfg = {confPath: '/etc/slurm/slurm.conf'} as ManagementContract

describe('collectOnce', () => {
  it('makes the three calls, and writes citc.prom and nodes.json into the directory', async () => {
    const dir = tempDir()
    const state = {down: false, calls: [] as string[][]}
    const logs: string[] = []
    const r = await collectOnce(cfg, {dir, computeExporterPort: 9100} as Monitoring, {transport: replay(state), log: (m) => logs.push(m), now: () => 1795661200})
    expect(state.calls.map((a) => a[3])).toEqual(['scontrol', 'squeue', 'sdiag'])
    expect(state.calls.every((a) => a.includes('SLURM_CONF=/etc/slurm/slurm.conf'))).toBe(true)
    expect([r.up, r.targets, logs]).toEqual([true, 1, []])
    expect(readFileSync(join(dir, PROM_FILE), 'utf8')).toContain('citc_slurm_up 1\n')
    expect(JSON.parse(readFileSync(join(dir, NODES_FILE), 'utf8'))).toEqual([{targets: ['10.0.0.7:9100'], labels: {node: 'tst-small-0001', partition: 'compute', shape: 'local.small'}}])
  })

  it('when Slurm does not answer: up 0, figures and nodes.json kept, one log line when it starts and one when it ends', async () => {
    const dir = tempDir()
    const state = {down: false, calls: [] as string[][]}
    const logs: string[] = []
    const once = () => collectOnce(cfg, {dir, computeExporterPort: 9100} as Monitoring, {transport: replay(state), log: (m) => logs.push(m)})
    await once()
    const before = readFileSync(join(dir, PROM_FILE), 'utf8')
    const nodesBefore = readFileSync(join(dir, NODES_FILE), 'utf8')
    state.down = true
    for (let i = 0; i < 3; i++) expect((await once()).up).toBe(false)
    const after = readFileSync(join(dir, PROM_FILE), 'utf8')
    expect(after).toContain('citc_slurm_up 0\n')
    const nodeCounts = (t: string) => t.split('\n').filter((l) => l.startsWith('citc_slurm_nodes{'))
    expect(nodeCounts(after)).toEqual(nodeCounts(before))
    expect(after).toContain('citc_collect_errors_total{command="scontrol"} 3')
    expect(readFileSync(join(dir, NODES_FILE), 'utf8')).toBe(nodesBefore)
    expect(logs).toHaveLength(1)
    expect(logs[0]).toMatch(/slurmctld did not answer.*Unable to contact slurm controller/)
    state.down = false
    await once()
    expect(logs).toHaveLength(2)
    expect(logs[1]).toMatch(/answers again/)
  })

  it("renders the node programs' counters; a damaged file keeps the last ones and is logged", async () => {
    const dir = tempDir()
    const state = {down: false, calls: [] as string[][]}
    const logs: string[] = []
    writeFileSync(join(dir, NODE_EVENTS_FILE), JSON.stringify({version: 1, resumeRequests: {'local.small': 2}, startFailures: {}}))
    const once = () => collectOnce(cfg, {dir} as Monitoring, {transport: replay(state), log: (m) => logs.push(m)})
    await once()
    writeFileSync(join(dir, NODE_EVENTS_FILE), 'garbage')
    await once()
    expect(readFileSync(join(dir, PROM_FILE), 'utf8')).toContain('citc_node_resume_requests_total{shape="local.small"} 2\n')
    expect(logs.join('\n')).toMatch(/node-events\.json is damaged/)
    // No port: nodes.json is an empty list, never a stale one.
    expect(readFileSync(join(dir, NODES_FILE), 'utf8')).toBe('[]\n')
  })

  it('throws, naming the file, when citc.prom cannot be written', async () => {
    const state = {down: false, calls: [] as string[][]}
    await expect(collectOnce(cfg, {dir: '/nonexistent/citc-metrics'} as Monitoring, {transport: replay(state), log: () => {}})).rejects.toThrow(/cannot write \/nonexistent\/citc-metrics\/citc\.prom/)
  })
})

describe('collectLoop', () => {
  it('runs a cycle, waits, and stops at once when told (SIGTERM), a failing cycle logged, not fatal', async () => {
    // On vitest's fake clock: the loop must end without the clock moving on, which no machine's speed
    // changes (a bound on real elapsed time did).
    vi.useFakeTimers()
    try {
      const stop = new AbortController()
      const logs: string[] = []
      let runs = 0
      let ended = false
      const loop = collectLoop(
        60_000,
        async () => {
          runs++
          throw new Error('boom')
        },
        stop.signal,
        (m) => logs.push(m),
      ).then(() => void (ended = true))
      await vi.advanceTimersByTimeAsync(300)
      expect(ended).toBe(false) // waiting for the next cycle
      stop.abort()
      await vi.advanceTimersByTimeAsync(0)
      // Stopped during the wait, at once: no second cycle, the interval not waited out.
      expect(ended).toBe(true)
      await loop
      expect(runs).toBe(1)
      expect(logs).toEqual(['metrics: ERROR boom'])
    } finally {
      vi.useRealTimers()
    }
  })
})

describe('metricsCollectMain', () => {
  const clusterJson = (monitoring?: object) => {
    const dir = tempDir()
    const file = join(dir, 'cluster.json')
    writeFileSync(
      file,
      JSON.stringify({version: MANAGEMENT_CONTRACT_VERSION, name: 'lab', sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: '/opt/citc/bin', confPath: join(dir, 'slurm.conf'), elasticLog: join(dir, 'elastic.log'), provider: 'local', driver: {}, ...(monitoring ? {monitoring} : {})}),
    )
    const standIn = join(dir, 'stand-in.json')
    writeFileSync(standIn, JSON.stringify({clusterJson: file}))
    return standIn
  }

  it('refuses a cluster without a monitoring section, saying so and what to do (exit 3)', async () => {
    let said = ''
    const code = await metricsCollectMain({standInFile: clusterJson(), write: (m) => (said += m)})
    expect(code).toBe(3)
    expect(said).toMatch(/has no "monitoring" section: the cluster lab was created without monitoring/)
    expect(said).toMatch(/Try: run `citc create --name lab` again without --no-monitoring/)
  })
})

describe("the node programs' part", () => {
  it('counts every node asked for, and each failure by its class or "other"', () => {
    const specs = [{name: 'a', shape: 's'}, {name: 'b', shape: 's'}, {name: 'c', shape: 'g'}]
    const outcomes = [
      {name: 'a', ok: true},
      {name: 'b', ok: false, error: 'citc: quota: …', failure: {class: 'quota' as const, code: 'VcpuLimitExceeded', message: ''}},
      {name: 'c', ok: false, error: 'spawn failed'},
    ]
    expect(resumeEvents(specs, outcomes)).toEqual({
      resumeRequests: [{shape: 's'}, {shape: 's'}, {shape: 'g'}],
      startFailures: [{shape: 's', reason: 'quota'}, {shape: 'g', reason: 'other'}],
    })
  })

  it('records and rewrites nodes.json; a failure is logged, never thrown; nothing without monitoring', async () => {
    const dir = tempDir()
    const logs: string[] = []
    const nodes = async () => parseNodeStates(onNode)
    await nodeProgramMetrics({monitoring: {dir, computeExporterPort: 9100} as Monitoring}, {batch: {resumeRequests: [{shape: 's'}]}, nodes}, (m) => logs.push(m))
    expect(readNodeEvents(dir).resumeRequests).toEqual({s: 1})
    expect(JSON.parse(readFileSync(join(dir, NODES_FILE), 'utf8'))).toHaveLength(1)
    await nodeProgramMetrics({monitoring: {dir: join(dir, 'missing')} as Monitoring}, {batch: {resumeRequests: [{shape: 's'}]}, nodes: async () => Promise.reject(new Error('slurmctld down'))}, (m) => logs.push(m))
    expect(logs).toEqual([expect.stringMatching(/could not count this run's nodes: .*missing/), expect.stringMatching(/could not rewrite nodes\.json .*slurmctld down/)])
    await nodeProgramMetrics({}, {batch: {resumeRequests: [{shape: 's'}]}, nodes}, (m) => logs.push(m))
    expect(logs).toHaveLength(2)
  })
})
