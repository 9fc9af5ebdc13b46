// A cloud cluster's power saving, small enough for the fault suite (issue #23, faults 4 and 5): a real
// slurmctld of the test's own (slurm.ts) whose ResumeProgram, SuspendProgram and ResumeFailProgram are
// the built citc's node programs (bin/run.js node resume|suspend|fail, as slurmctld runs them on a
// management node), driving the real AWS SDK against the fake EC2 (test/doubles/cloud-api/ec2.ts)
// through an outage proxy (outage.ts) the test can make fail. No instance boots: a launched node stays
// POWERING_UP, which owns its instance as far as the watchdog is concerned. The watchdog
// (`citc node sync`, src/lib/nodes/node-sync.ts) runs in this process with the same cluster.json and
// the same driver the programs use, since the command itself reads only /etc/citc/cluster.json.
import {execFile} from 'node:child_process'
import {existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {runNodeSync, type SyncResult, type SyncSkipped} from '../../src/lib/nodes/node-sync.js'
import type {SyncSettings} from '../../src/lib/nodes/sync-plan.js'
import {realContext} from '../../src/lib/providers/types.js'
import {Controller} from '../../src/lib/slurm/controller.js'
import type {DriverStandIn, StandIn} from '../../src/lib/stand-in.js'
import {readNodeHostConfig} from '../../src/lib/tasks/node/host-config.js'
import {driverFor, PROGRAM_BUDGET_MS} from '../../src/lib/tasks/node/node-programs.js'
import {localTransport} from '../../src/lib/transport/local.js'
import {type Ec2Instance, FAKE_EC2_SECTION, type FakeEc2, startFakeEc2} from '../doubles/cloud-api/ec2.js'
import {EC2_INTERNAL_ERROR, type OutageProxy, startOutageProxy} from '../doubles/cloud-api/outage.js'
import {ROOT} from './cli.js'
import type {SlurmSandbox} from './slurm.js'

export const CLOUD_SLURM_SHAPE = 'c5.xlarge'
const AMI = 'ami-0fa017000000000001'

/** The SDK's environment: the fake IMDS only, never a key of this machine's (the programs get the same). */
const AWS_ENV_CLEARED = [
  'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_DEFAULT_PROFILE', 'AWS_REGION',
  'AWS_DEFAULT_REGION', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_EC2', 'AWS_EC2_METADATA_DISABLED', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_ROLE_ARN',
]

export interface NodeView {
  state: string
  reason: string
}

export interface CloudSlurm {
  sb: SlurmSandbox
  ec2: FakeEc2
  proxy: OutageProxy
  dir: string
  /** The nodes slurm.conf declares, in order. */
  nodes: string[]
  /** The node programs' log (elastic.log) and their own output (programs.log). */
  elasticLog(): string
  programsLog(): string
  /** PIDs of this cluster's node programs still running (each wrapper writes its own before it execs). */
  running(): number[]
  /** The driver part of the stand-in the programs read at their start (a later program sees a change). */
  setDriver(driver: Partial<DriverStandIn>): void
  /**
   * scontrol, asynchronously: the fake cloud and the proxy answer from this process, so nothing here may
   * block it (a blocked event loop turns into the programs' own timeouts).
   */
  scontrol(args: string[]): Promise<{status: number; stdout: string; stderr: string}>
  /** Any Slurm command (sbatch, squeue) the same way. */
  slurm(cmd: string, args: string[]): Promise<{status: number; stdout: string; stderr: string}>
  /** Every node's state and reason, by one scontrol call. */
  states(): Promise<Map<string, NodeView>>
  node(name: string): Promise<NodeView>
  /** Instances pending or running. */
  alive(): Ec2Instance[]
  /** Machines ever launched per node (accepted RunInstances; a repeated ClientToken is the same machine). */
  launchesPerNode(): Map<string, number>
  /** One watchdog run (node sync) against this slurmctld and the fake cloud. */
  watchdog(settings?: Partial<SyncSettings>): Promise<SyncResult | SyncSkipped>
  /** Everything a failing test needs to say what happened. */
  report(): Promise<string>
  stop(): Promise<void>
}

/**
 * The cluster on `sb` (a slurmSandbox the test made, not yet started; its cluster id names the nodes),
 * with `count` nodes of one shape; slurmctld is started here and stopped, with everything else, by stop().
 */
export async function cloudSlurm(sb: SlurmSandbox, o: {count: number; driver?: Partial<DriverStandIn>; conf?: string[]}): Promise<CloudSlurm> {
  const saved = new Map([...AWS_ENV_CLEARED, 'AWS_EC2_METADATA_SERVICE_ENDPOINT', 'AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'SLURM_CONF'].map((k) => [k, process.env[k]]))
  const cluster = sb.clusterId
  const ec2 = await startFakeEc2()
  const proxy = await startOutageProxy(ec2.url, EC2_INTERNAL_ERROR)
  const dir = sb.dir
  const nodes = Array.from({length: o.count}, (_, i) => `${cluster}-c5-xlarge-${String(i + 1).padStart(4, '0')}`)
  const imagesJson = join(dir, 'images.json')
  writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: `citc-${cluster}-x86_64-v1`, version: '1', id: AMI}}, inputs: {}}))
  const clusterJson = join(dir, 'cluster.json')
  const elasticLog = join(dir, 'elastic.log')
  writeFileSync(
    clusterJson,
    JSON.stringify({
      version: 1, name: cluster, sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: dir, confPath: sb.confPath, elasticLog, provider: 'aws',
      driver: FAKE_EC2_SECTION,
    }),
  )
  const standInFile = join(dir, 'stand-in.json')
  const standIn = (): StandIn => JSON.parse(readFileSync(standInFile, 'utf8'))
  const setDriver = (driver: Partial<DriverStandIn>) =>
    writeFileSync(standInFile, JSON.stringify({clusterJson, driver: {endpoints: {api: proxy.url, metadata: ec2.metadataUrl}, imagesJson, ...driver}} satisfies StandIn))
  setDriver(o.driver ?? {})

  // slurmctld runs its programs with an environment of its own: the wrapper gives them what they need.
  const sdkEnv = {AWS_EC2_METADATA_SERVICE_ENDPOINT: ec2.metadataUrl, AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'), AWS_CONFIG_FILE: join(dir, 'no-config')}
  const pids = join(dir, 'programs.pids')
  const programsLog = join(dir, 'programs.log')
  for (const program of ['resume', 'suspend', 'fail']) {
    writeFileSync(
      join(dir, program),
      `#!/bin/sh\necho $$ >> ${pids}\nexec env ${Object.entries(sdkEnv).map(([k, v]) => `${k}=${v}`).join(' ')} NODE_ENV=production ${process.execPath} ${join(ROOT, 'bin', 'run.js')} node ${program} "$1" --stand-in ${standInFile} >> ${programsLog} 2>&1\n`,
      {mode: 0o755},
    )
  }
  mkdirSync(join(dir, 'sync'))
  // A requeued job waits cred_expire (120 s by default) before it may start again: cut to 10 s, so a
  // node put down with its jobs is started again within the test's time.
  const base = sb.base.replace(/^AuthInfo=(.*)$/m, 'AuthInfo=$1,cred_expire=10')
  writeFileSync(
    sb.confPath,
    base +
      [
        `ResumeProgram=${dir}/resume`, `SuspendProgram=${dir}/suspend`, `ResumeFailProgram=${dir}/fail`,
        // No slurmd ever registers here: nodes stay POWERING_UP (ResumeTimeout outlasts the test) and
        // nothing is suspended for idleness while the test runs.
        'SuspendTime=3600', 'SuspendTimeout=5', 'ResumeTimeout=1800', 'ResumeRate=0', 'SuspendRate=0',
        'ReturnToService=2', 'SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs', 'PrivateData=cloud', 'TreeWidth=65533',
        ...(o.conf ?? []),
        `NodeName=${cluster}-c5-xlarge-[0001-${String(o.count).padStart(4, '0')}] State=CLOUD CPUs=1 RealMemory=100 Features=shape=${CLOUD_SLURM_SHAPE},arch=x86_64`,
        `PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
  )
  for (const k of AWS_ENV_CLEARED) delete process.env[k]
  Object.assign(process.env, sdkEnv, {SLURM_CONF: sb.confPath})
  try {
    await sb.startController()
  } catch (error) {
    await Promise.all([sb.stop(), proxy.close(), ec2.close()])
    throw error
  }

  const slurm = (cmd: string, args: string[]) =>
    new Promise<{status: number; stdout: string; stderr: string}>((resolve) =>
      execFile(cmd, args, {env: sb.env, encoding: 'utf8', timeout: 20_000, cwd: '/tmp'}, (error, stdout, stderr) =>
        resolve({status: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr}),
      ),
    )
  const scontrol = (args: string[]) => slurm('scontrol', args)
  const view = (line: string): NodeView => ({state: /State=(\S+)/.exec(line)?.[1] ?? '', reason: /Reason=(.*?)( \[\S+\])?$/.exec(line.trim())?.[1] ?? ''})
  const states = async () => {
    const out = (await scontrol(['show', 'node', '--oneliner'])).stdout
    return new Map(out.split('\n').filter((l) => l.startsWith('NodeName=')).map((l) => [/^NodeName=(\S+)/.exec(l)![1]!, view(l)]))
  }
  const node = async (name: string) => view((await scontrol(['show', 'node', name, '--oneliner'])).stdout)
  /** A PID is one of this cluster's node programs still running (not a PID reused by another process since). */
  const isOurs = (pid: number) => read(`/proc/${pid}/cmdline`).includes(standInFile)
  const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '')
  const alive = () => ec2.instances.filter((i) => i.state === 'pending' || i.state === 'running')
  const syncLog: string[] = []

  return {
    sb,
    ec2,
    proxy,
    dir,
    nodes,
    elasticLog: () => read(elasticLog),
    programsLog: () => read(programsLog),
    running: () => read(pids).split('\n').filter(Boolean).map(Number).filter(isOurs),
    setDriver,
    scontrol,
    slurm,
    states,
    node,
    alive,
    launchesPerNode() {
      const m = new Map<string, number>()
      for (const i of ec2.instances) m.set(i.name, (m.get(i.name) ?? 0) + 1)
      return m
    },
    async watchdog(settings = {}) {
      const s = standIn()
      const cfg = readNodeHostConfig(s)
      const ctx = realContext((m) => void syncLog.push(`${new Date().toISOString()} ${m}`), PROGRAM_BUDGET_MS.suspend)
      return runNodeSync({driver: await driverFor(cfg, s), controller: new Controller(localTransport(), {confPath: sb.confPath}), ctx, stateDir: join(dir, 'sync'), settings})
    },
    async report() {
      const tail = (s: string) => s.slice(-4000)
      return [
        [...(await states())].map(([n, v]) => `${n} ${JSON.stringify(v)}`).join('\n'),
        ec2.instances.map((i) => `${i.id} ${i.name} ${i.state} ${i.clientToken}`).join('\n'),
        `proxy ${JSON.stringify(proxy.counts)}`,
        tail(read(elasticLog)),
        tail(read(programsLog)),
        syncLog.join('\n'),
        tail(read(join(dir, 'slurmctld.log'))),
      ].join('\n---\n')
    },
    async stop() {
      // Programs still running (a test that failed half-way) are stopped by their PID, then slurmctld.
      for (const pid of read(pids).split('\n').filter(Boolean).map(Number)) if (isOurs(pid)) process.kill(pid, 'SIGKILL')
      await sb.stop()
      await proxy.close()
      await ec2.close()
      for (const [k, v] of saved) if (v === undefined) delete process.env[k]
      else process.env[k] = v
    },
  }
}
