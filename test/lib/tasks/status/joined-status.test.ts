// Status of a joined machine from a real slurmctld 22.05 (started by this test on loopback with its own
// munged): a static NodeName line as the renderer writes it, with no slurmd behind it, and a client
// whose munged has another key knocking from the machine's address — as a joined machine with the wrong
// key does. The fields must come through from real `scontrol show node`, `scontrol show config` and
// slurmctld's log, read through the Transport as status reads them.
import {execFileSync, spawnSync} from 'node:child_process'
import {chmodSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {Controller} from '../../../../src/lib/slurm/controller.js'
import {rowsOf} from '../../../../src/lib/tasks/status/cluster-status.js'
import {nodeTable} from '../../../../src/lib/tasks/status/node-table.js'
import {localTransport} from '../../../../src/lib/transport/local.js'
import {type SlurmSandbox, slurmSandbox} from '../../../helpers/slurm.js'
import {waitForAsync} from '../../../helpers/wait.js'

let sb: SlurmSandbox
let otherMungePid: number | undefined

beforeAll(async () => {
  sb = await slurmSandbox('js')
  writeFileSync(
    sb.confPath,
    sb.base +
      [
        // Power saving as citc renders it (PrivateData=cloud: powered-down CLOUD nodes are listed).
        'PrivateData=cloud',
        'ResumeProgram=/bin/true',
        'SuspendProgram=/bin/true',
        'SuspendTime=300',
        'SuspendExcNodes=ws1',
        'NodeName=ws1 NodeAddr=127.0.0.1 CPUs=2 SocketsPerBoard=1 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 Features="static,bigmem" Weight=1',
        'NodeName=js-local-small-0001 NodeAddr=127.0.0.1 CPUs=1 RealMemory=512 Features="shape=local.small,arch=x86_64" State=CLOUD Weight=66',
        'PartitionName=compute Nodes=ws1,js-local-small-0001 Default=YES State=UP',
        '',
      ].join('\n'),
  )
  await sb.startController()
}, 60_000)

afterAll(async () => {
  if (otherMungePid) process.kill(otherMungePid, 'SIGTERM')
  await sb?.stop()
})

/** A munged with another key, and a client that asks slurmctld through it (from 127.0.0.1, ws1's address). */
function knockWithAnotherKey(): void {
  const key = join(sb.dir, 'other.key')
  writeFileSync(key, Buffer.alloc(1024, 7))
  chmodSync(key, 0o400)
  const sock = join(sb.dir, 'other.sock')
  execFileSync('/usr/sbin/munged', [`--socket=${sock}`, `--key-file=${key}`, `--pid-file=${sb.dir}/other.pid`, `--log-file=${sb.dir}/other.log`, `--seed-file=${sb.dir}/other.seed`, '--force'])
  otherMungePid = Number(readFileSync(join(sb.dir, 'other.pid'), 'utf8').trim())
  const conf = join(sb.dir, 'etc', 'other.conf')
  writeFileSync(conf, readFileSync(sb.confPath, 'utf8').replace(/AuthInfo=socket=\S+/, `AuthInfo=socket=${sock}`))
  const r = spawnSync('scontrol', ['ping'], {env: {...process.env, SLURM_CONF: conf}, encoding: 'utf8', timeout: 20_000})
  expect(r.stdout).toMatch(/DOWN/) // refused: the keys differ
}

describe('status of a joined machine against a real slurmctld', () => {
  it('kind, address, configured hardware, never seen, the controller’s version; then the munge failure from its address as its reason', async () => {
    const controller = new Controller(localTransport(), {confPath: sb.confPath})
    const states = await controller.nodes()
    const before = await rowsOf(controller, states, {provider: 'local', cluster: 'js'})
    const ws1 = before.nodes.find((n) => n.name === 'ws1')!
    expect(ws1).toMatchObject({
      kind: 'joined',
      address: '127.0.0.1',
      cpus: 2,
      realMemory: 1000,
      hardware: {cpus: {configured: 2}, memory: {configured: 1000}, registration: 'none', low: []},
      lastSeen: {at: 'never', from: 'none'},
    })
    expect(ws1.state).toMatch(/^UNKNOWN/)
    expect(ws1).not.toHaveProperty('hint')
    expect(before.nodes.find((n) => n.name === 'js-local-small-0001')).toMatchObject({kind: 'local', shape: 'local.small'})
    expect(before.controllerInfo).toEqual({version: '22.05.8', logFile: join(sb.dir, 'slurmctld.log')})

    knockWithAnotherKey()
    // slurmctld writes the line as it refuses; bounded wait for it to reach the file.
    const logged = () => readFileSync(join(sb.dir, 'slurmctld.log'), 'utf8').includes('REQUEST_PING has authentication error')
    await waitForAsync('the munge failure in slurmctld’s log', async () => logged(), 10_000, 100)
    const after = await rowsOf(controller, await controller.nodes(), {provider: 'local', cluster: 'js'})
    const row = after.nodes.find((n) => n.name === 'ws1')!
    expect(row.reason).toMatch(/^slurmctld refused REQUEST_PING from 127\.0\.0\.1: munge "Invalid credential"/)
    expect(row.hint).toBe("the machine's munge key differs from the cluster's: run `citc node add 127.0.0.1 --name ws1 -c js` again (it copies the cluster's key)")
    expect(nodeTable(after.nodes)).toMatch(/\nWhat to do:\n {2}ws1: the machine's munge key differs/)
    // The elastic node (same address here) is not a joined machine: the log is not its reason.
    expect(after.nodes.find((n) => n.name === 'js-local-small-0001')).not.toHaveProperty('reason')
  }, 60_000)

  it('reads only the log’s tail: the bytes asked for, nothing before', async () => {
    const controller = new Controller(localTransport(), {confPath: sb.confPath})
    expect(readFileSync(join(sb.dir, 'slurmctld.log'), 'utf8')).toMatch(/has authentication error/)
    const r = await controller.versionAndLog({tailBytes: 1})
    expect(r).toEqual({version: '22.05.8', logFile: join(sb.dir, 'slurmctld.log'), log: ''})
  }, 30_000)
})
