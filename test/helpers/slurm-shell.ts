// What the whole-cluster e2e tests run on this machine as a person would: Slurm's commands against the
// local cluster's slurm.conf (as root, or as a user through runuser), and a bounded wait for a condition.
import {spawnSync} from 'node:child_process'

import {sleep} from '../../src/lib/proc.js'

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
