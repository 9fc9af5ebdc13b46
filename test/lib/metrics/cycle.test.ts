import {describe, expect, it} from 'vitest'

import {type CommandResult, collectCycle, type CycleInput, FAMILIES} from '../../../src/lib/metrics/cycle.js'
import {capturedAt, nodeLine, scontrolNodes, sdiagReport, squeueJobs} from './fixtures.js'

const ok = (stdout: string, seconds = 0.01): CommandResult => ({ok: true, stdout, seconds})
const down: CommandResult = {ok: false, error: 'slurm_load_node error: Unable to contact slurm controller (connect failure)', seconds: 20}
const now = capturedAt + 60
const events = {version: 1 as const, resumeRequests: {'local.small': 4}, startFailures: {'local.small': {capacity: 1}}}
const good: CycleInput = {now, results: {scontrol: ok(scontrolNodes), squeue: ok(squeueJobs), sdiag: ok(sdiagReport)}, events}
const lines = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))

describe('one collection from real Slurm 22.05 outputs', () => {
  const {text, up, errors} = collectCycle(good)

  it('is up, with every family of the notes and HELP/TYPE for each', () => {
    expect([up, errors]).toEqual([true, []])
    expect(lines(text, 'citc_slurm_up')).toEqual(['citc_slurm_up 1'])
    for (const f of FAMILIES) {
      expect(text, f.name).toContain(`# TYPE ${f.name} ${f.type}\n`)
    }
  })

  it('counts nodes by power from the flags: powered-down idle nodes are off, not idle and on', () => {
    const nodes = lines(text, 'citc_slurm_nodes')
    expect(nodes).toContain('citc_slurm_nodes{partition="compute",state="idle",power="off",drain="false",responding="true"} 1')
    expect(nodes).toContain('citc_slurm_nodes{partition="compute",state="idle",power="stopping",drain="false",responding="true"} 2')
    expect(nodes).toContain('citc_slurm_nodes{partition="compute",state="idle",power="off",drain="true",responding="true"} 1')
    expect(nodes).toContain('citc_slurm_nodes{partition="compute",state="mixed",power="on",drain="false",responding="true"} 1')
    expect(nodes).toContain('citc_slurm_nodes{partition="big",state="alloc",power="starting",drain="true",responding="false"} 1')
    const total = nodes.reduce((s, l) => s + Number(l.split(' ').at(-1)), 0)
    expect(total).toBe(9)
  })

  it('describes each node once, its reason escaped (quotes, backslash)', () => {
    expect(lines(text, 'citc_slurm_node_info')).toHaveLength(9)
    expect(text).toContain('citc_slurm_node_info{node="tst-small-0004",shape="local.small",partition="compute",state="idle",power="off",reason="disk \\"full\\" \\\\ on /scratch"} 1')
    expect(text).toContain('citc_slurm_node_info{node="tst-joined",shape="",partition="compute",state="mixed",power="on",reason=""} 1')
    expect(text).toContain('citc_slurm_node_cpus{node="tst-joined",kind="alloc"} 1')
    expect(text).toContain('citc_slurm_node_memory_bytes{node="tst-big-0002",kind="total"} 8388608000')
  })

  it('gives idle seconds for powered-on nodes only: 0 with work, now - LastBusyTime without', () => {
    expect(lines(text, 'citc_slurm_node_idle_seconds')).toEqual(['citc_slurm_node_idle_seconds{node="tst-joined"} 0'])
    const idle = nodeLine('tst-joined').replace('State=MIXED', 'State=IDLE')
    const busyAt = Number(/LastBusyTime=(\d+)/.exec(idle)![1])
    const r = collectCycle({...good, results: {...good.results, scontrol: ok(idle)}})
    expect(lines(r.text, 'citc_slurm_node_idle_seconds')).toEqual([`citc_slurm_node_idle_seconds{node="tst-joined"} ${now - busyAt}`])
  })

  it('counts jobs by partition, state and bounded reason, array tasks one by one, and the oldest wait', () => {
    expect(lines(text, 'citc_slurm_jobs')).toEqual([
      'citc_slurm_jobs{partition="big",state="configuring"} 1',
      'citc_slurm_jobs{partition="big",state="pending",reason="JobHeldUser"} 10',
      'citc_slurm_jobs{partition="compute",state="pending",reason="BeginTime"} 1',
      'citc_slurm_jobs{partition="compute",state="pending",reason="Dependency"} 1',
      'citc_slurm_jobs{partition="compute",state="pending",reason="JobHeldUser"} 2',
      'citc_slurm_jobs{partition="compute",state="pending",reason="ReqNodeNotAvail"} 1',
      'citc_slurm_jobs{partition="compute",state="pending",reason="Resources"} 1',
      'citc_slurm_jobs{partition="compute",state="running"} 1',
    ])
    expect(text).toContain('citc_slurm_job_cpus{partition="big",state="pending",reason="JobHeldUser"} 40')
    const submitted = Math.min(...squeueJobs.trim().split('\n').map((l) => Number(l.split('|')[3])))
    expect(lines(text, 'citc_slurm_pending_oldest_seconds')).toEqual([
      `citc_slurm_pending_oldest_seconds{partition="big"} ${now - submitted}`,
      `citc_slurm_pending_oldest_seconds{partition="compute"} ${now - submitted}`,
    ])
  })

  it('gives 0 as the oldest wait of a partition where nothing waits', () => {
    const r = collectCycle({...good, results: {...good.results, squeue: ok('RUNNING|compute|None|1795661116|1|N/A\n')}})
    expect(lines(r.text, 'citc_slurm_pending_oldest_seconds')).toEqual(['citc_slurm_pending_oldest_seconds{partition="big"} 0', 'citc_slurm_pending_oldest_seconds{partition="compute"} 0'])
  })

  it("carries sdiag's figures, counters ending in _total", () => {
    expect(text).toContain('citc_slurm_scheduler_cycle_last_seconds 0.00014\n')
    expect(text).toContain('# TYPE citc_slurm_jobs_submitted_total counter\ncitc_slurm_jobs_submitted_total 18\n')
    expect(text).toContain('citc_slurm_server_threads 3\n')
  })

  it("renders the node programs' counters", () => {
    expect(lines(text, 'citc_node_resume_requests_total')).toEqual(['citc_node_resume_requests_total{shape="local.small"} 4'])
    expect(lines(text, 'citc_node_start_failures_total')).toEqual(['citc_node_start_failures_total{shape="local.small",reason="capacity"} 1'])
  })

  it("hands scontrol's nodes on (for nodes.json), none when scontrol failed", () => {
    expect(collectCycle(good).nodes?.map((n) => n.name)).toHaveLength(9)
    expect(collectCycle({...good, results: {...good.results, scontrol: down}}).nodes).toBeUndefined()
  })

  it('names no user or account', () => {
    expect(text).not.toMatch(/\b(user|account)="/)
    expect(text).not.toMatch(/root/)
  })

  it("records each call's duration and success", () => {
    expect(lines(text, 'citc_collect_duration_seconds')).toContain('citc_collect_duration_seconds{command="squeue"} 0.01')
    expect(lines(text, 'citc_collect_errors_total')).toEqual(['scontrol', 'sdiag', 'squeue'].map((c) => `citc_collect_errors_total{command="${c}"} 0`))
    expect(lines(text, 'citc_collect_last_success_timestamp_seconds')).toContain(`citc_collect_last_success_timestamp_seconds{command="sdiag"} ${now}`)
  })

  it('is the same text whatever order the nodes and jobs come in', () => {
    const shuffled = (t: string) => t.trim().split('\n').reverse().join('\n') + '\n'
    expect(collectCycle({...good, results: {scontrol: ok(shuffled(scontrolNodes)), squeue: ok(shuffled(squeueJobs)), sdiag: ok(sdiagReport)}}).text).toBe(text)
  })
})

describe('a collection when slurmctld does not answer', () => {
  const first = collectCycle(good)
  const failed = collectCycle({now: now + 30, previous: first.text, results: {scontrol: down, squeue: down, sdiag: down}})

  it('says up 0 and keeps the last good figures', () => {
    expect(failed.up).toBe(false)
    expect(failed.errors.map((e) => e.command)).toEqual(['scontrol', 'squeue', 'sdiag'])
    expect(lines(failed.text, 'citc_slurm_up')).toEqual(['citc_slurm_up 0'])
    for (const name of ['citc_slurm_nodes', 'citc_slurm_node_info', 'citc_slurm_jobs', 'citc_slurm_pending_oldest_seconds', 'citc_slurm_jobs_submitted_total']) {
      expect(lines(failed.text, name), name).toEqual(lines(first.text, name))
    }
  })

  it('counts errors across cycles and keeps the time of the last success', () => {
    const again = collectCycle({now: now + 60, previous: failed.text, results: {...good.results, scontrol: down}})
    expect(lines(again.text, 'citc_collect_errors_total')).toEqual([
      'citc_collect_errors_total{command="scontrol"} 2',
      'citc_collect_errors_total{command="sdiag"} 1',
      'citc_collect_errors_total{command="squeue"} 1',
    ])
    expect(lines(again.text, 'citc_collect_last_success_timestamp_seconds')).toEqual([
      `citc_collect_last_success_timestamp_seconds{command="scontrol"} ${now}`,
      `citc_collect_last_success_timestamp_seconds{command="sdiag"} ${now + 60}`,
      `citc_collect_last_success_timestamp_seconds{command="squeue"} ${now + 60}`,
    ])
    // One call failing is enough for up 0; the others' figures are fresh.
    expect(again.up).toBe(false)
    const submitted = Math.min(...squeueJobs.trim().split('\n').map((l) => Number(l.split('|')[3])))
    expect(lines(again.text, 'citc_slurm_pending_oldest_seconds')[0]).toBe(`citc_slurm_pending_oldest_seconds{partition="big"} ${now + 60 - submitted}`)
  })

  it('counts output it cannot read as that call failing, without throwing', () => {
    const r = collectCycle({...good, previous: first.text, results: {...good.results, sdiag: ok('sdiag: error: Unable to contact slurm controller\n'), scontrol: ok('slurm_load_node error: Socket timed out\n')}})
    expect(r.up).toBe(false)
    expect(r.errors.map((e) => e.command)).toEqual(['scontrol', 'sdiag'])
    expect(r.errors[0].error).toMatch(/scontrol printed no node: slurm_load_node error/)
    expect(lines(r.text, 'citc_slurm_nodes')).toEqual(lines(first.text, 'citc_slurm_nodes'))
  })

  it('writes a file with up 0 and its own figures when there was never a good one', () => {
    const r = collectCycle({now, results: {scontrol: down, squeue: down, sdiag: down}})
    expect(lines(r.text, 'citc_slurm_up')).toEqual(['citc_slurm_up 0'])
    expect(lines(r.text, 'citc_slurm_nodes')).toEqual([])
    expect(lines(r.text, 'citc_collect_last_success_timestamp_seconds')).toContain('citc_collect_last_success_timestamp_seconds{command="scontrol"} 0')
    // No HELP without samples.
    expect(r.text).not.toContain('citc_slurm_node_info')
  })

  it("keeps the last counters when node-events.json cannot be read, without calling Slurm down", () => {
    const r = collectCycle({...good, now: now + 30, previous: first.text, events: {error: 'node-events.json is damaged'}})
    expect(r.up).toBe(true)
    expect(lines(r.text, 'citc_node_start_failures_total')).toEqual(lines(first.text, 'citc_node_start_failures_total'))
  })

  it('survives a previous file that is garbage', () => {
    const r = collectCycle({now, previous: '\u0000garbage {{\n# HELP x\ncitc_collect_errors_total{command="scontrol"} NaNx\n', results: {scontrol: down, squeue: ok(squeueJobs), sdiag: ok(sdiagReport)}})
    expect(lines(r.text, 'citc_collect_errors_total')[0]).toBe('citc_collect_errors_total{command="scontrol"} 1')
  })
})
