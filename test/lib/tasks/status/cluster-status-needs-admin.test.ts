// citc status lists the nodes only an admin can bring back: starts a cloud refused for a quota, a
// permission or a setting (the reasons citc node resume writes, node-failures.ts failureReason).
import {describe, expect, it} from 'vitest'

import {failureReason} from '../../../../src/lib/providers/node-failures.js'
import {needsAdmin, needsAdminText, type NodeRow} from '../../../../src/lib/tasks/status/cluster-status.js'

const row = (name: string, reason?: string): NodeRow => ({name, kind: 'aws', state: 'IDLE+CLOUD+POWERED_DOWN', power: 'down', ...(reason ? {reason} : {})})

describe('needsAdmin', () => {
  it('lists quota, auth and config refusals — not capacity (the watchdog returns those) nor an admin’s own drain', () => {
    const quota = failureReason({class: 'quota', code: 'VcpuLimitExceeded', message: ''}, {shape: 'c5.xlarge', place: 'eu-west-2a'})
    const auth = failureReason({class: 'auth', code: 'UnauthorizedOperation', message: ''}, {shape: 'c5.xlarge', place: 'eu-west-2a'})
    const capacity = failureReason({class: 'capacity', code: 'InsufficientInstanceCapacity', message: ''}, {shape: 'c5.xlarge', place: 'eu-west-2a'})
    const nodes = [row('n1', quota), row('n2', auth), row('n3', capacity), row('n4', 'disk swap (alice)'), row('n5')]
    expect(needsAdmin(nodes)).toEqual([
      {node: 'n1', reason: 'citc: quota: VcpuLimitExceeded for c5.xlarge in eu-west-2a'},
      {node: 'n2', reason: 'citc: auth: UnauthorizedOperation for c5.xlarge in eu-west-2a'},
    ])
  })

  it('says what to do, one node per line, and nothing when none', () => {
    expect(needsAdminText({needsAdmin: []})).toBe('')
    const text = needsAdminText({needsAdmin: [{node: 'n1', reason: 'citc: quota: VcpuLimitExceeded for c5.xlarge in eu-west-2a'}]})
    expect(text).toBe(
      '\n\nNeeds an admin (the cloud refused these starts; fix the quota, permission or setting, then `scontrol update NodeName=<node> State=RESUME`):\n' +
        '  n1: citc: quota: VcpuLimitExceeded for c5.xlarge in eu-west-2a',
    )
  })
})
