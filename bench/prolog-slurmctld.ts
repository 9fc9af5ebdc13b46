// How long citc's PrologSlurmctld (playbooks/roles/citc_programs/files/prolog-slurmctld) holds a job
// when it has nothing to wait for: the figures behind test/playbooks/prolog-slurmctld.test.ts's
// "at once" cases, which the test asserts as behaviour (it returns without waiting for ResumeTimeout)
// and this bench measures. Against a real slurmctld 22.05 (test/helpers/slurm.ts's sandbox, on a
// loopback port) with two powered-down CLOUD nodes and one always-on node, run as slurmctld runs it
// (SLURM_* variables only, SIGCHLD blocked). Per case: median and slowest of N runs, in ms, from
// spawn to exit (a python3 and a dash start included, as in slurmctld). ResumeTimeout is 60 s in the
// conf, so a case that waited for its bound would print 60,000 ms or more.
// Whole-job figures (submit → RUNNING on cold and warm nodes, on a local cluster) are in
// bench/job-latency.ts. Needs root (munged, slurmctld). Run: npx tsx bench/prolog-slurmctld.ts [runs=9]
import {spawn} from 'node:child_process'
import {readFileSync, writeFileSync} from 'node:fs'
import {loadavg} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {slurmSandbox} from '../test/helpers/slurm.js'

const RUNS = Number(process.argv[2] ?? 9)
const SCRIPT = join(import.meta.dirname, '..', 'playbooks', 'roles', 'citc_programs', 'files', 'prolog-slurmctld')
const BLOCK_SIGCHLD = 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD}); os.execv(sys.argv[1], sys.argv[1:])'

if (process.getuid?.() !== 0) {
  console.error('bench/prolog-slurmctld.ts: needs root (it starts munged and slurmctld of its own)')
  process.exit(2)
}

/** One run of the script: ms from spawn to exit, and its exit code. Bounded (90 s). */
function runProlog(env: Record<string, string>): Promise<{code: number | null; ms: number}> {
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn('/usr/bin/python3', ['-c', BLOCK_SIGCHLD, SCRIPT], {env, stdio: 'ignore'})
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error('prolog still running after 90 s'))
    }, 90_000)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({code, ms: performance.now() - started})
    })
  })
}

const sb = await slurmSandbox('pbn')
try {
  writeFileSync(
    sb.confPath,
    sb.base +
      [
        'ResumeProgram=/bin/true',
        'SuspendProgram=/bin/true',
        'SuspendTime=600',
        'ResumeTimeout=60',
        'PrivateData=cloud',
        'NodeName=pbn-cloud-[1-2] State=CLOUD CPUs=1 RealMemory=100',
        'NodeName=pbn-static-1 CPUs=1 RealMemory=100 NodeAddr=127.0.0.1',
        'PartitionName=all Nodes=ALL Default=YES State=UP',
        '',
      ].join('\n'),
  )
  await sb.startController()
  const failing = join(sb.dir, 'site-fails.sh')
  writeFileSync(failing, '#!/bin/sh\nexit 5\n', {mode: 0o755})
  const chainedConf = join(sb.dir, 'chained-fails.conf')
  writeFileSync(chainedConf, readFileSync(sb.confPath, 'utf8') + `#citc-chained-PrologSlurmctld=${failing}\n`)

  const cases: Array<{what: string; env: Record<string, string>; before?: () => void; after?: () => void}> = [
    {what: 'nodes up (one always-on node)', env: {SLURM_CONF: sb.confPath, SLURM_JOB_ID: '7', SLURM_JOB_NODELIST: 'pbn-static-1'}},
    {what: 'no node list', env: {SLURM_CONF: sb.confPath, SLURM_JOB_ID: '11'}},
    {
      what: 'one of its powered-down nodes DOWN',
      env: {SLURM_CONF: sb.confPath, SLURM_JOB_ID: '12', SLURM_JOB_NODELIST: 'pbn-cloud-[1-2]'},
      before: () => void sb.scontrol(['update', 'NodeName=pbn-cloud-2', 'State=DOWN', 'Reason=citc: start failed: bench']),
      after: () => void sb.scontrol(['update', 'NodeName=pbn-cloud-2', 'State=RESUME']),
    },
    {what: 'a chained program fails, nodes powered down', env: {SLURM_CONF: chainedConf, SLURM_JOB_ID: '13', SLURM_JOB_NODELIST: 'pbn-cloud-1'}},
  ]
  console.log(`PrologSlurmctld with nothing to wait for, ms from spawn to exit (median / slowest of ${RUNS}; ResumeTimeout 60 s):`)
  for (const c of cases) {
    c.before?.()
    const ms: number[] = []
    const codes = new Set<number | null>()
    try {
      for (let i = 0; i < RUNS; i++) {
        const r = await runProlog(c.env)
        ms.push(r.ms)
        codes.add(r.code)
      }
    } finally {
      c.after?.()
    }
    ms.sort((a, b) => a - b)
    const median = ms[Math.floor(ms.length / 2)]!
    console.log(`  ${c.what.padEnd(46)} ${median.toFixed(0).padStart(6)} / ${ms.at(-1)!.toFixed(0).padStart(6)} ms  (exit ${[...codes].join(', ')})`)
  }
  console.log(`load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
} finally {
  await sb.stop()
}
