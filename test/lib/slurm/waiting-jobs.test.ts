import {describe, expect, it} from 'vitest'

import {parseNodeStates} from '../../../src/lib/slurm/controller.js'
import {describeWaitingJob, parseWaitingJobs} from '../../../src/lib/slurm/waiting-jobs.js'

const nodes = parseNodeStates(
  [
    'NodeName=c-0001 Arch=x86_64 CPUTot=2 State=IDLE+CLOUD+POWERING_UP Partitions=compute',
    'NodeName=c-0002 Arch=x86_64 CPUTot=2 State=MIXED+CLOUD Partitions=compute',
    'NodeName=c-0003 Arch=x86_64 CPUTot=2 State=IDLE+CLOUD+POWERED_DOWN Partitions=compute',
    'NodeName=c-0004 Arch=x86_64 CPUTot=2 State=DOWN+CLOUD+POWERED_DOWN Partitions=compute Reason=citc: capacity: no room [root@2026-11-23T11:00:00]',
    'NodeName=c-0005 Arch=x86_64 CPUTot=2 State=DOWN+CLOUD+POWERED_DOWN Partitions=compute Reason=citc: capacity: no room [root@2026-11-23T11:00:00]',
  ].join('\n'),
)
// 2026-11-23T11:32:05Z and 11:32:07Z as squeue prints them with SLURM_TIME_FORMAT=%s; the controller's clock 8 s later.
const T0 = Date.parse('2026-11-23T11:32:05Z') / 1000
const NOW = T0 + 8

describe('jobs waiting for their nodes', () => {
  it('counts the nodes still coming up and names those that failed, with the reason, by the controller’s clock', () => {
    const jobs = parseWaitingJobs(`12|alice|${T0}|c-[0001-0002]\n13|bob|${T0 + 2}|c-[0003-0004]\n`, NOW, nodes)
    expect(jobs).toEqual([
      {id: '12', user: 'alice', since: '2026-11-23T11:32:05.000Z', waitingSeconds: 8, nodes: 'c-[0001-0002]', total: 2, poweringUp: 1, failed: []},
      {id: '13', user: 'bob', since: '2026-11-23T11:32:07.000Z', waitingSeconds: 6, nodes: 'c-[0003-0004]', total: 2, poweringUp: 1, failed: [{name: 'c-0004', reason: 'citc: capacity: no room'}]},
    ])
  })

  it('says why and since when, in one line, grouping failed nodes by reason', () => {
    const [a, b, c] = parseWaitingJobs(`12|alice|${T0}|c-[0001-0002]\n13|bob|${T0 + 2}|c-0002\n14|carol|${T0}|c-[0003-0005]\n`, NOW, nodes)
    expect(describeWaitingJob(a)).toBe('job 12 (alice) waits for its nodes: 1 of 2 node(s) powering up, since 11:32:05 UTC (8 s)')
    expect(describeWaitingJob(b)).toBe('job 13 (bob) waits for its nodes: all 1 node(s) up, the job starts in a moment, since 11:32:07 UTC (6 s)')
    expect(describeWaitingJob(c)).toBe('job 14 (carol) waits for its nodes: 1 of 3 node(s) powering up, since 11:32:05 UTC (8 s); 2 failed (c-[0004-0005]): citc: capacity: no room')
  })

  it('is the same in any time zone of the workstation (only epoch seconds are read)', () => {
    const tz = process.env.TZ
    try {
      for (const zone of ['America/New_York', 'Asia/Tokyo']) {
        process.env.TZ = zone
        expect(describeWaitingJob(parseWaitingJobs(`12|alice|${T0}|c-0001\n`, NOW, nodes)[0])).toMatch(/since 11:32:05 UTC \(8 s\)$/)
      }
    } finally {
      if (tz === undefined) delete process.env.TZ
      else process.env.TZ = tz
    }
  })

  it('ignores blank lines and lines without nodes', () => {
    expect(parseWaitingJobs('\n14|carol|N/A|\n', NOW, nodes)).toEqual([])
  })
})
