import {describe, expect, it} from 'vitest'

import {parseNodeStates} from '../../../src/lib/slurm/controller.js'
import {describeWaitingJob, parseWaitingJobs} from '../../../src/lib/slurm/waiting-jobs.js'

const nodes = parseNodeStates(
  [
    'NodeName=c-0001 Arch=x86_64 CPUTot=2 State=IDLE+CLOUD+POWERING_UP Partitions=compute',
    'NodeName=c-0002 Arch=x86_64 CPUTot=2 State=MIXED+CLOUD Partitions=compute',
    'NodeName=c-0003 Arch=x86_64 CPUTot=2 State=IDLE+CLOUD+POWERED_DOWN Partitions=compute',
    'NodeName=c-0004 Arch=x86_64 CPUTot=2 State=DOWN+CLOUD+POWERED_DOWN Partitions=compute Reason=citc: capacity: no room [root@2026-11-23T11:00:00]',
  ].join('\n'),
)

describe('jobs waiting for their nodes', () => {
  it('counts the nodes still coming up and names those that failed, with the reason', () => {
    const jobs = parseWaitingJobs('12|alice|2026-11-23T11:32:05|c-[0001-0002]\n13|bob|2026-11-23T11:32:07|c-[0003-0004]\n', nodes)
    expect(jobs).toEqual([
      {id: '12', user: 'alice', since: '2026-11-23T11:32:05', nodes: 'c-[0001-0002]', total: 2, poweringUp: 1, failed: []},
      {id: '13', user: 'bob', since: '2026-11-23T11:32:07', nodes: 'c-[0003-0004]', total: 2, poweringUp: 1, failed: [{name: 'c-0004', reason: 'citc: capacity: no room'}]},
    ])
  })

  it('says why and since when, in one line', () => {
    const [a, b] = parseWaitingJobs('12|alice|2026-11-23T11:32:05|c-[0001-0002]\n13|bob|2026-11-23T11:32:07|c-0002\n', nodes)
    const now = new Date(Date.parse('2026-11-23T11:32:13'))
    expect(describeWaitingJob(a, now)).toBe('job 12 (alice) waits for its nodes: 1 of 2 node(s) powering up, since 11:32:05 (8 s)')
    expect(describeWaitingJob(b, now)).toBe('job 13 (bob) waits for its nodes: all 1 node(s) up, the job starts in a moment, since 11:32:07 (6 s)')
  })

  it('ignores blank lines and lines without nodes', () => {
    expect(parseWaitingJobs('\n14|carol|N/A|\n', nodes)).toEqual([])
  })
})
