// citc's PrologSlurmctld in a real slurmctld 22.05 whose ResumeProgram brings cold nodes up with a real
// slurmd after a delay (test/helpers/cold-nodes.ts): the headline "a batch job starts the moment its
// nodes are up", timed from Slurm's own records, and what happens to a job whose prolog is waiting
// when the job is cancelled, its node is drained or failed, or the prolog is sent SIGTERM.
//
// The headline's figure is slurmctld's log (milliseconds): "Node X now responding" (registration) to
// "prolog_running_decr: Configuration for JobId=J is complete" (the prolog ended and Slurm launched the
// batch script; the job's StartTime is reset in the same call). Without the prolog the line comes from
// job_time_limit, Slurm's 30-s pass, up to 30 s later. Two delays: 6 s (a local node; the prolog polls
// often in its first seconds) and 40 s (a cloud VM's minutes, where a poll every 2 s would miss).
import {readFileSync} from 'node:fs'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {type ColdNodes, coldNodes} from '../helpers/cold-nodes.js'
import {slurmSandbox} from '../helpers/slurm.js'
import {waitFor} from '../helpers/wait.js'

const FAST_S = 6
const SLOW_S = 40

let c: ColdNodes

beforeAll(async () => {
  c = await coldNodes(await slurmSandbox('plc'), {
    nodes: 9,
    cpus: 2,
    resumeDelayS: FAST_S,
    // Long enough that no case here ends by Slurm's own ResumeTimeout.
    resumeTimeoutS: 300,
    delays: {'plc-cloud-3': SLOW_S, 'plc-cloud-4': SLOW_S},
  })
}, 60_000)

afterAll(async () => {
  await c?.stop()
}, 60_000)

const submit = (args: string[]) => {
  const r = c.run('sbatch', ['-o', '/dev/null', ...args])
  const id = /Submitted batch job (\d+)/.exec(r.stdout)?.[1]
  if (!id) throw new Error(`sbatch ${args.join(' ')}: ${r.stderr}`)
  return id
}
const job = (id: string) => c.run('scontrol', ['-o', 'show', 'job', id]).stdout
const field = (text: string, key: string) => new RegExp(`(?:^| )${key}=(\\S*)`).exec(text)?.[1] ?? ''

/** slurmctld's log lines as [ms since epoch (local clock, as logged), text]. */
function logLines(): Array<[number, string]> {
  return c
    .log()
    .split('\n')
    .flatMap((l) => {
      const m = /^\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})\] (.*)$/.exec(l)
      return m ? [[Date.parse(m[1]!), m[2]!] as [number, string]] : []
    })
}

/** Registration of the job's last node to the launch, from slurmctld's log; and who launched it. */
function launchAfterRegistration(id: string, nodes: string[]): {ms: number; by: string} {
  const lines = logLines()
  const at = lines.findIndex(([, t]) => new RegExp(`^(\\w+): Configuration for JobId=${id} (is )?complete$`).test(t))
  if (at < 0) throw new Error(`no "Configuration for JobId=${id} complete" in slurmctld's log`)
  // Each node's last registration before the launch.
  const reg = nodes.map((n) => lines.slice(0, at).reverse().find(([, t]) => t === `Node ${n} now responding`)?.[0])
  if (reg.some((t) => t === undefined)) throw new Error(`no registration of ${nodes.join(',')} before job ${id}'s launch in slurmctld's log`)
  return {ms: lines[at]![0] - Math.max(...(reg as number[])), by: lines[at]![1].split(':')[0]!}
}

/** Wait until the job's PrologSlurmctld runs (the job is CONFIGURING on powering-up nodes). */
async function prologOf(id: string): Promise<number> {
  let pid = 0
  await waitFor(`job ${id}'s PrologSlurmctld to run`, () => Boolean((pid = c.prologs().find((p) => p.job === id)?.pid ?? 0)), 30_000, 200)
  return pid
}

/** Processes of the job's prolog (they all carry its SLURM_JOB_ID; the job's own script never ran). */
function processesOf(id: string): number[] {
  const out: number[] = []
  for (const p of c.prologs()) if (p.job === id) out.push(p.pid)
  for (const pid of listPids()) {
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
      if (env.includes(`SLURM_JOB_ID=${id}`) && env.includes(`SLURM_CONF=${c.sb.confPath}`) && !out.includes(pid)) out.push(pid)
    } catch {
      // Ended meanwhile.
    }
  }
  return out
}
function listPids(): number[] {
  return c.run('ls', ['/proc']).stdout.split('\n').filter((e) => /^\d+$/.test(e)).map(Number)
}

describe('PrologSlurmctld with nodes that come up after a delay (real slurmctld and slurmd)', () => {
  it(`launches a batch job within 2 s of its nodes registering (${FAST_S}-s and ${SLOW_S}-s starts, one node and two), by the prolog's end, not Slurm's 30-s pass`, async () => {
    const cases = [
      {id: submit(['-w', 'plc-cloud-1', '--wrap', 'true']), nodes: ['plc-cloud-1']},
      {id: submit(['-N', '1', '-w', 'plc-cloud-2', '--wrap', 'true']), nodes: ['plc-cloud-2']},
      {id: submit(['-N', '2', '-w', 'plc-cloud-[3-4]', '--wrap', 'true']), nodes: ['plc-cloud-3', 'plc-cloud-4']},
    ]
    await waitFor('the three jobs to end', () => cases.every((k) => /JobState=COMPLETED/.test(job(k.id))), (SLOW_S + 60) * 1000, 500).catch((error: Error) => {
      throw new Error(`${error.message}\n${cases.map((k) => job(k.id)).join('\n')}`)
    })
    const figures = cases.map((k) => ({...k, ...launchAfterRegistration(k.id, k.nodes)}))
    console.log(`registration → launch: ${figures.map((f) => `${f.nodes.join('+')} ${f.ms} ms`).join(', ')}`)
    for (const f of figures) {
      expect(f.by, `job ${f.id}`).toBe('prolog_running_decr')
      expect(f.ms, `job ${f.id}: ms from ${f.nodes.join('+')} registering to its launch`).toBeLessThanOrEqual(2000)
      expect(f.ms).toBeGreaterThanOrEqual(0)
      // Slurm's own record of the start (whole seconds), reset at the launch: not before the node's slurmd started.
      const text = job(f.id)
      expect(field(text, 'ExitCode')).toBe('0:0')
      for (const n of f.nodes) {
        const slurmdStart = field(c.run('scontrol', ['-o', 'show', 'node', n]).stdout, 'SlurmdStartTime')
        expect(Date.parse(field(text, 'StartTime')) - Date.parse(slurmdStart)).toBeGreaterThanOrEqual(0)
        expect(Date.parse(field(text, 'StartTime')) - Date.parse(slurmdStart)).toBeLessThanOrEqual(4000)
      }
    }
  }, 180_000)

  it('scancel while the prolog waits: the job is cancelled, its prolog ends, nothing of it is left running', async () => {
    const id = submit(['-w', 'plc-cloud-5', '--wrap', 'true'])
    await prologOf(id)
    const t0 = Date.now()
    expect(c.run('scancel', [id]).status).toBe(0)
    await waitFor(`job ${id}'s prolog and its children to end`, () => processesOf(id).length === 0, 10_000, 100)
    console.log(`scancel → prolog gone: ${Date.now() - t0} ms`)
    expect(field(job(id), 'JobState')).toBe('CANCELLED')
    expect(logLines().some(([, t]) => t === `slurmscriptd: _run_script: JobId=${id} PrologSlurmctld killed by signal 9`)).toBe(true)
  }, 60_000)

  for (const state of ['DRAIN', 'FAIL']) {
    it(`a node set ${state} while the prolog waits: Slurm requeues the job (pending, with its reason), the prolog ends at once`, async () => {
      const node = state === 'DRAIN' ? 'plc-cloud-6' : 'plc-cloud-7'
      const id = submit(['-w', node, '--wrap', 'true'])
      await prologOf(id)
      const t0 = Date.now()
      expect(c.run('scontrol', ['update', `NodeName=${node}`, `State=${state}`, `Reason=test ${state}`]).status).toBe(0)
      await waitFor(`job ${id}'s prolog to end`, () => processesOf(id).length === 0, 10_000, 100)
      console.log(`${state} → prolog gone: ${Date.now() - t0} ms`)
      // Requeued, not failed: it waits for its begin time (Slurm's requeue delay), then runs elsewhere.
      // The reason is set by the next scheduling pass.
      await waitFor(`job ${id} pending with reason BeginTime`, () => field(job(id), 'Reason') === 'BeginTime', 30_000, 250)
      const text = job(id)
      expect([field(text, 'JobState'), field(text, 'Restarts')]).toEqual(['PENDING', '1'])
      expect(logLines().some(([, t]) => t === `requeue job JobId=${id} due to failure of node ${node}`)).toBe(true)
      // The prolog ended by itself (it saw the node's state), with exit 0: no error of slurmscriptd about it.
      expect(logLines().filter(([, t]) => t.includes(`JobId=${id} PrologSlurmctld`))).toEqual([])
      c.run('scancel', [id])
    }, 60_000)
  }

  it('scontrol requeue while the prolog waits: the job is pending again and its prolog ends (it no longer waits for those nodes)', async () => {
    const id = submit(['-w', 'plc-cloud-9', '--wrap', 'true'])
    await prologOf(id)
    const t0 = Date.now()
    expect(c.run('scontrol', ['requeue', id]).status).toBe(0)
    // Slurm stops it, or the prolog sees the job gone from the waiting jobs (it asks every 5 s).
    await waitFor(`job ${id}'s prolog and its children to end`, () => processesOf(id).length === 0, 20_000, 100)
    console.log(`requeue → prolog gone: ${Date.now() - t0} ms (${logLines().some(([, t]) => t.includes(`JobId=${id} PrologSlurmctld killed`)) ? 'killed by slurmscriptd' : 'ended by itself'})`)
    expect(field(job(id), 'JobState')).toBe('PENDING')
    c.run('scancel', [id])
  }, 60_000)

  it('SIGTERM to a waiting prolog: it ends at once; Slurm does not fail the job, which starts on its 30-s pass', async () => {
    const node = 'plc-cloud-8'
    const id = submit(['-w', node, '--wrap', 'true'])
    const pid = await prologOf(id)
    const t0 = Date.now()
    process.kill(pid, 'SIGTERM')
    await waitFor(`job ${id}'s prolog and its children to end`, () => processesOf(id).length === 0, 10_000, 100)
    console.log(`SIGTERM → prolog gone: ${Date.now() - t0} ms`)
    // Killed by a signal is not a failure to Slurm 22.05 (only a non-zero exit requeues the job).
    await waitFor(`slurmscriptd to note job ${id}'s prolog`, () => logLines().some(([, t]) => t === `slurmscriptd: error: _run_script: JobId=${id} PrologSlurmctld exit status 0:15`), 10_000, 200)
    expect(field(job(id), 'JobState')).toBe('CONFIGURING')
    // The job runs, launched by Slurm's periodic pass once the node is up (every 30 s; 25 s after the
    // SIGTERM on an idle machine). The wait is generous: on CI's loaded two cores it once took over 51 s.
    await waitFor(`job ${id} to run`, () => field(job(id), 'JobState') === 'COMPLETED', 150_000, 500)
    expect(launchAfterRegistration(id, [node]).by).toBe('job_time_limit')
  }, 240_000)
})
