// `citc doctor -c NAME`'s monitoring verdicts, pure (a fresh, stale or never-written collector, the
// controller down, Prometheus not answering or not ready, targets down), curl's output read as an HTTP
// answer, and the whole check over a memory node (monitoring off, the collector's file by the node's
// clock, Prometheus asked through the given GET).
import {describe, expect, it} from 'vitest'

import {MANAGEMENT_CONTRACT_VERSION} from '../../../../src/lib/cluster/management-contract.js'
import {checkMonitoringVia, monitoringLines} from '../../../../src/lib/tasks/doctor/check-monitoring.js'
import {collectorCheck, type HttpAnswer, readyCheck, targetsCheck} from '../../../../src/lib/tasks/doctor/monitoring-checks.js'
import {curlAnswer, curlArgv} from '../../../../src/lib/tasks/doctor/prometheus-http.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const NOW = 1_764_130_000
/** citc.prom as the collector writes it (the lines doctor reads). */
const prom = (o: {up?: number; last?: Partial<Record<'scontrol' | 'squeue' | 'sdiag', number>>} = {}) => {
  const last = {scontrol: NOW - 20, squeue: NOW - 20, sdiag: NOW - 20, ...o.last}
  return [
    '# HELP citc_slurm_up 1 when all three Slurm calls of the last collection answered',
    '# TYPE citc_slurm_up gauge',
    `citc_slurm_up ${o.up ?? 1}`,
    '# TYPE citc_collect_last_success_timestamp_seconds gauge',
    ...Object.entries(last).map(([c, v]) => `citc_collect_last_success_timestamp_seconds{command="${c}"} ${v}`),
    '',
  ].join('\n')
}
const collector = (text: string | undefined) => collectorCheck({text, file: '/var/lib/citc/metrics/citc.prom on this machine', now: NOW, every: 30, elasticLog: '/var/log/citc/elastic.log', cluster: 'lab'})

describe('collectorCheck', () => {
  it('fresh: every call succeeded within 3 intervals and slurmctld answered', () => {
    expect(collector(prom())).toEqual({name: 'collector', ok: true, summary: 'fresh: last success 20 s ago (every 30 s), slurmctld up', details: []})
    expect(collector(prom({last: {sdiag: NOW - 90}})).ok).toBe(true) // exactly 3 × 30 s
  })

  it('stale: the calls that have not succeeded for more than 3 intervals, and the service to look at', () => {
    const all = collector(prom({last: {scontrol: NOW - 600, squeue: NOW - 600, sdiag: NOW - 600}}))
    expect(all.ok).toBe(false)
    expect(all.summary).toBe('stale: no Slurm call succeeded in the last 90 s (3 × every 30 s)')
    expect(all.details).toEqual(['scontrol: last succeeded 600 s ago', 'squeue: last succeeded 600 s ago', 'sdiag: last succeeded 600 s ago'])
    expect(all.hint).toMatch(/^the collector has stopped: check the service citc-metrics .*systemctl status citc-metrics\.timer.* the elastic log \/var\/log\/citc\/elastic\.log$/)
    const one = collector(prom({up: 0, last: {sdiag: 0}}))
    expect(one.summary).toMatch(/^stale: not every Slurm call/)
    expect(one.details).toEqual(['sdiag: never succeeded', "citc_slurm_up 0: slurmctld did not answer all of the collector's last Slurm calls"])
  })

  it('up 0 with fresh timestamps: the controller, with citc status and the elastic log to look at', () => {
    const c = collector(prom({up: 0}))
    expect(c.ok).toBe(false)
    expect(c.summary).toBe('the controller did not answer its last cycle (citc_slurm_up 0)')
    expect(c.hint).toMatch(/`citc status -c lab`.*elastic log \/var\/log\/citc\/elastic\.log/)
  })

  it('no file, or a file without the collector\'s figures', () => {
    expect(collector(undefined)).toMatchObject({ok: false, summary: '/var/lib/citc/metrics/citc.prom on this machine does not exist: the collector never wrote it', hint: expect.stringContaining('citc-metrics')})
    expect(collector('node_load1 0.5\n')).toMatchObject({ok: false, summary: expect.stringContaining('has no citc_collect_last_success_timestamp_seconds')})
  })
})

const answer = (status: number, body: unknown): HttpAnswer => ({ok: true, status, body: typeof body === 'string' ? body : JSON.stringify(body)})
const targets = (...ts: Array<{job: string; instance: string; health: string; lastError?: string; node?: string}>) =>
  answer(200, {status: 'success', data: {activeTargets: ts.map((t) => ({labels: {job: t.job, instance: t.instance, ...(t.node ? {node: t.node} : {})}, health: t.health, lastError: t.lastError ?? ''})), droppedTargets: []}})

describe('readyCheck and targetsCheck', () => {
  it('Prometheus not answering, or not ready', () => {
    expect(readyCheck('http://127.0.0.1:9090', {ok: false, error: 'ECONNREFUSED'})).toMatchObject({ok: false, summary: 'does not answer at http://127.0.0.1:9090: ECONNREFUSED', hint: expect.stringContaining('citc-prometheus')})
    expect(readyCheck('http://127.0.0.1:9090', answer(503, 'Service Unavailable'))).toMatchObject({ok: false, summary: 'not ready at http://127.0.0.1:9090 (HTTP 503: Service Unavailable)'})
    expect(readyCheck('http://127.0.0.1:9090', answer(200, 'Prometheus Server is Ready.\n'))).toMatchObject({ok: true, summary: 'ready at http://127.0.0.1:9090'})
  })

  it('each target that is down, with its last error', () => {
    const c = targetsCheck(targets({job: 'management', instance: '127.0.0.1:9100', health: 'up'}, {job: 'nodes', instance: '10.0.0.7:9100', node: 'lab-small-0001', health: 'down', lastError: 'connection refused'}, {job: 'nodes', instance: '10.0.0.8:9100', health: 'unknown'}))
    expect(c.ok).toBe(false)
    expect(c.summary).toBe('1 of 3 down')
    expect(c.details).toEqual(['down: nodes 10.0.0.7:9100 (node lab-small-0001): connection refused', 'not scraped yet: nodes 10.0.0.8:9100'])
    expect(c.hint).toMatch(/citc-node-exporter/)
    expect(targetsCheck(targets({job: 'management', instance: '127.0.0.1:9100', health: 'up'}))).toEqual({name: 'targets', ok: true, summary: '1 of 1 up', details: []})
  })

  it('no targets, or an answer that is not Prometheus\'s', () => {
    expect(targetsCheck(targets())).toMatchObject({ok: false, summary: 'none: Prometheus scrapes nothing'})
    expect(targetsCheck(answer(404, '404 page not found'))).toMatchObject({ok: false, summary: expect.stringMatching(/^could not be listed: not Prometheus's answer/)})
    expect(targetsCheck({ok: false, error: 'no answer in 5 s'})).toMatchObject({ok: false, summary: 'could not be listed: no answer in 5 s'})
  })
})

describe('curl on the management node', () => {
  it('reads the body and the status code; says what failed', () => {
    expect(curlArgv('http://127.0.0.1:9090/-/ready')).toEqual(['curl', '-sS', '--max-time', '5', '-w', '\\n%{http_code}', 'http://127.0.0.1:9090/-/ready'])
    expect(curlAnswer({exitCode: 0, stdout: 'Prometheus Server is Ready.\n\n200', stderr: ''}, 'n')).toEqual({ok: true, status: 200, body: 'Prometheus Server is Ready.\n'})
    expect(curlAnswer({exitCode: 7, stdout: '', stderr: 'curl: (7) Failed to connect to 127.0.0.1 port 9090 after 0 ms: Couldn\'t connect to server\n'}, 'n')).toEqual({ok: false, error: "Failed to connect to 127.0.0.1 port 9090 after 0 ms: Couldn't connect to server"})
    expect(curlAnswer({exitCode: 127, stdout: '', stderr: 'sh: curl: not found'}, 'admin@mgmt')).toEqual({ok: false, error: 'curl is not installed on admin@mgmt (apt-get install curl there)'})
  })
})

const contract = (monitoring?: object) =>
  JSON.stringify({version: MANAGEMENT_CONTRACT_VERSION, name: 'lab', sharedDir: '/mnt/shared', slurmUser: 'slurm', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog: '/var/log/citc/elastic.log', provider: 'local', driver: {}, ...(monitoring ? {monitoring} : {})})

describe('checkMonitoringVia', () => {
  const noHttp = async (): Promise<HttpAnswer> => {
    throw new Error('no HTTP expected')
  }

  it('a cluster made with --no-monitoring: off, which is no failure', async () => {
    const node = new MemoryTransport({files: {'/etc/citc/cluster.json': contract()}})
    const r = await checkMonitoringVia('lab', node, {now: async () => NOW, http: noHttp})
    expect(r).toMatchObject({cluster: 'lab', enabled: false, ok: true})
    expect(monitoringLines(r)).toEqual(['Monitoring of cluster lab (the memory node):', '✓ monitoring          off (created with --no-monitoring)'])
  })

  it("reads citc.prom by the node's clock and asks Prometheus through the GET it is given", async () => {
    const node = new MemoryTransport({files: {'/etc/citc/cluster.json': contract({dir: '/var/lib/citc/metrics', prometheusUrl: 'http://127.0.0.1:9090/', every: 30}), '/var/lib/citc/metrics/citc.prom': prom()}})
    const asked: string[] = []
    const http = async (url: string) => {
      asked.push(url)
      return url.endsWith('/-/ready') ? answer(200, 'Ready') : targets({job: 'management', instance: '127.0.0.1:9100', health: 'down', lastError: 'EOF'})
    }
    const r = await checkMonitoringVia('lab', node, {now: async () => NOW + 100, http})
    expect(asked).toEqual(['http://127.0.0.1:9090/-/ready', 'http://127.0.0.1:9090/api/v1/targets?state=active'])
    expect(r.ok).toBe(false)
    expect(r.checks.map((c) => [c.name, c.ok])).toEqual([['collector', false], ['prometheus', true], ['targets', false]])
    expect(monitoringLines(r)).toContain('✓ prometheus          ready at http://127.0.0.1:9090/')
  })
})
