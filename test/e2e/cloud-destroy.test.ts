// citc destroy (and status) for a cloud cluster, as a user runs them. Real: the management node's
// SSH (an OpenSSH sshd on loopback with the host key citc generated) and its Slurm controller (a
// private slurmctld with CLOUD nodes, one of them powered up). TEST DOUBLES: the terraform binary
// (test/doubles/bin/terraform) and the clouds' APIs behind the sweep (test/doubles/bin/{aws,gcloud,oci}: a
// JSON file is the "cloud"). The node programs are stand-in scripts that record their calls: this test
// is about the order of destroy, not about stopping machines. Every call of the node program,
// Terraform and the cloud CLI goes to one log, so the order is checked, not assumed.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ClusterRegistry} from '../../src/lib/cluster/registry.js'
import {generateFromLimits} from '../../src/lib/tasks/finish/generate-config.js'
import {citc, type CliResult} from '../helpers/cli.js'
import {doublesEnv, standInFlags, writeAwsOutputs} from '../helpers/cloud.js'
import {freePort, slurmSandbox, type SlurmSandbox} from '../helpers/slurm.js'
import {startSshd, type SshdSandbox} from '../helpers/sshd.js'
import {sleep} from '../../src/lib/proc.js'

const work = mkdtempSync(join(tmpdir(), 'citc-cloud-destroy-'))
const dataDir = join(work, 'data')
const programs = join(work, 'programs')
const order = join(work, 'order.log') // node programs, terraform and the cloud CLI, in the order called
const cloud = join(work, 'cloud.json') // the "cloud" of the sweep's test double
const registry = new ClusterRegistry(dataDir)
const servers: Record<string, SshdSandbox> = {}
let sb: SlurmSandbox

beforeAll(async () => {
  mkdirSync(join(work, 'home'))
  mkdirSync(programs)
  for (const p of ['resume', 'suspend', 'resume-fail']) writeFileSync(join(programs, p), `#!/bin/sh\necho "node-program ${p} $*" >> ${order}\n`, {mode: 0o755})
  sb = await slurmSandbox('dst')
  const {generated} = generateFromLimits({provider: 'aws', clusterId: 'dst', limitsText: 'c5.xlarge: 2\n', limitsFile: 'limits.yaml', elastic: {programsDir: programs}, current: sb.base})
  writeFileSync(sb.confPath, generated.slurmConf)
  await sb.startController()
}, 60_000)

afterAll(async () => {
  for (const s of Object.values(servers)) await s.stop()
  await sb?.stop()
  rmSync(work, {recursive: true, force: true})
})

const outputsFor = (name: string) => writeAwsOutputs(join(work, `${name}-outputs.json`), name)
const env = (extra: NodeJS.ProcessEnv = {}) => doublesEnv({dataDir, home: join(work, 'home'), tfLog: order, cloudLog: order, cloudState: cloud}, extra)
const run = (args: string[], extra: NodeJS.ProcessEnv = {}): Promise<CliResult> => citc(args, {env: env(extra), timeoutMs: 120_000})
const orderLines = () => (existsSync(order) ? readFileSync(order, 'utf8').trim().split('\n') : [])
const cloudIds = () => (JSON.parse(readFileSync(cloud, 'utf8')) as {resources: Array<{id: string}>}).resources.map((r) => r.id).sort()

/**
 * A cloud cluster whose Terraform resources exist (the double's state) and whose management node is
 * an sshd with citc's host key: create applies, then stops at SSH (nobody listens yet); the sshd is
 * started with the generated keys; cluster.yaml is pointed at it and at the sandbox's controller.
 */
async function cloudCluster(name: string): Promise<SshdSandbox> {
  const closed = await freePort()
  const r = await run(['create', '--provider', 'aws', '--name', name, '--region', 'us-east-1', '--yes', '--ssh-timeout', '1', ...standInFlags({port: closed})], {TF_DOUBLE_OUTPUTS: outputsFor(name)})
  expect(r.code, r.stderr).toBe(4)
  expect(r.stderr).toMatch(/never came up/)
  const keys = registry.paths(name).keysDir
  const s = await startSshd({hostKeyFile: join(keys, 'mgmt_host_ed25519'), authorizeKey: readFileSync(join(keys, 'admin_ed25519.pub'), 'utf8')})
  servers[name] = s
  registry.update(name, (rec) => {
    rec.mgmt.port = s.port
    rec.slurm.confPath = sb.confPath
    rec.slurm.programsDir = programs
  })
  return s
}

const nodeState = (node: string) => /State=(\S+)/.exec(sb.scontrol(['show', 'node', node]).stdout)?.[1] ?? ''

describe('citc status for a cloud cluster', () => {
  it('shows the Terraform outputs, the controller and the nodes; an unreachable node is reported, not an error', async () => {
    const s = await cloudCluster('stat')
    const r = await run(['status', '-c', 'stat', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const doc = r.json()
    expect(doc).toMatchObject({cluster: 'stat', provider: 'aws', phase: 'creating', cloud: {region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium'}})
    expect(doc.terraform.outputs).toMatchObject({vpc_id: 'vpc-0abc', mgmt_public_ip: '127.0.0.1'})
    expect(doc.controller.up).toBe(true)
    expect(doc.nodes.map((n: {name: string}) => n.name)).toEqual(['dst-c5-xlarge-0001', 'dst-c5-xlarge-0002'])
    const human = await run(['status', '-c', 'stat'])
    expect(human.stdout).toMatch(/Cloud: us-east-1 \/ us-east-1a, management shape t3a\.medium — create has not finished/)

    await s.stop()
    delete servers.stat
    const down = await run(['status', '-c', 'stat', '--json'])
    expect(down.code, down.stderr).toBe(0)
    expect(down.json().controller).toMatchObject({up: false, error: expect.stringMatching(/cannot reach the management node: .*connection refused/)})
    expect(down.json().terraform.outputs.vpc_id).toBe('vpc-0abc')
  }, 60_000)
})

describe('citc destroy for a cloud cluster', () => {
  it('needs the name typed, or --yes', async () => {
    await cloudCluster('ask')
    const r = await run(['destroy', 'ask'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/pass --yes/)
    expect(existsSync(registry.paths('ask').dir)).toBe(true)
  }, 60_000)

  it('powers the nodes down through the management node, then terraform destroy, then sweeps by tag, then forgets the cluster', async () => {
    await cloudCluster('dst')
    // One node powered up (the stand-in resume program records it; Slurm shows it powering up).
    expect(sb.scontrol(['update', 'NodeName=dst-c5-xlarge-0001', 'State=POWER_UP']).status).toBe(0)
    // (Before, its state already says POWERED_DOWN: wait for POWERING_UP itself, or destroy may still see it down.)
    for (let i = 0; i < 100 && !/POWERING_UP/.test(nodeState('dst-c5-xlarge-0001')); i++) await sleep(100)
    expect(nodeState('dst-c5-xlarge-0001')).toMatch(/POWERING_UP/)
    writeFileSync(
      cloud,
      JSON.stringify({
        resources: [
          {provider: 'aws', kind: 'instance', id: 'i-0leftover', name: 'dst-c5-xlarge-0002', cluster: 'dst'},
          {provider: 'aws', kind: 'image', id: 'ami-0old', name: 'citc-slurm-compute-dst-v1', cluster: 'dst'},
          {provider: 'aws', kind: 'snapshot', id: 'snap-0old', cluster: 'dst'},
          {provider: 'aws', kind: 'instance', id: 'i-0other', name: 'other-node', cluster: 'other'},
          // The management node: in the Terraform state (the double's ids are "<address>-id"), so
          // the early sweep leaves it to terraform destroy.
          {provider: 'aws', kind: 'instance', id: 'aws_instance.mgmt-id', name: 'dst-mgmt', cluster: 'dst'},
        ],
      }),
    )
    const mark = orderLines().length
    const r = await run(['destroy', 'dst', '--yes', '--json'])
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    const doc = r.json()
    expect(doc.poweredDown).toEqual(['dst-c5-xlarge-0001'])
    expect(doc.terraform.destroyed).toBeGreaterThan(10)
    expect(doc.sweep.deleted.map((x: {id: string}) => x.id)).toEqual(['i-0leftover', 'aws_instance.mgmt-id', 'ami-0old', 'snap-0old'])
    expect(doc.warnings).toEqual([])

    const lines = orderLines().slice(mark)
    const at = (re: RegExp, from = 0) => {
      const i = lines.slice(from).findIndex((l) => re.test(l))
      return i < 0 ? -1 : i + from
    }
    const suspend = at(/^node-program suspend dst-c5-xlarge-0001$/)
    const listEarly = at(/^aws ec2 describe-instances .*Name=tag:cluster,Values=dst /)
    const terminate = at(/^aws ec2 terminate-instances --instance-ids i-0leftover/)
    const destroy = at(/^destroy -input=false .*-auto-approve/)
    const listLate = at(/^aws ec2 describe-instances .*Name=tag:cluster,Values=dst /, destroy)
    const mgmtGone = at(/^aws ec2 terminate-instances --instance-ids aws_instance\.mgmt-id/)
    const deregister = at(/^aws ec2 deregister-image --image-id ami-0old/)
    const snapshot = at(/^aws ec2 delete-snapshot --snapshot-id snap-0old/)
    const order = [suspend, listEarly, terminate, destroy, listLate, mgmtGone, deregister, snapshot]
    expect(order.every((i) => i >= 0), lines.join('\n')).toBe(true)
    // Nodes down, then their machines terminated BEFORE Terraform deletes the network they sit in
    // (the cloud refuses that while they run); what Terraform manages is left to it; images last.
    expect([...order].sort((a, b) => a - b), lines.join('\n')).toEqual(order)
    // Only what carries this cluster's tag was touched; the state is gone last.
    expect(cloudIds()).toEqual(['i-0other'])
    expect(existsSync(registry.paths('dst').dir)).toBe(false)
  }, 90_000)

  it('a failed terraform destroy keeps the state and says what remains; with the management node dead, the next run warns and finishes', async () => {
    const s = await cloudCluster('dst2')
    const mark = orderLines().length
    const failed = await run(['destroy', 'dst2', '--yes'], {TF_DOUBLE_FAIL: 'destroy'})
    expect(failed.code).toBe(4)
    expect(failed.stderr).toMatch(/destroy did not finish: terraform destroy failed/)
    expect(failed.stderr).toMatch(/What remains: Terraform still manages \d+ resource\(s\): .*aws_instance\.mgmt/)
    expect(failed.stderr).toMatch(/citc's state for dst2 is kept/)
    expect(failed.stderr).toMatch(/run `citc destroy dst2` again/)
    expect(existsSync(registry.paths('dst2').clusterYaml)).toBe(true)
    // The early sweep looked for compute instances; the late one (images…) never ran after the failure.
    expect(orderLines().slice(mark).some((l) => l.startsWith('aws ec2 describe-instances'))).toBe(true)
    expect(orderLines().slice(mark).some((l) => l.startsWith('aws ec2 describe-images'))).toBe(false)

    await s.stop()
    delete servers.dst2
    const r = await run(['destroy', 'dst2', '--yes'])
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(r.stderr).toMatch(/warning: the management node 127\.0\.0\.1 cannot be reached \(.*connection refused\): its compute nodes were not powered down; the sweep looks for them by tag/)
    expect(existsSync(registry.paths('dst2').dir)).toBe(false)
  }, 90_000)

  it('a node program that fails is a warning: the node machine is terminated by tag before terraform destroy', async () => {
    await cloudCluster('dst5')
    const failing = join(work, 'programs-failing')
    mkdirSync(failing)
    writeFileSync(join(failing, 'suspend'), `#!/bin/sh\necho "node-program suspend $*" >> ${order}\necho 'terminate: UnauthorizedOperation' >&2\nexit 3\n`, {mode: 0o755})
    registry.update('dst5', (rec) => {
      rec.slurm.programsDir = failing
    })
    expect(sb.scontrol(['update', 'NodeName=dst-c5-xlarge-0002', 'State=POWER_UP']).status).toBe(0)
    for (let i = 0; i < 100 && !/POWERING_UP/.test(nodeState('dst-c5-xlarge-0002')); i++) await sleep(100)
    writeFileSync(cloud, JSON.stringify({resources: [{provider: 'aws', kind: 'instance', id: 'i-0node', name: 'dst5-c5-xlarge-0001', cluster: 'dst5'}]}))
    const mark = orderLines().length
    const r = await run(['destroy', 'dst5', '--yes', '--json'])
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    const doc = r.json()
    expect(doc.poweredDown).toEqual([])
    expect(doc.warnings).toEqual([expect.stringMatching(/^powering down \S+ failed \(exit 3: terminate: UnauthorizedOperation\): its compute nodes were not powered down; the sweep looks for them by tag$/)])
    expect(doc.sweep.deleted).toEqual([{kind: 'instance', id: 'i-0node', name: 'dst5-c5-xlarge-0001'}])
    const lines = orderLines().slice(mark)
    const terminate = lines.findIndex((l) => l.startsWith('aws ec2 terminate-instances --instance-ids i-0node'))
    const destroy = lines.findIndex((l) => l.startsWith('destroy '))
    expect(terminate, lines.join('\n')).toBeGreaterThanOrEqual(0)
    expect(terminate).toBeLessThan(destroy)
    expect(existsSync(registry.paths('dst5').dir)).toBe(false)
  }, 90_000)

  it('a leftover the sweep cannot delete keeps the state, named; the next run finishes', async () => {
    await cloudCluster('dst3')
    writeFileSync(cloud, JSON.stringify({resources: [{provider: 'aws', kind: 'instance', id: 'i-0stuck', name: 'dst3-node', cluster: 'dst3'}]}))
    const mark = orderLines().length
    const failed = await run(['destroy', 'dst3', '--yes'], {CLOUD_DOUBLE_FAIL: 'delete:i-0stuck'})
    expect(failed.code).toBe(4)
    expect(failed.stderr).toMatch(/the sweep could not delete: instance i-0stuck \(dst3-node\) \(aws ec2 terminate-instances failed .*UnauthorizedOperation/)
    // It stopped before terraform destroy: the network is still there, and so is the machine.
    expect(failed.stderr).toMatch(/What remains: Terraform still manages \d+ resource\(s\): .*aws_vpc\.cluster; instance i-0stuck \(dst3-node\)\./)
    expect(orderLines().slice(mark).some((l) => l.startsWith('destroy '))).toBe(false)
    expect(existsSync(registry.paths('dst3').clusterYaml)).toBe(true)
    const r = await run(['destroy', 'dst3', '--yes', '--json'])
    expect(r.code, r.stderr).toBe(0)
    expect(r.json().terraform.destroyed).toBeGreaterThan(10)
    expect(r.json().sweep.deleted).toEqual([{kind: 'instance', id: 'i-0stuck', name: 'dst3-node'}])
    expect(existsSync(registry.paths('dst3').dir)).toBe(false)
  }, 90_000)

  it('without the cloud CLI the sweep cannot run: the state is kept, and --skip-sweep is offered', async () => {
    await cloudCluster('dst4')
    const noCli = {PATH: '/usr/bin:/bin'} // no test doubles, and no aws CLI, on this PATH
    const failed = await run(['destroy', 'dst4', '--yes'], noCli)
    expect(failed.code).toBe(4)
    expect(failed.stderr).toMatch(/the sweep for leftovers tagged cluster=dst4 could not run: aws is not installed/)
    expect(failed.stderr).toMatch(/install the AWS CLI/)
    expect(failed.stderr).toMatch(/--skip-sweep/)
    expect(existsSync(registry.paths('dst4').clusterYaml)).toBe(true)
    const r = await run(['destroy', 'dst4', '--yes', '--skip-sweep', '--json'], noCli)
    expect(r.code, r.stderr).toBe(0)
    expect(r.json().sweep).toEqual({skipped: true})
    expect(existsSync(registry.paths('dst4').dir)).toBe(false)
  }, 90_000)
})

describe('a cluster whose terraform apply never started (create stopped at init: no network)', () => {
  it('is a "creating" cluster, destroyed without Terraform, a cloud CLI or credentials, and says so; --skip-sweep too', async () => {
    const failed = await run(['create', '--provider', 'aws', '--name', 'offline', '--region', 'us-east-1', '--yes'], {TF_DOUBLE_FAIL: 'init'})
    expect(failed.code).toBe(4)
    expect(failed.stderr).toMatch(/terraform init failed: Terraform could not reach the network/)
    const list = await run(['cluster', 'list', '--json'])
    expect(list.json().clusters).toContainEqual(expect.objectContaining({name: 'offline', phase: 'creating'}))
    expect((await run(['cluster', 'list'])).stdout).toMatch(/^offline {2}aws {2}creating \(not finished: citc create --resume\)/m)
    // No Terraform at all (and no cloud CLI on the PATH), and init would still fail.
    const noTools = {TF_DOUBLE_FAIL: 'init', CITC_TERRAFORM: join(work, 'no-such-terraform'), PATH: '/usr/bin:/bin'}
    for (const args of [['destroy', 'offline', '--yes', '--json'], ['destroy', 'offline2', '--yes', '--skip-sweep']]) {
      if (args[1] === 'offline2') expect((await run(['create', '--provider', 'aws', '--name', 'offline2', '--region', 'us-east-1', '--yes'], {TF_DOUBLE_FAIL: 'init'})).code).toBe(4)
      const mark = orderLines().length
      const r = await run(args, noTools)
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
      if (args.includes('--json')) expect(r.json()).toMatchObject({destroyed: 'offline', applyStarted: false, terraform: {destroyed: 0, ran: false}, sweep: {skipped: true}})
      else expect(r.stdout).toMatch(/Forgot offline2: terraform apply never started for it, so nothing was made in the cloud; no Terraform, cloud CLI or credentials were needed/)
      expect(orderLines().slice(mark)).toEqual([]) // neither terraform nor a cloud CLI ran
      expect(existsSync(registry.paths(args[1]).dir)).toBe(false)
    }
  }, 120_000)

  it('cluster remove forgets it as well; once apply has started it refuses, and the way out it names works', async () => {
    expect((await run(['create', '--provider', 'aws', '--name', 'offline3', '--region', 'us-east-1', '--yes'], {TF_DOUBLE_FAIL: 'init'})).code).toBe(4)
    const removed = await run(['cluster', 'remove', 'offline3', '--yes'], {PATH: '/usr/bin:/bin'})
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).toMatch(/Forgot offline3: terraform apply never started for it/)
    expect(existsSync(registry.paths('offline3').dir)).toBe(false)

    // Apply started (and failed at the management instance, after the network was made): machines may exist.
    const applied = await run(['create', '--provider', 'aws', '--name', 'halfway', '--region', 'us-east-1', '--yes'], {TF_DOUBLE_FAIL: 'apply'})
    expect(applied.code).toBe(4)
    const refused = await run(['cluster', 'remove', 'halfway', '--yes'])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/forgetting it would leave its machines running/)
    expect(refused.stderr).toMatch(/Try: citc destroy halfway/)
    const destroyed = await run(['destroy', 'halfway', '--yes', '--skip-sweep', '--json'])
    expect(destroyed.code, destroyed.stderr).toBe(0)
    expect(destroyed.json()).toMatchObject({destroyed: 'halfway', applyStarted: true, terraform: {ran: true}})
    expect(destroyed.json().terraform.destroyed).toBeGreaterThan(0)
    expect(existsSync(registry.paths('halfway').dir)).toBe(false)
  }, 120_000)
})
