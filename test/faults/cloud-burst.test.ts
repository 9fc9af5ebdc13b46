// Fault 4 of issue #23: slurmctld SIGKILLed (by PID) during a burst of node starts on a fake cloud.
// A real slurmctld powers up 12 cloud nodes for 12 queued jobs; its ResumeProgram is the built citc
// (`citc node resume`) driving the real AWS SDK against the fake EC2 (test/helpers/cloud-slurm.ts),
// slowed to one launch a second by the driver's own token bucket (a stand-in limit) so the burst lasts.
// slurmctld is killed a third of the way through and started again; then the watchdog's next pass.
// Counted per node name in the fake cloud: machines launched (a second machine for one node is a
// double launch), machines left running that Slurm does not have powering up or up (orphans), jobs
// gone. The launches never boot (no slurmd here), so every started node stays POWERING_UP: it owns its
// one machine.
import {afterEach, describe, expect, it} from 'vitest'

import {pidAlive} from '../../src/lib/proc.js'
import {REASON_START_LOST} from '../../src/lib/nodes/sync-plan.js'
import {injectFault} from '../helpers/fault-record.js'
import {cloudSlurm, type CloudSlurm} from '../helpers/cloud-slurm.js'
import {slurmSandbox} from '../helpers/slurm.js'
import {waitFor} from '../helpers/wait.js'

const COUNT = 12
const START_LOST_MS = 3000
let cs: CloudSlurm | undefined

afterEach(async () => {
  await cs?.stop()
  cs = undefined
})

const queued = async () => (await cs!.slurm('squeue', ['-h', '-o', '%i'])).stdout.split('\n').filter(Boolean)

/**
 * `withPrograms`: what happens to the resume programs slurmctld started. `survive`: nothing (slurmctld
 * started by hand, as here, or by an init without cgroups). `killed`: SIGTERM at the same moment, as
 * systemd does to what is left in slurmctld.service's cgroup when its main process dies (Debian's unit
 * keeps the default KillMode=control-group).
 */
async function burst(withPrograms: 'survive' | 'killed') {
  cs = await cloudSlurm(await slurmSandbox('brst'), {count: COUNT, driver: {rate: {perSecond: 1, burst: 1}, concurrency: 4}})
  const c = cs
  let figures: Record<string, unknown> & {atKill: number; startLost: number} = {atKill: 0, startLost: 0}
  try {
    const tally = await injectFault('controller-burst', `slurmctld SIGKILLed after 4 of ${COUNT} launches of a burst, its resume program ${withPrograms === 'survive' ? 'left running' : 'killed with it (systemd)'} (AWS)`, async () => {
      for (let i = 0; i < COUNT; i++) expect((await c.slurm('sbatch', ['-N1', '-o', '/dev/null', '--wrap', 'sleep 1'])).status).toBe(0)
      const jobs = await queued()
      expect(jobs).toHaveLength(COUNT)
      await waitFor('4 launches', () => c.ec2.launches() >= 4, 60_000, 10)
      const pid = c.sb.controllerPid()!
      const programs = c.running()
      process.kill(pid, 'SIGKILL')
      if (withPrograms === 'killed') for (const p of programs) process.kill(p, 'SIGTERM')
      const killedAt = Date.now()
      await waitFor('slurmctld gone', () => !pidAlive(pid), 10_000, 50)
      if (withPrograms === 'killed') await waitFor('its programs gone', () => c.running().length === 0, 10_000, 50)
      const atKill = c.ec2.launches()
      await c.sb.startController()
      const restartedS = (Date.now() - killedAt) / 1000
      // Whatever slurmctld starts after its restart finishes; then the watchdog's next pass.
      await new Promise((r) => setTimeout(r, 5000))
      await waitFor('the node programs to finish', () => c.running().length === 0, 120_000, 250)
      const sync = await c.watchdog({orphanGraceMs: 1000, startLostMs: START_LOST_MS})
      let relaunchS: number | undefined
      let startLost = 0
      if (withPrograms === 'killed') {
        // The nodes whose launch was lost with the program: the watchdog's pass after startLostMs
        // (360 s in production; cut here) puts them down and powers them down, their jobs are requeued,
        // and Slurm starts them again.
        await new Promise((r) => setTimeout(r, START_LOST_MS))
        const second = await c.watchdog({orphanGraceMs: 1000, startLostMs: START_LOST_MS})
        startLost = 'actions' in second ? second.actions.filter((a) => a.kind === 'down-and-power-down' && a.ok).length : 0
        const t0 = Date.now()
        // Slurm sends each put-down node its jobs' kill first, and spends ~10 s failing to resolve each name
        // of a node that never registered (getaddrinfo retries, one node after the other).
        await waitFor('every node launched', () => c.ec2.launches() >= COUNT, 150_000, 250)
        relaunchS = (Date.now() - t0) / 1000
        await waitFor('the node programs to finish', () => c.running().length === 0, 120_000, 250)
      }
      const recoveredS = (Date.now() - killedAt) / 1000
      const launches = c.launchesPerNode()
      const doubles = [...launches].filter(([, n]) => n > 1)
      const states = await c.states()
      const owns = (name: string) => /POWERING_UP/.test(states.get(name)?.state ?? '') || !/POWER/.test(states.get(name)?.state ?? 'POWER')
      const orphans = c.alive().filter((i) => !owns(i.name))
      const unbacked = c.nodes.filter((n) => /POWERING_UP/.test(states.get(n)!.state) && !c.alive().some((i) => i.name === n))
      const after = await queued()
      const lost = jobs.filter((j) => !after.includes(j))
      figures = {startLost, relaunchS, atKill, launched: c.ec2.launches(), restartedS, recoveredS, doubles: doubles.length, orphans: orphans.length, unbacked, lost: lost.length, sync: 'actions' in sync ? sync.actions : sync}
      console.log(`fault 4 (${withPrograms}): ${JSON.stringify(figures)}`)
      return {
        lost: lost.length + doubles.length,
        stuck: orphans.length,
        ...(withPrograms === 'survive'
          ? {
              seen: 'nothing: queued jobs stay queued, nodes powering up (alloc#); each keeps the one machine launched for it',
              recovery: `slurmctld started again (${restartedS.toFixed(0)} s): it kept the nodes powering up and the surviving program launched the rest; nothing for the watchdog`,
            }
          : {
              seen: `the ${startLost} nodes not launched yet stay powering up with their jobs queued until the watchdog puts them down (reason "${REASON_START_LOST}")`,
              recovery: `slurmctld started again; the watchdog's pass --start-lost (360 s) after puts them down, their jobs are requeued (Slurm holds them cred_expire, 120 s) and start them again, 1 machine each — before, only ResumeTimeout (600 s)`,
            }),
      }
    })
    return {...tally, figures}
  } catch (error) {
    console.error(await c.report())
    throw error
  }
}

describe('slurmctld killed during a burst of node starts', () => {
  it('its resume program left running: one machine per node, every machine owned by a powering-up node, nothing for the watchdog to do', async () => {
    const t = await burst('survive')
    expect(t).toMatchObject({lost: 0, stuck: 0, figures: {launched: COUNT, unbacked: []}})
  }, 240_000)

  it('its resume program killed with it: the machines launched are kept, the watchdog puts down the nodes never launched and they start again: one machine per node, no orphan', async () => {
    const t = await burst('killed')
    // The machines launched before the kill are kept; the rest are started again after the watchdog.
    expect(t).toMatchObject({lost: 0, stuck: 0, figures: {launched: COUNT, unbacked: [], doubles: 0}})
    expect(t.figures.startLost).toBe(COUNT - t.figures.atKill)
  }, 240_000)
})
