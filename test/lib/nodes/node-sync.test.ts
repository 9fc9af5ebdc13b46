// `citc node sync`'s actions against a real slurmctld (this machine's 22.05): what the pure planner
// (sync-plan.test.ts) decides is done with scontrol, and Slurm ends in the states the watchdog relies
// on. The instances come from an in-memory driver (the cloud drivers have their own tests against the
// fake clouds; the cloud-management e2e runs the whole chain). Clock injected for the cooldown.
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runNodeSync} from '../../../src/lib/nodes/node-sync.js'
import type {CloudInstance, DriverContext, NodeDriver} from '../../../src/lib/providers/types.js'
import {Controller} from '../../../src/lib/slurm/controller.js'
import {localTransport} from '../../../src/lib/transport/local.js'
import {slurmSandbox, type SlurmSandbox} from '../../helpers/slurm.js'
import {waitFor} from '../../helpers/wait.js'

let sb: SlurmSandbox
let controller: Controller
let offset = 0
const lines: string[] = []
const ctx: DriverContext = {log: (m) => void lines.push(m), now: () => Date.now() + offset, sleep: async () => {}, deadline: Number.MAX_SAFE_INTEGER}
const instances: CloudInstance[] = []
const terminated: string[] = []
const driver: NodeDriver = {
  resume: async () => [],
  suspend: async () => [],
  list: async () => instances.filter((i) => i.state !== 'terminated'),
  async terminate(list) {
    for (const i of list) {
      terminated.push(i.id)
      const mine = instances.find((x) => x.id === i.id)
      if (mine) mine.state = 'terminated'
    }
    return list.map((i) => ({name: i.name, ok: true, instanceId: i.id}))
  },
}
const sync = (settings = {}) => runNodeSync({driver, controller, ctx, stateDir: join(sb.dir, 'sync'), settings: {cooldownMs: 60_000, ...settings}})
const node = (name: string) => {
  const o = sb.scontrol(['show', 'node', name, '--oneliner']).stdout
  return {state: /State=(\S+)/.exec(o)?.[1] ?? '', reason: /Reason=(.*?)( \[\S+\])?$/.exec(o.trim())?.[1] ?? ''}
}

/** As slurmctld does before it runs the resume program: the request taken, the node POWERING_UP. */
async function poweringUp(name: string) {
  expect(sb.scontrol(['update', `NodeName=${name}`, 'State=POWER_UP']).status).toBe(0)
  await waitFor(`${name} powering up`, () => node(name).state.includes('POWERING_UP'), 20_000, 100)
}

beforeAll(async () => {
  sb = await slurmSandbox('syn')
  writeFileSync(
    sb.confPath,
    sb.base +
      [
        'SuspendProgram=/bin/true', 'ResumeProgram=/bin/true', 'SuspendTime=600', 'SuspendTimeout=3', 'ResumeTimeout=30',
        'ReturnToService=2', 'SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs', 'PrivateData=cloud', 'TreeWidth=65533',
        'NodeName=syn-a-[1-3] State=CLOUD CPUs=1 RealMemory=100 Features=shape=a.small,ad=1,arch=x86_64',
        'NodeName=syn-b-1 State=CLOUD CPUs=1 RealMemory=100 Features=shape=b.small,ad=1,arch=x86_64',
        // A joined machine (citc node add): a static line, no instance anywhere; its slurmd never answers here.
        'SuspendExcNodes=ws1',
        'NodeName=ws1 NodeAddr=127.0.0.1 Port=9 CPUs=1 RealMemory=100 Features=static Weight=1',
        'PartitionName=p Nodes=syn-a-[1-3],syn-b-1,ws1 Default=YES',
        '',
      ].join('\n'),
  )
  await sb.startController()
  controller = new Controller(localTransport(), {confPath: sb.confPath})
  process.env.SLURM_CONF = sb.confPath
}, 60_000)

afterAll(async () => {
  delete process.env.SLURM_CONF
  await sb?.stop()
})

describe('node sync against slurmctld', () => {
  it('never takes a joined machine for a vanished instance: it has none, and is not the watchdog’s', async () => {
    const before = node('ws1')
    for (let i = 0; i < 3; i++) {
      const r = await sync()
      expect(JSON.stringify(r)).not.toContain('ws1')
    }
    expect(node('ws1')).toEqual(before)
    expect(node('ws1').state).not.toMatch(/POWER/)
  }, 60_000)

  it('holds the shape after a capacity failure, keeps the failed node held once it is powered down, and returns them all after the cooldown', async () => {
    // What `citc node resume` does with a capacity failure (node-programs.ts reportFailedStarts).
    await poweringUp('syn-a-1')
    expect(sb.scontrol(['update', 'NodeName=syn-a-1', 'State=DOWN', 'Reason=citc: capacity: InsufficientInstanceCapacity for a.small in zone-1']).status).toBe(0)
    expect(sb.scontrol(['update', 'NodeName=syn-a-1', 'State=POWER_DOWN_FORCE']).status).toBe(0)

    const first = await sync()
    expect(first).toMatchObject({actions: [{kind: 'hold', target: 'syn-a-2,syn-a-3', ok: true}]})
    for (const n of ['syn-a-2', 'syn-a-3']) expect(node(n)).toMatchObject({state: 'IDLE+CLOUD+DRAIN+POWERED_DOWN', reason: expect.stringMatching(/^citc: capacity cooldown until \d\d:\d\d UTC$/)})
    expect(node('syn-b-1').state).toBe('IDLE+CLOUD+POWERED_DOWN') // another shape: jobs go there

    // Slurm 22.05 keeps the reason and makes the failed node idle~ again once powered down: held too.
    await waitFor('syn-a-1 powered down', () => node('syn-a-1').state === 'IDLE+CLOUD+POWERED_DOWN', 45_000, 250)
    expect(node('syn-a-1').reason).toBe('citc: capacity: InsufficientInstanceCapacity for a.small in zone-1')
    const second = await sync()
    expect(second).toMatchObject({actions: [{kind: 'hold', target: 'syn-a-1', ok: true}]})
    expect(node('syn-a-1').state).toBe('IDLE+CLOUD+DRAIN+POWERED_DOWN')

    offset += 61_000
    const third = await sync()
    expect(third).toMatchObject({actions: [{kind: 'release', ok: true}]})
    // Released: undrained and powered down again, which clears NOT_RESPONDING and the reason.
    await waitFor('the held nodes back to idle~', () => ['syn-a-1', 'syn-a-2', 'syn-a-3'].every((n) => node(n).state === 'IDLE+CLOUD+POWERED_DOWN'), 45_000, 250)
    for (const n of ['syn-a-1', 'syn-a-2', 'syn-a-3']) expect(node(n).reason).toBe('')
    expect(lines.filter((l) => l.startsWith('node sync: '))).toEqual([
      expect.stringMatching(/^node sync: hold syn-a-2,syn-a-3 \(a\.small AD 1\) DRAIN "citc: capacity cooldown until/),
      expect.stringMatching(/^node sync: hold syn-a-1 \(a\.small AD 1\)/),
      'node sync: release syn-a-1,syn-a-2,syn-a-3: capacity cooldown for a.small AD 1 over',
    ])
  }, 150_000)

  it('returns a failed node that powered down only after its cooldown ended, and starts no new cooldown for it', async () => {
    await poweringUp('syn-a-2')
    expect(sb.scontrol(['update', 'NodeName=syn-a-2', 'State=DOWN', 'Reason=citc: capacity: InsufficientInstanceCapacity for a.small in zone-1']).status).toBe(0)
    expect(sb.scontrol(['update', 'NodeName=syn-a-2', 'State=POWER_DOWN_FORCE']).status).toBe(0)
    await sync({cooldownMs: 1000}) // the cooldown starts; syn-a-2 is still powering down: nothing to hold
    await waitFor('syn-a-2 powered down', () => node('syn-a-2').state === 'IDLE+CLOUD+POWERED_DOWN', 45_000, 250)
    offset += 2000
    const r = await sync({cooldownMs: 1000})
    expect(r).toMatchObject({actions: [{kind: 'release', target: expect.stringContaining('syn-a-2'), ok: true}]})
    await waitFor('syn-a-2 back to idle~ without the reason', () => node('syn-a-2').state === 'IDLE+CLOUD+POWERED_DOWN' && node('syn-a-2').reason === '', 45_000, 250)
    expect(await sync({cooldownMs: 1000})).toMatchObject({actions: []})
  }, 120_000)

  it('terminates an orphan instance once it is older than the grace, never a younger one', async () => {
    const now = ctx.now()
    instances.push({id: 'i-old', name: 'syn-b-1', state: 'running', launchedAt: now - 300_000}, {id: 'i-new', name: 'syn-a-2', state: 'running', launchedAt: now - 10_000}, {id: 'i-stranger', name: 'not-a-node', state: 'running', launchedAt: now - 300_000})
    const r = await sync({orphanGraceMs: 120_000})
    expect(terminated.sort()).toEqual(['i-old', 'i-stranger'])
    expect(r).toMatchObject({instances: 3})
  })

  it('puts a node whose instance vanished down, at the second run in a row', async () => {
    // syn-b-1 up as far as Slurm knows: powering up with its instance seen, then gone.
    await poweringUp('syn-b-1')
    instances.push({id: 'i-b1', name: 'syn-b-1', state: 'running', launchedAt: ctx.now()})
    await sync()
    instances.find((i) => i.id === 'i-b1')!.state = 'terminated'
    const once = await sync()
    expect(once).toMatchObject({actions: []})
    const twice = await sync()
    expect(twice).toMatchObject({actions: [{kind: 'down-and-power-down', target: 'syn-b-1', ok: true}]})
    expect(node('syn-b-1').reason).toBe('citc: instance gone')
  }, 30_000)

  it('keeps a node a quota refusal stopped DOWN once Slurm made it idle~ again, until an admin resumes it', async () => {
    const quota = 'citc: quota: VcpuLimitExceeded for a.small in zone-1'
    await poweringUp('syn-a-3')
    expect(sb.scontrol(['update', 'NodeName=syn-a-3', 'State=DOWN', `Reason=${quota}`]).status).toBe(0)
    expect(sb.scontrol(['update', 'NodeName=syn-a-3', 'State=POWER_DOWN_FORCE']).status).toBe(0)
    await waitFor('syn-a-3 idle~ again (idle_on_node_suspend)', () => node('syn-a-3').state === 'IDLE+CLOUD+POWERED_DOWN', 45_000, 250)
    const r = await sync()
    expect(r).toMatchObject({actions: [{kind: 'keep-down', target: 'syn-a-3', ok: true}], adminDown: [{name: 'syn-a-3', reason: quota}]})
    expect(node('syn-a-3')).toEqual({state: 'DOWN+CLOUD+POWERED_DOWN', reason: quota})
    expect(await sync()).toMatchObject({actions: []}) // DOWN already: nothing more
  }, 90_000)

  it('does nothing while another run holds the lock', async () => {
    writeFileSync(join(sb.dir, 'sync', 'lock'), `${process.pid}\n`)
    expect(await sync()).toEqual({skipped: 'another run is still working'})
  })
})
