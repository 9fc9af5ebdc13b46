// Talking to a running Slurm controller through a Transport: always as argv, always with the
// cluster's slurm.conf named explicitly (SLURM_CONF), so it works wherever the file lives.
import {remoteError} from '../errors.js'
import type {Transport} from '../transport/types.js'
import {sleep} from '../proc.js'
import {CONFIGURING_JOBS_FORMAT} from './waiting-jobs.js'

export interface NodeState {
  name: string
  /** Slurm's state flags, upper case, e.g. ["IDLE","CLOUD","POWERED_DOWN"]. */
  state: string[]
  reason?: string
  cpus?: number
  realMemory?: number
  features?: string
  gres?: string
  partitions?: string
}

export interface ControllerOptions {
  confPath: string
  /** argv that restarts slurmctld (default: the distribution's service). */
  restartCommand?: string[]
}

export class Controller {
  constructor(
    private readonly transport: Transport,
    private readonly opts: ControllerOptions,
  ) {}

  get confPath(): string {
    return this.opts.confPath
  }

  /** argv for a Slurm client command against this cluster's slurm.conf. */
  slurmArgv(cmd: string, args: string[], confPath = this.opts.confPath): string[] {
    return ['env', `SLURM_CONF=${confPath}`, cmd, ...args]
  }

  /** True if slurmctld answers. */
  async ping(): Promise<boolean> {
    const r = await this.transport.run(this.slurmArgv('scontrol', ['ping']), {timeoutMs: 20_000})
    return r.exitCode === 0 && /\bUP\b/.test(r.stdout)
  }

  /**
   * Wait (bounded) until slurmctld answers. With its pid file known, give up early once the process
   * is gone (a slurmctld that refuses its configuration exits at once: no point waiting a minute).
   */
  async waitUp(timeoutMs: number, opts: {pidFile?: string; signal?: AbortSignal} = {}): Promise<boolean> {
    const started = Date.now()
    const deadline = started + timeoutMs
    let goneChecks = 0
    while (Date.now() < deadline) {
      opts.signal?.throwIfAborted()
      if (await this.ping()) return true
      if (opts.pidFile && Date.now() - started > 3000) {
        const alive = await this.transport.run(['sh', '-c', 'kill -0 "$(cat "$1" 2>/dev/null)" 2>/dev/null', 'sh', opts.pidFile])
        goneChecks = alive.exitCode === 0 ? 0 : goneChecks + 1
        if (goneChecks >= 3) return false
      }
      await sleep(1000)
    }
    return false
  }

  /** Parse a config file with Slurm's own parser: resolves with the error text, or undefined if valid. */
  async validate(confPath: string): Promise<string | undefined> {
    const r = await this.transport.run(this.slurmArgv('scontrol', ['show', 'hostnames', 'citc-validate'], confPath), {timeoutMs: 30_000})
    return r.exitCode === 0 ? undefined : (r.stderr || r.stdout).trim()
  }

  /** Node states (powered-down cloud nodes included); a hostlist limits the query. */
  async nodes(hostlist?: string): Promise<NodeState[]> {
    const args = ['show', 'node', ...(hostlist ? [hostlist] : []), '--oneliner', '--all']
    const r = await this.transport.run(this.slurmArgv('scontrol', args), {timeoutMs: 30_000})
    if (r.exitCode !== 0) {
      // Asking for nodes the controller does not know is not an error for our callers.
      if (/Invalid node name|not found/i.test(r.stderr + r.stdout)) return []
      throw remoteError(`scontrol show node failed: ${(r.stderr || r.stdout).trim()}`)
    }
    return parseNodeStates(r.stdout)
  }

  /**
   * Jobs that hold nodes still coming up (CONFIGURING): squeue's lines in CONFIGURING_JOBS_FORMAT with
   * times as epoch seconds, and the controller's clock in the same call.
   */
  async configuringJobs(): Promise<{now: number; lines: string}> {
    const [env, conf, ...squeueArgv] = this.slurmArgv('squeue', ['-h', '-t', 'CONFIGURING', '-o', CONFIGURING_JOBS_FORMAT])
    const squeue = [env, conf, 'SLURM_TIME_FORMAT=%s', ...squeueArgv]
    const argv = ['sh', '-c', 'date +%s && exec "$@"', 'sh', ...squeue]
    const r = await this.transport.run(argv, {timeoutMs: 30_000})
    if (r.exitCode !== 0) throw remoteError(`squeue failed: ${(r.stderr || r.stdout).trim()}`)
    const [now, ...lines] = r.stdout.split('\n')
    return {now: Number(now.trim()), lines: lines.join('\n')}
  }

  async update(args: string[]): Promise<void> {
    await this.transport.check(this.slurmArgv('scontrol', ['update', ...args]), {timeoutMs: 30_000})
  }

  async reconfigure(): Promise<void> {
    await this.transport.check(this.slurmArgv('scontrol', ['reconfigure']), {timeoutMs: 60_000})
  }

  async restart(): Promise<void> {
    const argv = this.opts.restartCommand ?? ['service', 'slurmctld', 'restart']
    await this.transport.check(argv, {timeoutMs: 120_000})
  }
}

export function parseNodeStates(text: string): NodeState[] {
  const out: NodeState[] = []
  for (const line of text.split('\n')) {
    if (!line.startsWith('NodeName=')) continue
    // Reason= runs to the end of the line and may contain spaces: cut it off before parsing.
    const reasonAt = line.indexOf(' Reason=')
    const main = reasonAt === -1 ? line : line.slice(0, reasonAt)
    // Not slurm.conf syntax: values may hold spaces and '#' (OS=Linux 6.1.0 #1 SMP …), so split only
    // where the next "Key=" starts.
    const pairs = new Map(
      main
        .split(/ +(?=[A-Za-z_]+=)/)
        .map((piece) => {
          const eq = piece.indexOf('=')
          return [piece.slice(0, eq), piece.slice(eq + 1).trim()] as [string, string]
        }),
    )
    const num = (k: string) => (pairs.has(k) ? Number(pairs.get(k)) : undefined)
    out.push({
      name: pairs.get('NodeName')!,
      state: (pairs.get('State') ?? '').split('+').filter(Boolean),
      reason: reasonAt === -1 ? undefined : line.slice(reasonAt + 8).replace(/ \[[^\]]*\]\s*$/, '').trim(),
      cpus: num('CPUTot'),
      realMemory: num('RealMemory'),
      features: pairs.get('AvailableFeatures'),
      gres: pairs.get('Gres'),
      partitions: pairs.get('Partitions'),
    })
  }
  return out
}

/** A node that is up (or coming up) as a machine, as opposed to powered down. */
export const isPoweredUp = (n: NodeState) =>
  !n.state.some((s) => s === 'POWERED_DOWN' || s === 'POWERING_DOWN') || n.state.includes('POWERING_UP')

/** A node with work on it. */
export const isBusy = (n: NodeState) => n.state.some((s) => ['ALLOCATED', 'MIXED', 'COMPLETING'].includes(s))
