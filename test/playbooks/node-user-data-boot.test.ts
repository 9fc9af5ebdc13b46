// The user-data a cloud compute node boots with (src/lib/providers/node-user-data.ts), run for real in
// a compute image root built as a cloud image build makes it (compute.yml with a cloud's variables;
// test/helpers/compute-image.ts), as cloud-init runs it: once, as root. Stood in for: systemd (a
// systemctl that starts the image's own units: systemctl-standin.py), NFS (the image's fstab names a
// bind mount of the export) and the metadata service (the script is handed over directly; how each
// cloud carries it is the driver tests' part). Everything else is real: the image's slurmd, munged and
// slurm.conf link, and a slurmctld of the test's own on loopback that the node must register with.
//
// The three clouds give the same user-data (cloud-driver.ts makes it for each; only its transport
// differs: base64 for EC2 and OCI, plain for GCE, which the fake clouds decode in the driver tests),
// so one boot proves it for all three.
import {spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {nodeUserData} from '../../src/lib/providers/node-user-data.js'
import {renderBase} from '../../src/lib/slurm/render.js'
import {type BootedNode, bootNode, buildComputeImage, type ComputeImage, EXPORT_IN_IMAGE} from '../helpers/compute-image.js'
import {hostSlurmVersion} from '../helpers/machines.js'
import {freePort} from '../helpers/net.js'
import {type SlurmSandbox, slurmSandbox} from '../helpers/slurm.js'
import {waitFor} from '../helpers/wait.js'

const CLUSTER = 'demo'
const NODE = 'demo-c5-xlarge-0001'
const SHARED = '/mnt/shared'

let work: string
let sb: SlurmSandbox
let image: ComputeImage
let node: BootedNode | undefined
let exportDir: string
let nodeConf: string

/** slurm.conf as `citc finish` writes it for a cloud cluster, for this test's controller and one node. */
function clusterConf(slurmctldPort: number, slurmdPort: number): string {
  // The cloud profile confines jobs with cgroups through systemd, which no chroot here has: the
  // sandbox's plugins instead (slurmd's start, its name and its config file are what is tested).
  const base = renderBase(
    {clusterId: CLUSTER, provider: 'aws', controllerHost: hostname(), controllerAddr: '127.0.0.1', slurmUser: 'root', accounting: false, slurmctldPort},
    {plugins: {proctrack: 'proctrack/linuxproc', task: 'task/none', jobacctGather: 'jobacct_gather/none'}},
  )
  return base + [`SlurmdPort=${slurmdPort}`, `NodeName=${NODE} NodeAddr=127.0.0.1 CPUs=1 RealMemory=100 State=UNKNOWN`, `PartitionName=compute Nodes=${NODE} Default=YES`, ''].join('\n')
}

/** The controller's own copy: its state, pid, log and munge socket in the sandbox, the rest the node's. */
function controllerConf(conf: string): string {
  const mine: Record<string, string> = {
    StateSaveLocation: `${sb.dir}/state`,
    SlurmctldPidFile: `${sb.dir}/slurmctld.pid`,
    SlurmctldLogFile: `${sb.dir}/slurmctld.log`,
  }
  const lines = conf.split('\n').map((l) => {
    const key = l.split('=')[0]
    return key in mine ? `${key}=${mine[key]}` : l
  })
  return lines.join('\n') + `AuthInfo=socket=${sb.dir}/munge.sock\n`
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('this test needs root (namespaces, overlay mounts, chroot); bash .ci/run runs it so')
  work = mkdtempSync(join(tmpdir(), 'citc-node-boot-'))
  sb = await slurmSandbox(CLUSTER)
  // The export a cloud's NFS server would serve: slurm.conf where `citc finish` writes it.
  exportDir = join(work, 'export')
  mkdirSync(join(exportDir, 'etc', 'slurm'), {recursive: true})
  nodeConf = clusterConf(Number(/SlurmctldPort=(\d+)/.exec(sb.base)![1]), await freePort())
  writeFileSync(join(exportDir, 'etc', 'slurm', 'slurm.conf'), nodeConf)
  writeFileSync(sb.confPath, controllerConf(nodeConf))
  // The image carries the cluster's munge key (Packer uploads it): the sandbox controller's.
  const key = join(work, 'munge.key')
  copyFileSync(join(sb.dir, 'munge.key'), key)
  chmodSync(key, 0o400)
  image = await buildComputeImage(
    work,
    {
      provider: 'aws',
      cluster_name: CLUSTER,
      mgmt_hostname: 'mgmt',
      mgmt_private_ip: '127.0.0.1',
      shared_dir: SHARED,
      shared_fs_host: '',
      shared_fs_path: EXPORT_IN_IMAGE,
      shared_fs_type: 'none',
      shared_fs_mount_options: 'bind',
      citc_monitoring: false,
      slurm_version: await hostSlurmVersion(),
      citc_image: {name: 'citc-demo-x86_64-v1', version: '1', cluster: CLUSTER, arch: 'x86_64'},
    },
    key,
  )
  await sb.startController()
  node = await bootNode(image, work, 'boot-1', {userData: nodeUserData({node: NODE, sharedDir: SHARED, mgmtPrivateIp: '127.0.0.1'}), exportDir})
}, 15 * 60_000)

afterAll(async () => {
  await node?.stop()
  await sb?.stop()
  if (work) rmSync(work, {recursive: true, force: true})
}, 60_000)

describe('a cloud compute node booting with citc user-data', () => {
  it('runs to the end and names the machine after the node', () => {
    expect(node!.result.status, node!.result.output).toBe(0)
    // The script's own log (it writes the console too).
    const log = node!.read('var/log/citc-boot.log') ?? ''
    expect(log).toContain(`citc-boot: node ${NODE}, controller at 127.0.0.1`)
    expect(log).toContain(`citc-boot: slurmd started as ${NODE}`)
    expect(log).not.toMatch(/WARNING/)
    expect(node!.result.hostname).toBe(NODE)
    expect(node!.read('etc/citc/node-name')).toBe(`${NODE}\n`)
  })

  it('points slurmd at the shared slurm.conf the image links to (not configless), mounted by the fstab line', () => {
    // The image's link, the only config slurmd is told about: no --conf-server anywhere.
    const link = spawnSync('readlink', [join(image.layer, 'etc/slurm/slurm.conf')], {encoding: 'utf8'}).stdout.trim()
    expect(link).toBe(`${SHARED}/etc/slurm/slurm.conf`)
    expect(node!.read('etc/default/slurmd')).toBe(`SLURMD_OPTIONS="-N ${NODE}"\n`)
    expect(node!.read('etc/fstab')).toContain(`${EXPORT_IN_IMAGE} ${SHARED} none bind,_netdev 0 0`)
  })

  it('starts munged with the image key, then slurmd as the node, by the units the image has', () => {
    const calls = node!.systemctl()
    const order = calls.filter((c) => c.startsWith('systemctl '))
    expect(order).toEqual(['systemctl restart munge', 'systemctl restart nslcd', 'systemctl enable slurmd', 'systemctl restart slurmd', 'systemctl is-active --quiet slurmd'])
    expect(calls).toContain('munge.service: ExecStart exited 0')
    // Debian's nslcd has an init script and no unit: systemd runs the script.
    expect(calls).toContain('/etc/init.d/nslcd start (init script, no unit): exited 0')
    // Debian's unit: ExecStart=/usr/sbin/slurmd -D -s $SLURMD_OPTIONS, with the file the user-data wrote.
    expect(calls).toContain(`start slurmd.service (Type=simple, User=root): /usr/sbin/slurmd -D -s -N ${NODE}`)
    expect(calls.find((c) => c.startsWith('slurmd.service: '))).toMatch(/^slurmd\.service: running, pid \d+$/)
    expect(calls.join('\n')).not.toMatch(/^no unit|condition failed|missing EnvironmentFile/m)
  })

  it('registers with slurmctld as that node, which then runs a job there', async () => {
    await waitFor(
      `slurmctld to see ${NODE} up`,
      () => /State=IDLE/.test(sb.scontrol(['show', 'node', NODE]).stdout),
      120_000,
      500,
    )
    const show = sb.scontrol(['show', 'node', NODE]).stdout
    expect(show).toMatch(/SlurmdStartTime=\d{4}-/)
    // The job's `hostname` runs inside the node (its UTS namespace): the name the user-data gave it.
    const job = spawnSync('srun', ['-w', NODE, '-N1', '-t', '1', 'hostname'], {env: sb.env, encoding: 'utf8', timeout: 60_000})
    expect(job.status, job.stderr).toBe(0)
    expect(job.stdout.trim()).toBe(NODE)
    // slurmd's own log, where the shared slurm.conf put it on the node.
    expect(node!.read(`var/log/slurm/slurmd-${NODE}.log`)).toMatch(/slurmd started/)
  }, 240_000)

  it('fails, saying why, when slurmd cannot be the node it names (no NodeName line for it)', async () => {
    const stray = 'demo-c5-xlarge-0099'
    const other = await bootNode(image, work, 'boot-2', {userData: nodeUserData({node: stray, sharedDir: SHARED, mgmtPrivateIp: '127.0.0.1'}), exportDir})
    try {
      expect(other.result.status).toBe(1)
      const log = other.read('var/log/citc-boot.log') ?? ''
      expect(log).toContain(`citc-boot: ERROR: slurmd is not running as ${stray}: see systemctl status slurmd and /var/log/slurm/slurmd-${stray}.log`)
      expect(log).not.toContain('slurmd started')
      expect(other.systemctl()).toContain(`start slurmd.service (Type=simple, User=root): /usr/sbin/slurmd -D -s -N ${stray}`)
      expect(other.systemctl().find((c) => c.startsWith('slurmd.service: '))).toMatch(/^slurmd\.service: exited \d+ at start$/)
    } finally {
      await other.stop()
    }
  }, 150_000)
})
