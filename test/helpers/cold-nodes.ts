// A Slurm sandbox (test/helpers/slurm.ts, started by the caller) with powered-down CLOUD nodes that really come up: its
// ResumeProgram starts, after a delay of the test's choosing, a real slurmd for each node it is given
// (own port, own spool, in a time namespace whose boot time is "now", as citc's local driver does:
// slurmctld refuses a powered-up node whose boot time is older than the power-up request). Its
// SuspendProgram stops them. PrologSlurmctld is citc's script, through a two-line wrapper that only
// names the sandbox's slurm.conf (on a cluster the citc_programs role links /etc/slurm/slurm.conf).
// slurmctld logs with milliseconds, so a test can time Slurm's own records against each other.
// Every process is recorded by PID and stopped by PID.
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {sleep} from '../../src/lib/proc.js'
import {freePort} from './net.js'
import {type SlurmSandbox} from './slurm.js'

export const PROLOG_SCRIPT = join(import.meta.dirname, '../../playbooks/roles/citc_programs/files/prolog-slurmctld')

export interface ColdNodesOptions {
  nodes: number
  cpus: number
  /** Seconds from ResumeProgram's call to slurmd's start. */
  resumeDelayS: number
  /** Another delay for some nodes (by name). */
  delays?: Record<string, number>
  resumeTimeoutS: number
  /** Run citc's PrologSlurmctld (default true). */
  prolog?: boolean
  /** More slurm.conf lines (before the nodes). */
  extra?: string[]
}

export interface ColdNodes {
  sb: SlurmSandbox
  /** The nodes' names, in order. */
  names: string[]
  /** The hostlist of all nodes. */
  hostlist: string
  /** The PrologSlurmctld slurm.conf names (the wrapper of citc's script). */
  prologPath: string
  /** slurmctld's log so far. */
  log(): string
  /** Run a Slurm command against the sandbox; never throws. */
  run(cmd: string, args: string[], timeoutMs?: number): {status: number; stdout: string; stderr: string}
  /** citc's prologs running now (not their subshells), with the job id from their environment. */
  prologs(): Array<{pid: number; job: string}>
  /** Stop every slurmd the ResumeProgram started, then slurmctld and munged. */
  stop(): Promise<void>
}

/** Live PIDs whose command line names `path` (read from /proc; the caller stops them by PID). */
export function pidsRunning(path: string): number[] {
  const out: number[] = []
  for (const entry of spawnSync('ls', ['/proc'], {encoding: 'utf8'}).stdout.split('\n')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(path)) out.push(Number(entry))
    } catch {
      // It ended while we looked.
    }
  }
  return out
}

/**
 * Remove the answers citc's prologs shared for this slurm.conf (the script keeps them in
 * ${TMPDIR:-/tmp}/citc-prolog/<cksum of the conf's path>.*, one set per cluster; slurmctld gives it no TMPDIR).
 */
export function removeSharedAnswers(confPath: string, tmp = '/tmp'): void {
  const dir = join(tmp, 'citc-prolog')
  const key = spawnSync('cksum', [], {input: confPath, encoding: 'utf8'}).stdout.split(' ')[0]
  if (!key || !existsSync(dir)) return
  for (const f of readdirSync(dir)) if (f.startsWith(`${key}.`)) rmSync(join(dir, f), {force: true})
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Configure and start the controller of `sb` (a fresh slurmSandbox, its controller not started). */
export async function coldNodes(sb: SlurmSandbox, o: ColdNodesOptions): Promise<ColdNodes> {
  const names = Array.from({length: o.nodes}, (_, i) => `${sb.clusterId}-cloud-${i + 1}`)
  const hostlist = `${sb.clusterId}-cloud-[1-${o.nodes}]`
  const ports: number[] = []
  for (const _ of names) ports.push(await freePort())
  for (const n of names) mkdirSync(join(sb.dir, 'spool', n), {recursive: true})
  const launchers = join(sb.dir, 'launchers')
  const resume = join(sb.dir, 'resume')
  const suspend = join(sb.dir, 'suspend')
  const prologPath = join(sb.dir, 'prolog-slurmctld')
  // ResumeProgram: answer at once (slurmctld waits for nothing), start each slurmd after the delay.
  // Detached (setsid), absolute paths: slurmctld runs it with a minimal environment.
  writeFileSync(
    resume,
    `#!/bin/sh
PATH=/usr/bin:/bin:/usr/sbin:/sbin
SLURM_CONF=${sb.confPath}; export SLURM_CONF
for n in $(scontrol show hostnames "$1"); do
  echo "$(date +%s.%N) resume $n" >> ${sb.dir}/power.log
  d=$(cat ${sb.dir}/delay-$n 2>/dev/null) || d=${o.resumeDelayS}
  setsid /bin/sh -c 'sleep "$2"; exec /usr/sbin/slurmd -D -b -N "$0" -f "$1"' "$n" "$SLURM_CONF" "$d" </dev/null >>${sb.dir}/slurmd.out 2>&1 &
  echo $! >> ${launchers}
done
exit 0
`,
    {mode: 0o755},
  )
  writeFileSync(
    suspend,
    `#!/bin/sh
PATH=/usr/bin:/bin:/usr/sbin:/sbin
SLURM_CONF=${sb.confPath}; export SLURM_CONF
for n in $(scontrol show hostnames "$1"); do
  echo "$(date +%s.%N) suspend $n" >> ${sb.dir}/power.log
  pid=$(cat ${sb.dir}/slurmd-$n.pid 2>/dev/null) && [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
done
exit 0
`,
    {mode: 0o755},
  )
  for (const [n, d] of Object.entries(o.delays ?? {})) writeFileSync(join(sb.dir, `delay-${n}`), `${d}\n`)
  writeFileSync(prologPath, `#!/bin/sh\nSLURM_CONF=${sb.confPath}; export SLURM_CONF\nexec ${PROLOG_SCRIPT}\n`, {mode: 0o755})
  writeFileSync(
    sb.confPath,
    sb.base +
      [
        `SlurmdPidFile=${join(sb.dir, 'slurmd-%n.pid')}`,
        `SlurmdLogFile=${join(sb.dir, 'slurmd-%n.log')}`,
        // The nodes' CPUs are the conf's, not this machine's: many small jobs per node.
        'SlurmdParameters=config_overrides',
        'LogTimeFormat=iso8601_ms',
        `ResumeProgram=${resume}`,
        `SuspendProgram=${suspend}`,
        'SuspendTime=3600',
        'SuspendTimeout=30',
        `ResumeTimeout=${o.resumeTimeoutS}`,
        'ResumeRate=0',
        'PrivateData=cloud',
        'ReturnToService=2',
        'DefMemPerCPU=10',
        'SlurmctldParameters=idle_on_node_suspend,cloud_reg_addrs',
        ...(o.prolog === false ? [] : [`PrologSlurmctld=${prologPath}`]),
        ...(o.extra ?? []),
        ...names.map((n, i) => `NodeName=${n} CPUs=${o.cpus} RealMemory=${o.cpus * 100} State=CLOUD Port=${ports[i]}`),
        `PartitionName=all Nodes=${hostlist} Default=YES MaxTime=INFINITE State=UP`,
        '',
      ].join('\n'),
  )
  try {
    await sb.startController()
  } catch (error) {
    await sb.stop()
    throw error
  }
  const run = (cmd: string, args: string[], timeoutMs = 20_000) => {
    const r = spawnSync(cmd, args, {env: sb.env, encoding: 'utf8', timeout: timeoutMs, cwd: '/tmp'})
    return {status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? ''}
  }
  return {
    sb,
    names,
    hostlist,
    prologPath,
    log: () => (existsSync(join(sb.dir, 'slurmctld.log')) ? readFileSync(join(sb.dir, 'slurmctld.log'), 'utf8') : ''),
    run,
    prologs() {
      // The wrapper execs the script: its command line is `/bin/sh <script>`, and so is each subshell
      // it forks; the prolog itself is the one whose parent is not one of them (slurmscriptd).
      const pids = pidsRunning(PROLOG_SCRIPT)
      return pids.flatMap((pid) => {
        try {
          const ppid = Number(readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ')[1])
          if (pids.includes(ppid)) return []
          const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0')
          const job = env.find((e) => e.startsWith('SLURM_JOB_ID='))?.slice('SLURM_JOB_ID='.length) ?? ''
          return [{pid, job}]
        } catch {
          return []
        }
      })
    },
    async stop() {
      run('scancel', ['-u', 'root'])
      const pids = (existsSync(launchers) ? readFileSync(launchers, 'utf8') : '').split('\n').filter(Boolean).map(Number)
      for (const n of names) {
        const f = join(sb.dir, `slurmd-${n}.pid`)
        if (existsSync(f)) pids.push(Number(readFileSync(f, 'utf8').trim()))
      }
      const live = pids.filter((p) => p > 1 && alive(p))
      for (const p of live) process.kill(p, 'SIGTERM')
      const deadline = Date.now() + 10_000
      while (live.some(alive) && Date.now() < deadline) await sleep(100)
      for (const p of live) if (alive(p)) process.kill(p, 'SIGKILL')
      removeSharedAnswers(sb.confPath)
      await sb.stop()
    },
  }
}
