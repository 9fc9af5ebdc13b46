import {describe, expect, it} from 'vitest'

import {arrayTaskCount, collectArgv, parseJobs, parseSdiag, pendingReason} from '../../../src/lib/metrics/slurm-outputs.js'
import {sdiagReport, squeueJobs} from './fixtures.js'

describe('the collector calls', () => {
  it('are three, against the given slurm.conf, with epoch times and no per-user field', () => {
    const argv = collectArgv('/etc/slurm/slurm.conf')
    expect(Object.keys(argv)).toEqual(['scontrol', 'squeue', 'sdiag'])
    for (const a of Object.values(argv)) expect(a.slice(0, 3)).toEqual(['env', 'SLURM_CONF=/etc/slurm/slurm.conf', 'SLURM_TIME_FORMAT=%s'])
    expect(argv.scontrol).toContain('--all')
    // %u (user), %a (account), %j (name) never asked for.
    expect(argv.squeue.at(-1)).not.toMatch(/%[uaj]/)
  })
})

describe('parseJobs (squeue, Slurm 22.05)', () => {
  it('reads every record, an array of pending tasks as its number of tasks, a reason with a comma whole', () => {
    const jobs = parseJobs(squeueJobs)
    expect(jobs).toHaveLength(9)
    expect(jobs.find((j) => j.partition === 'big' && j.state === 'pending')).toMatchObject({reason: 'JobHeldUser', cpus: 4, count: 10})
    expect(jobs.find((j) => j.state === 'configuring')).toMatchObject({partition: 'big', cpus: 8, count: 1})
    expect(jobs.some((j) => j.reason === 'ReqNodeNotAvail, UnavailableNodes:tst-small-0005')).toBe(true)
    expect(jobs.every((j) => j.submitted > 1_700_000_000)).toBe(true)
  })

  it('refuses what it cannot read, naming the line (the cycle counts it as a failed squeue)', () => {
    expect(() => parseJobs('PENDING|compute|Priority')).toThrow(/cannot read.*PENDING\|compute\|Priority/)
    // Times printed as dates: SLURM_TIME_FORMAT=%s was not set.
    expect(() => parseJobs('PENDING|compute|Priority|2026-11-26T02:00:00|1|N/A')).toThrow(/SLURM_TIME_FORMAT/)
  })

  it('counts array tasks as squeue names them without -r', () => {
    expect(arrayTaskCount('N/A')).toBe(1)
    expect(arrayTaskCount('7')).toBe(1)
    expect(arrayTaskCount('1-10')).toBe(10)
    expect(arrayTaskCount('1-10%2')).toBe(10)
    expect(arrayTaskCount('1,3,5-7')).toBe(5)
    expect(arrayTaskCount('1-9:2')).toBe(5)
  })
})

describe('pendingReason', () => {
  it('keeps a bounded set of label values', () => {
    expect(pendingReason('ReqNodeNotAvail, UnavailableNodes:tst-small-0005')).toBe('ReqNodeNotAvail')
    expect(pendingReason('JobHeldUser')).toBe('JobHeldUser')
    expect(pendingReason('AssocGrpCpuLimit')).toBe('AssocLimit')
    expect(pendingReason('QOSMaxJobsPerUserLimit')).toBe('QOSLimit')
    expect(pendingReason('launch failed requeued held')).toBe('LaunchFailedRequeuedHeld')
    expect(pendingReason('SomethingSlurm26Invents')).toBe('other')
    expect(pendingReason('')).toBe('other')
  })
})

describe('parseSdiag (Slurm 22.05)', () => {
  it('reads the figures, the main and backfill cycles from their own sections, in seconds', () => {
    expect(parseSdiag(sdiagReport)).toEqual({
      serverThreads: 3,
      agentQueue: 0,
      dbdAgentQueue: 0,
      jobsSubmitted: 18,
      jobsStarted: 2,
      jobsCompleted: 0,
      jobsFailed: 0,
      schedulerCycleLast: 140 / 1e6,
      backfillCycleLast: 0,
    })
  })

  it('tells "Agent queue size" from "DBD Agent queue size"', () => {
    const s = parseSdiag(sdiagReport.replace(/^DBD Agent queue size:\s*0$/m, 'DBD Agent queue size: 42'))
    expect([s.agentQueue, s.dbdAgentQueue]).toEqual([0, 42])
  })

  it('refuses a report with a figure missing', () => {
    expect(() => parseSdiag(sdiagReport.replace(/^Jobs failed:.*$/m, ''))).toThrow(/Jobs failed/)
    expect(() => parseSdiag('slurm_load_ctl_conf error: Unable to contact slurm controller')).toThrow(/sections/)
  })
})
