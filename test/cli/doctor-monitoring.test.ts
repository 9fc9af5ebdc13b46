// `citc doctor -c NAME` (the built CLI) against a REAL Prometheus (Debian's /usr/bin/prometheus) this
// test starts on a free loopback port, scraping two targets: a tiny loopback server serving the
// collector's real output (up) and a closed loopback port (down). The local cluster's cluster.json is
// the test's own (a stand-in file names it); citc.prom is written by the real collector cycle from
// Slurm 22.05's captured outputs, stamped now. Prometheus is killed by its PID.
import {type ChildProcess, spawn} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {MANAGEMENT_CONTRACT_VERSION} from '../../src/lib/cluster/management-contract.js'
import {collectCycle} from '../../src/lib/metrics/cycle.js'
import {writePromFile} from '../../src/lib/metrics/write.js'
import {curlGet} from '../../src/lib/tasks/doctor/prometheus-http.js'
import {localTransport} from '../../src/lib/transport/local.js'
import {scontrolNodes, sdiagReport, squeueJobs} from '../lib/metrics/fixtures.js'
import {freePort} from '../helpers/net.js'
import {waitForAsync} from '../helpers/wait.js'
import {cliSandbox, localClusterWithoutController} from './support.js'

const sandbox = cliSandbox('doctor-monitoring')
const metricsDir = join(sandbox.tmp, 'metrics')
let prometheus: ChildProcess | undefined
let exporter: Server | undefined
let promPort = 0
let upPort = 0
let downPort = 0

/** A stand-in file naming a cluster.json of the test's own (monitoring: this section, or none). */
function standIn(label: string, monitoring?: object): string {
  const clusterJson = join(sandbox.tmp, `${label}.cluster.json`)
  const doc = {version: MANAGEMENT_CONTRACT_VERSION, name: 'lab', sharedDir: '/mnt/shared', slurmUser: 'slurm', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog: join(sandbox.tmp, 'elastic.log'), provider: 'local', driver: {}, ...(monitoring ? {monitoring} : {})}
  writeFileSync(clusterJson, JSON.stringify(doc))
  const file = join(sandbox.tmp, `${label}.stand-in.json`)
  writeFileSync(file, JSON.stringify({clusterJson}))
  return file
}

async function targetsSeen(): Promise<boolean> {
  try {
    const r = await fetch(`http://127.0.0.1:${promPort}/api/v1/targets?state=active`, {signal: AbortSignal.timeout(2000)})
    const doc = (await r.json()) as {data: {activeTargets: Array<{health: string}>}}
    return doc.data.activeTargets.length === 2 && doc.data.activeTargets.every((t) => t.health !== 'unknown')
  } catch {
    return false
  }
}

beforeAll(async () => {
  localClusterWithoutController(sandbox.dataDir, 'lab')
  mkdirSync(metricsDir)
  const ok = (stdout: string) => ({ok: true as const, stdout, seconds: 0.01})
  const cycle = collectCycle({now: Math.floor(Date.now() / 1000) - 5, results: {scontrol: ok(scontrolNodes), squeue: ok(squeueJobs), sdiag: ok(sdiagReport)}})
  expect(cycle.up).toBe(true)
  writePromFile(metricsDir, cycle.text)

  // The up target: the collector's text, as node-exporter's textfile collector would serve it.
  exporter = createServer((_req, res) => res.writeHead(200, {'content-type': 'text/plain; version=0.0.4'}).end(cycle.text))
  await new Promise<void>((resolve) => exporter!.listen(0, '127.0.0.1', resolve))
  upPort = (exporter.address() as {port: number}).port
  downPort = await freePort() // nothing listens there
  promPort = await freePort()
  const config = join(sandbox.tmp, 'prometheus.yml')
  writeFileSync(
    config,
    [
      'global: {scrape_interval: 1s, scrape_timeout: 1s}',
      'scrape_configs:',
      `  - {job_name: management, static_configs: [{targets: ['127.0.0.1:${upPort}']}]}`,
      `  - {job_name: nodes, static_configs: [{targets: ['127.0.0.1:${downPort}'], labels: {node: lab-small-0001}}]}`,
      '',
    ].join('\n'),
  )
  prometheus = spawn('/usr/bin/prometheus', [`--config.file=${config}`, `--storage.tsdb.path=${join(sandbox.tmp, 'tsdb')}`, `--web.listen-address=127.0.0.1:${promPort}`], {stdio: 'ignore'})
  await waitForAsync('Prometheus to scrape both targets once', targetsSeen, 30_000, 250)
}, 60_000)

afterAll(async () => {
  if (prometheus?.pid && prometheus.exitCode === null) {
    const exited = new Promise((resolve) => prometheus!.once('exit', resolve))
    process.kill(prometheus.pid, 'SIGTERM')
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))])
    if (prometheus.exitCode === null && prometheus.signalCode === null) process.kill(prometheus.pid, 'SIGKILL')
  }
  await new Promise((resolve) => (exporter ? exporter.close(resolve) : resolve(undefined)))
  sandbox.cleanup()
})

describe('citc doctor -c NAME against a real Prometheus', () => {
  it('the collector fresh, Prometheus ready, the down target with its last error; exit 4', async () => {
    const file = standIn('on', {dir: metricsDir, prometheusUrl: `http://127.0.0.1:${promPort}`, every: 30})
    const human = await sandbox.run(['doctor', '--provider', 'local', '-c', 'lab', '--stand-in', file])
    expect(human.code, human.stdout + human.stderr).toBe(4)
    const out = human.stdout
    expect(out).toContain('Monitoring of cluster lab (this machine):')
    expect(out).toMatch(/^✓ collector +fresh: last success \d+ s ago \(every 30 s\), slurmctld up$/m)
    expect(out).toContain(`✓ prometheus          ready at http://127.0.0.1:${promPort}`)
    expect(out).toMatch(/^✗ targets +1 of 2 down$/m)
    expect(out).toMatch(new RegExp(`^ +down: nodes 127\\.0\\.0\\.1:${downPort} \\(node lab-small-0001\\): .*connection refused`, 'm'))
    expect(out).not.toContain(`127.0.0.1:${upPort}`) // an up target is counted, not listed
    expect(out).toMatch(/The monitoring of lab needs attention: targets\.$/m)

    const json = await sandbox.run(['doctor', '--provider', 'local', '-c', 'lab', '--stand-in', file, '--json'])
    expect(json.code).toBe(4)
    const doc = json.json()
    expect(doc.ok).toBe(false)
    expect(doc.monitoring).toMatchObject({cluster: 'lab', where: 'this machine', enabled: true, ok: false})
    expect(doc.monitoring.checks.map((c: {name: string; ok: boolean}) => [c.name, c.ok])).toEqual([['collector', true], ['prometheus', true], ['targets', false]])
  })

  it('Prometheus not answering: said with the service to look at; no targets asked', async () => {
    const file = standIn('closed', {dir: metricsDir, prometheusUrl: `http://127.0.0.1:${downPort}`, every: 30})
    const r = await sandbox.run(['doctor', '--provider', 'local', '-c', 'lab', '--stand-in', file])
    expect(r.code).toBe(4)
    expect(r.stdout).toMatch(new RegExp(`^✗ prometheus +does not answer at http://127\\.0\\.0\\.1:${downPort}: ECONNREFUSED$`, 'm'))
    expect(r.stdout).toMatch(/citc-prometheus/)
    expect(r.stdout).not.toMatch(/targets/)
  })

  it('a cluster made with --no-monitoring: off, not a failure', async () => {
    const r = await sandbox.run(['doctor', '--provider', 'local', '-c', 'lab', '--stand-in', standIn('off'), '--json'])
    expect(r.json().monitoring).toEqual({cluster: 'lab', where: 'this machine', enabled: false, ok: true, checks: [{name: 'monitoring', ok: true, summary: 'off (created with --no-monitoring)', details: []}]})
  })

  it("clouds' way: the same Prometheus asked with curl through a Transport (this machine's here)", async () => {
    const get = curlGet(localTransport())
    expect(await get(`http://127.0.0.1:${promPort}/-/ready`)).toMatchObject({ok: true, status: 200, body: expect.stringMatching(/Ready/)})
    const targets = await get(`http://127.0.0.1:${promPort}/api/v1/targets?state=active`)
    expect(targets.ok && JSON.parse(targets.body).data.activeTargets).toHaveLength(2)
    expect(await get(`http://127.0.0.1:${downPort}/-/ready`)).toEqual({ok: false, error: expect.stringMatching(/^Failed to connect to 127\.0\.0\.1 port \d+/)})
  })
})
