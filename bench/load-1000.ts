// Issue #23's fault 9 as figures: 1,000 batch jobs submitted at once (one sbatch each, 8 at a time) to
// cold cloud nodes of a real slurmctld 22.05 running citc's PrologSlurmctld, each node's slurmd started
// by the ResumeProgram after a delay (test/helpers/cold-nodes.ts, on loopback). Prints sdiag before and
// after, squeue's latency (timed every second while the jobs run: the issue asks for 2 s at most), and
// what the prolog costs slurmctld (its RPCs, per job and at the busiest 5 s). test/faults/load.test.ts
// asserts the behaviour (all ran, nothing left) on the same run. Needs root (munged, slurmctld, slurmd).
// Run: npx tsx bench/load-1000.ts [jobs=1000] [nodes=4] [cpus per node=16] [resume delay s=5]
import {loadavg} from 'node:os'

import {describeLoad, loadCluster, type LoadOptions, runLoad} from '../test/helpers/load-run.js'
import {slurmSandbox} from '../test/helpers/slurm.js'

if (process.getuid?.() !== 0) {
  console.error('bench/load-1000.ts: needs root (it starts munged, slurmctld and slurmd of its own)')
  process.exit(2)
}
const o: LoadOptions = {
  jobs: Number(process.argv[2] ?? 1000),
  nodes: Number(process.argv[3] ?? 4),
  cpus: Number(process.argv[4] ?? 16),
  resumeDelayS: Number(process.argv[5] ?? 5),
  budgetMs: 900_000,
}
const c = await loadCluster(await slurmSandbox('bld'), o)
try {
  const f = await runLoad(c, o)
  console.log('sdiag before:')
  console.log(f.sdiagBefore.trimEnd())
  console.log('sdiag after:')
  console.log(f.sdiagAfter.trimEnd())
  console.log('')
  for (const line of describeLoad(o, f)) console.log(line)
  console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
} finally {
  await c.stop()
}
