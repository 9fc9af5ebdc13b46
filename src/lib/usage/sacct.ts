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

/** The whole number written in text[from, to), or -1 if it is empty or holds anything but digits. */
function digits(text: string, from: number, to: number): number {
  if (from >= to) return -1
  let v = 0
  for (let i = from; i < to; i++) {
    const d = text.charCodeAt(i) - 48
    if (d < 0 || d > 9) return -1
    v = v * 10 + d
  }
  return v
}

export interface AllocTres {
  cpus: number
  gpus: number
  memMB: number
  nodes: number
}

/** AllocTRES text → the counts usage reports use (missing ones are 0; other TRES ignored). */
export function parseAllocTres(text: string): AllocTres | {error: string} {
  // A scan with indexOf rather than split and regular expressions: this runs once per job.
  let cpus = 0
  let nodes = 0
  let memMB = 0
  let typedGpus = 0
  let untypedGpus = -1
  for (let from = 0; from < text.length; ) {
    let comma = text.indexOf(',', from)
    if (comma < 0) comma = text.length
    const eq = text.indexOf('=', from)
    if (eq <= from || eq >= comma) return {error: `"${text.slice(from, comma)}" is not name=value`}
    const name = text.slice(from, eq)
    const gpu = name === 'gres/gpu' ? 1 : name.startsWith('gres/gpu:') ? 2 : 0
    if (name === 'mem') {
      const value = text.slice(eq + 1, comma)
      const mb = parseMemMB(value)
      if (mb === undefined) return {error: `mem=${value} is not a memory size`}
      memMB = mb
    } else if (name === 'cpu' || name === 'node' || gpu > 0) {
      const n = digits(text, eq + 1, comma)
      if (n < 0) return {error: `${name}=${text.slice(eq + 1, comma)} is not a count`}
      if (name === 'cpu') cpus = n
      else if (name === 'node') nodes = n
      else if (gpu === 1) untypedGpus = n
      else typedGpus += n
    }
    from = comma + 1
  }
  return {cpus, gpus: untypedGpus >= 0 ? untypedGpus : typedGpus, memMB, nodes}
}

/** Unix seconds of midnight UTC of each "YYYY-MM-DD" seen: a report spans few days, and Date.UTC is slow. */
const dayStarts = new Map<string, number>()

/** "2026-11-23T17:38:06" (UTC) → Unix seconds; undefined for Unknown, None and anything else. */
export function parseSacctTime(text: string): number | undefined {
  // Fixed positions: faster than a regular expression over 100,000 lines, and as strict.
  if (text.length !== 19 || text[4] !== '-' || text[7] !== '-' || text[10] !== 'T' || text[13] !== ':' || text[16] !== ':') return undefined
  const date = text.slice(0, 10)
  let day = dayStarts.get(date)
  if (day === undefined) {
    const y = digits(text, 0, 4)
    const mo = digits(text, 5, 7)
    const d = digits(text, 8, 10)
    const ms = Date.UTC(y, mo - 1, d)
    // Date.UTC rolls 2026-02-30 over to March: a date that does not exist is not a time.
    if (y < 0 || mo < 1 || d < 1 || new Date(ms).getUTCDate() !== d || new Date(ms).getUTCMonth() !== mo - 1) return undefined
    day = ms / 1000
    if (dayStarts.size < 100_000) dayStarts.set(date, day)
  }
  const h = digits(text, 11, 13)
  const m = digits(text, 14, 16)
  const s = digits(text, 17, 19)
  if (h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 59) return undefined
  return day + h * 3600 + m * 60 + s
}

function lineError(n: number, line: string, why: string) {
  return remoteError(`cannot read sacct's output, line ${n}: ${why}\n  ${line.slice(0, 200)}`, {
    hint: `run \`sacct --allocations --parsable2 --format=${SACCT_FIELDS.join(',')}\` on the management node to see what it prints`,
  })
}

/**
 * sacct's output (the argv above) → jobs that started, in output order. Pending jobs (Start=Unknown),
 * jobs cancelled before any node was allocated, and any job step line are left out. A line that does
 * not read as this format throws a remote error naming the line: the report would be wrong, not just
 * incomplete.
 */
export function parseSacct(text: string): SacctJob[] {
  const jobs: SacctJob[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw
    if (line === '') continue
    const f = line.split('|')
    if (f.length !== SACCT_FIELDS.length) throw lineError(i + 1, line, `${f.length} fields, expected ${SACCT_FIELDS.length} (${SACCT_FIELDS.join('|')})`)
    // By index, in SACCT_FIELDS order (array destructuring allocates an iterator per line).
    const jobId = f[0]
    const nodeList = f[4]
    const elapsedRaw = f[6]
    const startText = f[7]
    const endText = f[8]
    const stateText = f[9]
    if (jobId.includes('.')) continue
    const start = parseSacctTime(startText)
    if (start === undefined) {
      if (startText === 'Unknown' || startText === 'None') continue
      throw lineError(i + 1, line, `Start "${startText}" is not a time`)
    }
    const end = parseSacctTime(endText)
    if (end === undefined && endText !== 'Unknown' && endText !== 'None') throw lineError(i + 1, line, `End "${endText}" is not a time`)
    const elapsedSeconds = digits(elapsedRaw, 0, elapsedRaw.length)
    if (elapsedSeconds < 0) throw lineError(i + 1, line, `ElapsedRaw "${elapsedRaw}" is not a number of seconds`)
    const tres = parseAllocTres(f[5])
    if ('error' in tres) throw lineError(i + 1, line, `AllocTRES: ${tres.error}`)
    const nodes = nodeList === 'None assigned' || nodeList === '(null)' ? '' : nodeList
    // Cancelled while pending: a time stamp, but no node ever allocated — it used nothing.
    if (nodes === '' && tres.nodes === 0) continue
    const space = stateText.indexOf(' ')
    // Every job has the same properties in the same order (`end` undefined while it runs): one
    // object shape for the engine, which keeps aggregation fast.
    jobs.push({
      jobId,
      user: f[1],
      account: f[2],
      partition: f[3],
      nodeList: nodes,
      cpus: tres.cpus,
      gpus: tres.gpus,
      memMB: tres.memMB,
      nodes: tres.nodes,
      elapsedSeconds,
      start,
      end,
      state: space < 0 ? stateText : stateText.slice(0, space),
    })
  }
  return jobs
}
