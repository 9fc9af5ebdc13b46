// `citc monitor --query` (monitorQuery) and reachPrometheus against a real Prometheus the test starts
// (history by promtool): a local cluster reads its cluster.json here; a cloud cluster's cluster.json
// is read over a real sshd (test/helpers/sshd.ts) and Prometheus reached through the SSH tunnel, with
// the pinned host key — a wrong one is refused. Plus the errors a user meets: bad PromQL (Prometheus's
// own text), Prometheus not answering, a cluster created with --no-monitoring.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {clusterRegistry} from '../../../src/lib/cluster/registry.js'
import type {ClusterRecord} from '../../../src/lib/cluster/schema.js'
import {CitcError, HostKeyMismatchError} from '../../../src/lib/errors.js'
import type {Io} from '../../../src/lib/io.js'
import {monitorQuery, monitorServe} from '../../../src/lib/monitoring/monitor.js'
import {instantQuery} from '../../../src/lib/monitoring/prometheus.js'
import {reachPrometheus} from '../../../src/lib/monitoring/reach.js'
import {freePort} from '../../helpers/net.js'
import {openMetrics, startPrometheus, type PrometheusSandbox} from '../../helpers/prometheus.js'
import {startSshd, type SshdSandbox} from '../../helpers/sshd.js'
import {FAKE_EC2_SECTION} from '../../doubles/cloud-api/ec2.js'

const NOW = Math.floor(Date.now() / 1000)
const TIMES = Array.from({length: 60}, (_, i) => NOW - 30 - (59 - i) * 30)

let prometheus: PrometheusSandbox
let sshd: SshdSandbox
let work: string

const common = {version: 1, sharedDir: '/mnt/shared', slurmUser: 'slurm', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog: '/var/log/citc/elastic.log'}
const awsDriver = FAKE_EC2_SECTION
const monitoring = (url: string) => ({dir: '/var/lib/citc/metrics', prometheusUrl: url, every: 30})

function contractFile(name: string, doc: object): string {
  const file = join(work, `${name}.json`)
  writeFileSync(file, JSON.stringify(doc))
  return file
}

const localRecord = (name: string): ClusterRecord => ({
  name,
  provider: 'local',
  createdAt: '2026-11-21T12:01:02.000Z',
  origin: 'created',
  mgmt: {host: 'localhost', port: 22, user: 'root', keyPath: '/k'},
  slurm: {confPath: '/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'},
})

const cloudRecord = (fingerprint = sshd.hostKeyFingerprint): ClusterRecord => ({
  name: 'cloudy',
  provider: 'aws',
  createdAt: '2026-11-21T12:01:02.000Z',
  origin: 'registered',
  mgmt: {host: sshd.host, port: sshd.port, user: sshd.user, keyPath: sshd.clientKeyPath, hostKeyFingerprint: fingerprint},
  slurm: {confPath: '/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'},
})

function io(json = false): Io & {out: string[]} {
  const out: string[] = []
  return {out, log: (m) => out.push(m), note: () => {}, json, interactive: false, yes: true, renderer: 'silent'} as Io & {out: string[]}
}

const caught = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a rejection')
    },
    (e: unknown) => e as CitcError,
  )

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'citc-monitor-query-'))
  const history = openMetrics([
    {name: 'citc_slurm_nodes', labels: {partition: 'compute', state: 'idle', power: 'off'}, points: TIMES.map((t) => [t, 3])},
    {name: 'citc_slurm_nodes', labels: {partition: 'compute', state: 'idle', power: 'on'}, points: TIMES.map((t) => [t, 2])},
  ])
  ;[prometheus, sshd] = await Promise.all([startPrometheus({history}), startSshd()])
}, 60_000)

afterAll(async () => {
  await prometheus?.stop()
  await sshd?.stop()
  if (work) rmSync(work, {recursive: true, force: true})
})

describe('monitorQuery (citc monitor --query) on a local cluster', () => {
  const dataDir = () => join(work, 'data')
  beforeAll(() => {
    clusterRegistry(dataDir()).create(localRecord('here'))
  })
  const reach = () => ({contractFile: contractFile('here', {...common, name: 'here', provider: 'local', driver: {}, monitoring: monitoring(`${prometheus.url}/`)})})

  it('prints one line per series, its labels then its value', async () => {
    const out = io()
    const doc = await monitorQuery(out, {dataDir: dataDir(), query: 'sum by (power) (citc_slurm_nodes)', reach: reach()})
    expect(out.out.join('\n').split('\n').sort()).toEqual(['{power="off"}  3', '{power="on"}   2'])
    expect(doc.cluster).toBe('here')
    expect(doc.data.resultType).toBe('vector')
  })

  it('with --json prints nothing itself and returns Prometheus’s data', async () => {
    const out = io(true)
    const doc = await monitorQuery(out, {dataDir: dataDir(), cluster: 'here', query: 'sum(citc_slurm_nodes)', reach: reach()})
    expect(out.out).toEqual([])
    expect(doc).toMatchObject({cluster: 'here', query: 'sum(citc_slurm_nodes)', data: {resultType: 'vector', result: [{metric: {}, value: [expect.any(Number), '5']}]}})
  })

  it('says so when the expression matches nothing, and prints a scalar as it is', async () => {
    const out = io()
    await monitorQuery(out, {dataDir: dataDir(), query: 'citc_no_such_metric', reach: reach()})
    await monitorQuery(out, {dataDir: dataDir(), query: 'scalar(sum(citc_slurm_nodes)) * 2', reach: reach()})
    expect(out.out).toEqual(['(no series: the expression matched nothing at this time)', '10'])
  })

  it('refuses bad PromQL with Prometheus’s own explanation', async () => {
    const e = await caught(monitorQuery(io(), {dataDir: dataDir(), query: 'sum(citc_slurm_nodes', reach: reach()}))
    expect(e.kind).toBe('invalidInput')
    expect(e.message).toMatch(/^Prometheus refused the query: .*parse error.*\(bad_data\)$/)
  })

  it('says what to check when Prometheus does not answer', async () => {
    const port = await freePort() // nothing listens there
    const file = contractFile('down', {...common, name: 'here', provider: 'local', driver: {}, monitoring: monitoring(`http://127.0.0.1:${port}`)})
    const e = await caught(monitorQuery(io(), {dataDir: dataDir(), query: 'up', reach: {contractFile: file}}))
    expect(e.kind).toBe('remote')
    expect(e.message).toBe(`Prometheus at http://127.0.0.1:${port} (this machine) does not answer (ECONNREFUSED)`)
    expect(e.hint).toContain('citc doctor -c here')
  })

  it('explains a cluster created with --no-monitoring', async () => {
    const file = contractFile('none', {...common, name: 'here', provider: 'local', driver: {}})
    const e = await caught(monitorQuery(io(), {dataDir: dataDir(), query: 'up', reach: {contractFile: file}}))
    expect(e.kind).toBe('usage')
    expect(e.message).toMatch(/created with --no-monitoring/)
    expect(e.hint).toMatch(/without --no-monitoring/)
  })
})

describe('reachPrometheus on a cloud cluster: cluster.json over SSH, then a tunnel', () => {
  it('reads the URL on the management node and reaches Prometheus through the tunnel', async () => {
    const port = new URL(prometheus.url).port
    const file = contractFile('cloudy', {...common, name: 'cloudy', provider: 'aws', driver: awsDriver, monitoring: monitoring(`http://127.0.0.1:${port}`)})
    const reach = await reachPrometheus(cloudRecord(), {contractFile: file, readyTimeoutMs: 10_000})
    try {
      expect(reach.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      expect(reach.baseUrl).not.toBe(prometheus.url)
      expect(reach.description).toContain(`${sshd.user}@${sshd.host}:${sshd.port}`)
      const data = await instantQuery(reach.baseUrl, 'sum(citc_slurm_nodes)', {cluster: 'cloudy'})
      expect(data).toMatchObject({resultType: 'vector', result: [{value: [expect.any(Number), '5']}]})
    } finally {
      await reach.close()
    }
    await expect(fetch(`${reach.baseUrl}/-/ready`)).rejects.toThrow()
  })

  it('serves the page through the tunnel until interrupted, then closes both (citc monitor)', async () => {
    const file = contractFile('cloudy3', {...common, name: 'cloudy', provider: 'aws', driver: awsDriver, monitoring: monitoring(prometheus.url)})
    const dataDir = join(work, 'cloud-data')
    clusterRegistry(dataDir).create(cloudRecord())
    const out = io()
    const stop = new AbortController()
    const serving = monitorServe(out, {dataDir, open: false, reach: {contractFile: file, readyTimeoutMs: 10_000}, signal: stop.signal})
    const deadline = Date.now() + 20_000
    while (!out.out.join('').includes('http://') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const url = /http:\/\/127\.0\.0\.1:\d+\/[\w-]{22}\//.exec(out.out.join('\n'))![0]
    expect(await (await fetch(url)).text()).toContain('<title>citc monitor</title>')
    const q = await (await fetch(`${url}api/v1/query?query=sum(citc_slurm_nodes)`)).json()
    expect(q).toMatchObject({status: 'success', data: {result: [{value: [expect.any(Number), '5']}]}})
    const ends = () => sshd.log().match(/Received disconnect/g)?.length ?? 0
    const endsBefore = ends()
    stop.abort()
    expect(await serving).toEqual({cluster: 'cloudy', url})
    await expect(fetch(url)).rejects.toThrow()
    // The SSH connection is gone too: sshd logs its end.
    const until = Date.now() + 10_000
    while (ends() === endsBefore && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
    expect(ends()).toBe(endsBefore + 1)
  })

  it('refuses a management node whose host key is not the pinned one', async () => {
    const file = contractFile('cloudy2', {...common, name: 'cloudy', provider: 'aws', driver: awsDriver, monitoring: monitoring(prometheus.url)})
    const e = await caught(reachPrometheus(cloudRecord(`SHA256:${'B'.repeat(43)}`), {contractFile: file, readyTimeoutMs: 10_000}))
    expect(e).toBeInstanceOf(HostKeyMismatchError)
  })
})
