// The local provider's preflight, pure: what it refuses before this machine becomes a management node.
import {describe, expect, it} from 'vitest'

import {checkPreflight, type PreflightFacts} from '../../../../src/lib/providers/local/preflight.js'

const DEBIAN = 'ID=debian\nVERSION_ID="12"\n'
const facts = (f: Partial<PreflightFacts> = {}): PreflightFacts => ({uid: 0, osRelease: DEBIAN, aptGet: true, busyPorts: [], busyMonitoringPorts: [], ...f})
const refusal = (f: () => unknown) => {
  try {
    f()
  } catch (error) {
    return error as {message: string; hint?: string}
  }
  throw new Error('expected a refusal')
}

describe('local preflight: monitoring ports (issue #21)', () => {
  it('another program on 9090 or 9100 is refused for a new monitored cluster, saying what to do', () => {
    const e = refusal(() => checkPreflight(facts({busyMonitoringPorts: [9090]}), 'lab', false))
    expect(e.message).toBe("port 9090 on this machine is taken (another Prometheus or node-exporter?): citc's monitoring listens on 127.0.0.1:9090 and :9100")
    expect(e.hint).toBe('stop what listens there, or create the cluster with --no-monitoring')
    // --force takes over Slurm's configuration, never another Prometheus.
    expect(() => checkPreflight(facts({busyMonitoringPorts: [9090, 9100]}), 'lab', true)).toThrow(/port 9090 and 9100/)
  })

  it('passes with --no-monitoring, and for the cluster whose own Prometheus it is (a re-run)', () => {
    expect(checkPreflight(facts({busyMonitoringPorts: [9090]}), 'lab', false, false)).toEqual([])
    expect(checkPreflight(facts({busyMonitoringPorts: [9090, 9100], citcCluster: 'lab'}), 'lab', false)).toEqual([])
  })
})
