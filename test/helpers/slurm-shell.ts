// What the whole-cluster e2e tests run on this machine as a person would: Slurm's commands against the
// local cluster's slurm.conf (as root, or as a user through runuser), and a bounded wait for a condition.
import {spawnSync} from 'node:child_process'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {sleep} from '../../src/lib/proc.js'
import {LOCAL_DRIVER_DEFAULTS} from '../../src/lib/providers/local/driver.js'

const slurmEnv = {...process.env, SLURM_CONF: '/etc/slurm/slurm.conf'}

/** Run `cmd` (as `user` when given) from /tmp; never throws: status -1 when it could not run or timed out. */
export function sh(cmd: string, args: string[], opts: {user?: string; timeoutMs?: number} = {}) {
  const argv = opts.user ? ['runuser', '-u', opts.user, '--', cmd, ...args] : [cmd, ...args]
  const r = spawnSync(argv[0], argv.slice(1), {env: slurmEnv, encoding: 'utf8', timeout: opts.timeoutMs ?? 30_000, cwd: '/tmp'})
  return {status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? ''}
}

/** Probe every second until it gives a truthy value; an error naming `what` after `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const v = probe()
    if (v) return v
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`)
    await sleep(1000)
  }
}

/** The last `n` lines of a file that contain `match` ('' matches every line); '(none)' when it cannot be read. */
function lastLinesWith(file: string, match: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((l) => l.includes(match)).slice(-n).join('\n')
  } catch {
    return '(none)'
  }
}

/**
 * What a local cluster knows of why an elastic node did not come up, for a failed test's message:
 * Slurm's view of it (state, reason), the node programs' log lines about it, the launcher's output and
 * the node's own slurmd log, and slurmctld's lines that name it.
 */
export function nodeStartDiagnosis(node: string): string {
  const launcherOut = join(LOCAL_DRIVER_DEFAULTS.logDir, `${node}.out`)
  const slurmdLog = join(LOCAL_DRIVER_DEFAULTS.slurmLogDir, `slurmd-${node}.log`)
  const slurmctldLog = join(LOCAL_DRIVER_DEFAULTS.slurmLogDir, 'slurmctld.log')
  return [
    `scontrol show node ${node}: ${sh('scontrol', ['show', 'node', node, '--oneliner']).stdout.trim()}`,
    `/var/log/citc/elastic.log (${node}):\n${lastLinesWith('/var/log/citc/elastic.log', node, 15)}`,
    `${launcherOut}:\n${lastLinesWith(launcherOut, '', 15)}`,
    `${slurmdLog}:\n${lastLinesWith(slurmdLog, '', 20)}`,
    `${slurmctldLog} (${node}):\n${lastLinesWith(slurmctldLog, node, 15)}`,
  ].join('\n---\n')
}
