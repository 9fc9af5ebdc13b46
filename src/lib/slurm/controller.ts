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
  /** NodeAddr: where slurmctld reaches the node's slurmd. */
  address?: string
  /** NodeHostName (the node name unless set otherwise). */
  hostName?: string
  /** slurmd's port (Port=; absent when the default). */
  port?: number
  /** The slurmd version the node registered with (Version=); absent until it has registered. */
  version?: string
  /** When its slurmd last started and registered (SlurmdStartTime), controller-local ISO time. */
  slurmdStartTime?: string
  /** When it last had work (LastBusyTime). */
  lastBusyTime?: string
  /** LastBusyTime as epoch seconds, when scontrol ran with SLURM_TIME_FORMAT=%s (the metrics collector does). */
  lastBusyEpoch?: number
  /** CPUs allocated to jobs (CPUAlloc). */
  cpuAlloc?: number
  /** Memory allocated to jobs, MiB (AllocMem). */
  allocMemory?: number
}

/** Separates `scontrol show config` from the log lines in versionAndLog's one call. */
const LOG_MARK = '--- citc: slurmctld log ---'

/**
 * The slurmctld log lines (grep -E) that say why a node cannot join: munge credential errors with the
 * peer's address, the peer's numeric address by port, a node whose slurm.conf differs, nodes not
 * responding and responding again. controller-log.ts parses them.
 */
export const CONTROLLER_LOG_SIGNALS = 'Munge decode failed|has authentication error|slurm_receive_msg \\[|different slurm\\.conf|not responding|now responding'

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

  /**
   * slurmctld's own version and the lines of its log that say why a machine cannot join, in one call:
   * `scontrol show config` (SLURM_VERSION there is the controller's, SlurmctldLogFile where it logs),
   * then only the last `tailBytes` of that log, filtered on the management node to CONTROLLER_LOG_SIGNALS
   * and at most `maxLines` lines (a busy log must not travel whole over SSH). A log that cannot be read
   * (no log file, a login user without the permission) is said in logError, never an exception.
   */
  async versionAndLog(opts: {tailBytes?: number; maxLines?: number} = {}): Promise<{version?: string; logFile?: string; log: string; logError?: string}> {
    const script = [
      'bytes=$1; lines=$2; pattern=$3; shift 3',
      'cfg=$("$@") || exit 3',
      'printf "%s\\n" "$cfg"',
      `echo '${LOG_MARK}'`,
      'log=$(printf "%s\\n" "$cfg" | sed -n "s/^SlurmctldLogFile *= *//p")',
      'case "$log" in ""|"(null)") echo "slurmctld logs to syslog or the journal (no SlurmctldLogFile)" >&2; exit 0;; esac',
      'if [ ! -r "$log" ]; then echo "cannot read $log" >&2; exit 0; fi',
      'tail -c "$bytes" -- "$log" | grep -E -e "$pattern" | tail -n "$lines"',
      'exit 0',
    ].join('\n')
    const argv = ['sh', '-c', script, 'sh', String(opts.tailBytes ?? 2 * 1024 * 1024), String(opts.maxLines ?? 5000), CONTROLLER_LOG_SIGNALS, ...this.slurmArgv('scontrol', ['show', 'config'])]
    const r = await this.transport.run(argv, {timeoutMs: 30_000})
    if (r.exitCode !== 0) throw remoteError(`scontrol show config failed: ${(r.stderr || r.stdout).trim()}`)
    const at = r.stdout.indexOf(`${LOG_MARK}\n`)
    const config = at === -1 ? r.stdout : r.stdout.slice(0, at)
    const value = (key: string) => new RegExp(`^${key}\\s*=\\s*(.*)$`, 'm').exec(config)?.[1].trim()
    const logFile = value('SlurmctldLogFile')
    return {
      ...defined({version: value('SLURM_VERSION'), logFile: logFile === '(null)' ? undefined : logFile, logError: r.stderr.trim() || undefined}),
      log: at === -1 ? '' : r.stdout.slice(at + LOG_MARK.length + 1),
    }
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
      ...defined({
        address: pairs.get('NodeAddr'),
        hostName: pairs.get('NodeHostName'),
        port: num('Port'),
        version: pairs.get('Version'),
        slurmdStartTime: time(pairs.get('SlurmdStartTime')),
        lastBusyTime: time(pairs.get('LastBusyTime')),
        lastBusyEpoch: epoch(pairs.get('LastBusyTime')),
        cpuAlloc: num('CPUAlloc'),
        allocMemory: num('AllocMem'),
      }),
    })
  }
  return out
}

/** Slurm writes "None" or "Unknown" for a time it does not have. */
const time = (v: string | undefined) => (v && /^\d{4}-\d\d-\d\dT/.test(v) ? v : undefined)

/** The same times under SLURM_TIME_FORMAT=%s: epoch seconds ("None"/"Unknown" stay absent). */
const epoch = (v: string | undefined) => (v && /^\d+$/.test(v) ? Number(v) : undefined)

/** Only the keys that have a value (so a parsed node compares equal to one written by hand). */
function defined<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && !(typeof v === 'number' && Number.isNaN(v)))) as Partial<T>
}

/** A node that is up (or coming up) as a machine, as opposed to powered down. */
export const isPoweredUp = (n: NodeState) =>
  !n.state.some((s) => s === 'POWERED_DOWN' || s === 'POWERING_DOWN') || n.state.includes('POWERING_UP')

/** A node with work on it. */
export const isBusy = (n: NodeState) => n.state.some((s) => ['ALLOCATED', 'MIXED', 'COMPLETING'].includes(s))
