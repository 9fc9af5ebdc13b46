// Issue #23, fault 9 (load): 1,000 batch jobs submitted at once (one sbatch each, 8 at a time) to cold
// cloud nodes of a real slurmctld 22.05 running citc's PrologSlurmctld, each node's slurmd started by
// the ResumeProgram 5 s after it is called (test/helpers/cold-nodes.ts; 4 nodes × 16 CPUs, tiny jobs,
// so it ends in a few minutes on this machine). test/helpers/load-run.ts runs it: squeue timed every
// second, sdiag every 5 s; every job writes a file when it runs.
//   lost   jobs that never wrote their file
//   stuck  jobs left in the queue (pending, configuring) and nodes left powering up or configuring
// Then: squeue answered every time, within 2 s (the issue's own bound, on this loaded 2-core machine),
// and the prolog's questions to slurmctld stay a few a second however many prologs wait (they share
// slurmctld's answers); the figures are bench/load-1000.ts's.
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {type ColdNodes} from '../helpers/cold-nodes.js'
import {injectFault} from '../helpers/fault-record.js'
import {slurmSandbox} from '../helpers/slurm.js'
import {describeLoad, type LoadFigures, loadCluster, type LoadOptions, PROLOG_RPC_TYPES, runLoad} from '../helpers/load-run.js'

const o: LoadOptions = {jobs: 1000, nodes: 4, cpus: 16, resumeDelayS: 5, budgetMs: 600_000}

let c: ColdNodes

beforeAll(async () => {
  c = await loadCluster(await slurmSandbox('lod'), o)
}, 60_000)

afterAll(async () => {
  await c?.stop()
}, 120_000)

describe('fault 9: 1,000 jobs at once to cold nodes through citc’s PrologSlurmctld', () => {
  it('all run, nothing is left pending or configuring, squeue answers within 2 s throughout, the prolog asks slurmctld a few times a second', async () => {
    let f: LoadFigures | undefined
    await injectFault('load', `${o.jobs} sbatch at once (8 at a time) to ${o.nodes} cold nodes × ${o.cpus} CPUs, slurmd ${o.resumeDelayS} s after resume`, async () => {
      f = await runLoad(c, o)
      const prolog = PROLOG_RPC_TYPES.reduce((n, k) => n + (f!.rpcs[k]?.count ?? 0), 0)
      return {
        lost: f.neverRan.length,
        stuck: f.leftInQueue.length + f.nodesStuck.length,
        seen: `all ${f.submitted} ran within ${(f.allRanMs / 1000).toFixed(0)} s; squeue max ${f.squeue.maxMs.toFixed(0)} ms (median ${f.squeue.medianMs.toFixed(0)}, ${f.squeue.samples} samples); prolog ${(prolog / f.submitted).toFixed(2)} RPC/job, busiest ${f.peakPrologRpcPerS.toFixed(1)}/s`,
        recovery: 'nothing needed',
      }
    })
    console.log(describeLoad(o, f!).join('\n'))
    expect(f!.submitErrors).toEqual([])
    expect(f!.submitted).toBe(o.jobs)
    expect(f!.squeue.failed).toBe(0)
    // Sampled every second from the first sbatch to the last job's end.
    expect(f!.squeue.samples).toBeGreaterThanOrEqual(f!.allRanMs / 1000 / 3)
    // The waiting prologs share slurmctld's answers: node states at most twice a second, the list of
    // waiting jobs every 5 s (a prolog each would ask 4 times a second: hundreds a second here).
    expect(f!.peakPrologRpcPerS).toBeLessThanOrEqual(5)
    // The issue's own bound; measured on this 2-core machine shared with other work.
    expect(f!.squeue.maxMs).toBeLessThanOrEqual(2000)
  }, 720_000)
})
