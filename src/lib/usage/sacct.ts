// sacct as citc asks it for jobs in a time window, and its output read into typed jobs. Pure: the
// argv goes to a Transport elsewhere, the text comes back here.
//
// What sacct prints (Slurm 22.05's src/sacct/print.c and slurmdb_defs.c, checked against the man page):
// - `--allocations` gives one line per job (no steps); `--parsable2 --noheader` separates fields with
//   "|" and nothing at the end. Account and user names cannot contain "|" (sacctmgr refuses them),
//   so a line with another number of fields is not sacct's answer to this format: refused.
// - Start and End are YYYY-MM-DDTHH:MM:SS in the LOCAL time of the machine that runs sacct, which also
//   reads --starttime/--endtime in local time: the argv sets TZ=UTC so both mean UTC. A job not started
//   yet has Start=Unknown (it used nothing: skipped); a running one has End=Unknown (counted up to `now`).
// - AllocTRES is "billing=4,cpu=4,gres/gpu=1,mem=7G,node=1": names sorted, memory in MiB printed with a
//   unit K/M/G/T/P/E only when exact (sacct's default CONVERT_NUM_UNIT_EXACT: 7168 MiB is "7G", 7500 is
//   "7500M"), every other TRES a plain count. Typed GPUs may appear as well (gres/gpu:a100=1) next to
//   the untyped total gres/gpu; the total is used when present, never both.
// - State is one word, except "CANCELLED by <uid>".
// - ElapsedRaw is seconds of run time (suspended time excluded).
import {remoteError} from '../errors.js'

/** The fields citc asks for, in the order the parser reads them. */
export const SACCT_FIELDS = ['JobID', 'User', 'Account', 'Partition', 'NodeList', 'AllocTRES', 'ElapsedRaw', 'Start', 'End', 'State'] as const

export interface SacctJob {
  /** As sacct prints it: "42", "42_3" (array task), "42+1" (heterogeneous component). */
  jobId: string
  user: string
  account: string
  partition: string
  /** Slurm hostlist expression ("c5-xlarge-[0001-0002]"); "" when none was assigned. */
  nodeList: string
  cpus: number
  gpus: number
  /** Allocated memory of the whole job, in MiB (Slurm's "M"). */
  memMB: number
  /** Allocated nodes (AllocTRES node=). */
  nodes: number
  elapsedSeconds: number
  /** Unix seconds. */
  start: number
  /** Unix seconds; undefined while the job runs. */
  end?: number
  /** First word of State: COMPLETED, RUNNING, CANCELLED, FAILED, TIMEOUT, … */
  state: string
}

export interface SacctWindow {
  /** Unix seconds, inclusive. */
  since: number
  /** Unix seconds, exclusive. */
  until: number
}

/** "2026-11-23T17:38:06": what sacct reads and prints under TZ=UTC. */
export function sacctTime(unixSeconds: number): string {
  return new Date(unixSeconds * 1000).toISOString().slice(0, 19)
}

/**
 * The command that lists every user's jobs that ran in the window, one line each. `confPath` is the
 * cluster's slurm.conf (SLURM_CONF) as the Accounting class passes it to sacctmgr.
 */
export function sacctArgv(window: SacctWindow, opts: {confPath?: string} = {}): string[] {
  if (!(Number.isInteger(window.since) && Number.isInteger(window.until) && window.since < window.until)) {
    throw new RangeError(`sacct window must be whole seconds with since < until (got ${window.since} .. ${window.until})`)
  }
  const env = ['TZ=UTC', ...(opts.confPath ? [`SLURM_CONF=${opts.confPath}`] : [])]
  return [
    'env',
    ...env,
    'sacct',
    '--allusers',
    '--allocations',
    '--parsable2',
    '--noheader',
    `--starttime=${sacctTime(window.since)}`,
    `--endtime=${sacctTime(window.until)}`,
    `--format=${SACCT_FIELDS.join(',')}`,
  ]
}

/** MiB per unit letter, as Slurm's convert_num_unit writes memory (powers of 1024). */
const MEM_UNIT: Record<string, number> = {K: 1 / 1024, M: 1, G: 1024, T: 1024 ** 2, P: 1024 ** 3, E: 1024 ** 4}

/** "7G" → 7168, "7500M" → 7500, "1.50T" → 1572864, "0" → 0 (MiB); undefined when unreadable. */
export function parseMemMB(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)([KMGTPE]?)$/.exec(text)
  if (!m) return undefined
  return Number(m[1]) * (m[2] === '' ? 1 : MEM_UNIT[m[2]])
}

export interface AllocTres {
  cpus: number
  gpus: number
  memMB: number
  nodes: number
}

/** AllocTRES text → the counts usage reports use (missing ones are 0; other TRES ignored). */
export function parseAllocTres(text: string): AllocTres | {error: string} {
  const out: AllocTres = {cpus: 0, gpus: 0, memMB: 0, nodes: 0}
  let typedGpus = 0
  let untypedGpus: number | undefined
  if (text === '') return out
  for (const item of text.split(',')) {
    const eq = item.indexOf('=')
    if (eq <= 0) return {error: `"${item}" is not name=value`}
    const name = item.slice(0, eq)
    const value = item.slice(eq + 1)
    if (name === 'mem') {
      const mb = parseMemMB(value)
      if (mb === undefined) return {error: `mem=${value} is not a memory size`}
      out.memMB = mb
      continue
    }
    if (name !== 'cpu' && name !== 'node' && name !== 'gres/gpu' && !name.startsWith('gres/gpu:')) continue
    if (!/^\d+$/.test(value)) return {error: `${name}=${value} is not a count`}
    const n = Number(value)
    if (name === 'cpu') out.cpus = n
    else if (name === 'node') out.nodes = n
    else if (name === 'gres/gpu') untypedGpus = n
    else typedGpus += n
  }
  out.gpus = untypedGpus ?? typedGpus
  return out
}

/** "2026-11-23T17:38:06" (UTC) → Unix seconds; undefined for Unknown, None and anything else. */
export function parseSacctTime(text: string): number | undefined {
  // Fixed positions: faster than a regular expression over 100,000 lines, and as strict.
  if (text.length !== 19 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return undefined
  const n = (from: number, to: number) => {
    let v = 0
    for (let i = from; i < to; i++) {
      const d = text.charCodeAt(i) - 48
      if (d < 0 || d > 9) return Number.NaN
      v = v * 10 + d
    }
    return v
  }
  const ms = Date.UTC(n(0, 4), n(5, 7) - 1, n(8, 10), n(11, 13), n(14, 16), n(17, 19))
  return Number.isNaN(ms) ? undefined : ms / 1000
}

/**
 * sacct's output (the argv above) → jobs that started, in output order. Pending jobs (Start=Unknown),
 * jobs cancelled before any node was allocated, and any job step line are left out. A line that does not read as this format throws a remote
 * error naming the line: the report would be wrong, not just incomplete.
 */
export function parseSacct(text: string): SacctJob[] {
  const jobs: SacctJob[] = []
  const lines = text.split('\n')
  for (const [i, raw] of lines.entries()) {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (line === '') continue
    const f = line.split('|')
    const bad = (why: string) =>
      remoteError(`cannot read sacct's output, line ${i + 1}: ${why}\n  ${line.slice(0, 200)}`, {
        hint: `run \`sacct --allocations --parsable2 --format=${SACCT_FIELDS.join(',')}\` on the management node to see what it prints`,
      })
    if (f.length !== SACCT_FIELDS.length) throw bad(`${f.length} fields, expected ${SACCT_FIELDS.length} (${SACCT_FIELDS.join('|')})`)
    const [jobId, user, account, partition, nodeList, allocTres, elapsedRaw, startText, endText, stateText] = f
    if (jobId.includes('.')) continue
    const start = parseSacctTime(startText)
    if (start === undefined) {
      if (startText === 'Unknown' || startText === 'None') continue
      throw bad(`Start "${startText}" is not a time`)
    }
    const end = parseSacctTime(endText)
    if (end === undefined && endText !== 'Unknown' && endText !== 'None') throw bad(`End "${endText}" is not a time`)
    if (!/^\d+$/.test(elapsedRaw)) throw bad(`ElapsedRaw "${elapsedRaw}" is not a number of seconds`)
    const tres = parseAllocTres(allocTres)
    if ('error' in tres) throw bad(`AllocTRES: ${tres.error}`)
    const nodes = nodeList === 'None assigned' || nodeList === '(null)' ? '' : nodeList
    // Cancelled while pending: a time stamp, but no node ever allocated — it used nothing.
    if (nodes === '' && tres.nodes === 0) continue
    jobs.push({
      jobId,
      user,
      account,
      partition,
      nodeList: nodes,
      cpus: tres.cpus,
      gpus: tres.gpus,
      memMB: tres.memMB,
      nodes: tres.nodes,
      elapsedSeconds: Number(elapsedRaw),
      start,
      ...(end === undefined ? {} : {end}),
      state: stateText.split(' ', 1)[0],
    })
  }
  return jobs
}
