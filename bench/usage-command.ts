// The whole `citc usage` command over 100,000 jobs in a real slurmdbd (goal: < 5 s). Inserts 100,000
// synthetic COMPLETED jobs straight into the cluster's job table in MariaDB (rows shaped like a real
// job the cluster left there: real associations, users, nodes and TRES ids; id_job from 5,000,000 up,
// in the last 20 days), times `citc usage --since 30d --json` (and --by user, --by day, --csv) and
// bare sacct with the argv citc uses (sacctArgv), then deletes the rows and checks the count is back.
//
// It CHANGES THE CLUSTER'S ACCOUNTING DATABASE for the duration (the rows are removed at the end; they
// are older than slurmdbd's last rollup, so no usage table is touched), so it runs only as root on the
// cluster's management node (MariaDB's root through the unix socket), with both flags:
//   npx tsx bench/usage-command.ts --cluster NAME --yes-i-know-it-changes-the-cluster
// After an interrupted run: the same flags plus --cleanup-only deletes the rows.
import {readFileSync} from 'node:fs'

import {sacctArgv} from '../src/lib/usage/sacct.js'
import {check, CITC, managementNodeOf, median, run, seconds} from './child.js'

const JOBS = 100_000
const BATCH = 5_000
const FIRST_JOB_ID = 5_000_000
const LAST_JOB_ID = FIRST_JOB_ID + JOBS - 1
const JOB_NAME = 'citc-bench-usage' // with the id range, what the cleanup deletes
const DAY = 86_400
const RUNS = 3

// ---- arguments -------------------------------------------------------------------------------
const argv = process.argv.slice(2)
const value = (name: string) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const cluster = value('--cluster') ?? value('-c')
if (!cluster || !argv.includes('--yes-i-know-it-changes-the-cluster')) {
  console.error(
    'usage: npx tsx bench/usage-command.ts --cluster NAME --yes-i-know-it-changes-the-cluster [--cleanup-only]\n' +
      `It inserts ${JOBS} synthetic jobs into the cluster's slurmdbd database (MariaDB), then deletes them.`,
  )
  process.exit(2)
}

// ---- child processes, every one bounded ------------------------------------------------------
const s = seconds

// ---- the cluster, its database and table -----------------------------------------------------
const contract = await managementNodeOf(cluster)
const slurmEnv = {...process.env, SLURM_CONF: contract.confPath}
const setting = (text: string, key: string) => new RegExp(`^\\s*${key}\\s*=\\s*(\\S+)`, 'im').exec(text)?.[1]
const clusterName = setting(readFileSync(contract.confPath, 'utf8'), 'ClusterName')?.toLowerCase()
if (!clusterName) throw new Error(`${contract.confPath} has no ClusterName`)
// slurmdbd.conf stays on the management node, never on the shared filesystem where slurm.conf is.
const dbdConf = readFileSync('/etc/slurm/slurmdbd.conf', 'utf8')
const database = setting(dbdConf, 'StorageLoc') ?? 'slurm_acct_db'
const table = `\`${clusterName}_job_table\``
const ident = /^[A-Za-z0-9_-]+$/
if (!ident.test(database) || !ident.test(clusterName)) throw new Error(`unexpected database or cluster name: ${database}, ${clusterName}`)

/** SQL through root's unix socket; tab-separated rows, no header. */
const sql = async (query: string, timeoutMs = 300_000) => {
  const r = await check('mysql', ['--batch', '--skip-column-names', database], {input: query, timeoutMs})
  return r.stdout.split('\n').filter((l) => l !== '').map((l) => l.split('\t'))
}
const benchRows = async () => Number((await sql(`SELECT COUNT(*) FROM ${table} WHERE id_job BETWEEN ${FIRST_JOB_ID} AND ${LAST_JOB_ID};`))[0][0])
const allRows = async () => Number((await sql(`SELECT COUNT(*) FROM ${table};`))[0][0])

async function cleanup(): Promise<number> {
  const t0 = performance.now()
  // In batches: one huge DELETE holds its locks (and slurmdbd's inserts) for long.
  for (;;) {
    const r = await sql(`DELETE FROM ${table} WHERE id_job BETWEEN ${FIRST_JOB_ID} AND ${LAST_JOB_ID} AND job_name = '${JOB_NAME}' LIMIT 20000; SELECT ROW_COUNT();`)
    if (Number(r[0][0]) === 0) break
  }
  return performance.now() - t0
}

if (argv.includes('--cleanup-only')) {
  await cleanup()
  const left = await benchRows()
  console.log(`rows left in ${database}.${table} from id_job ${FIRST_JOB_ID}..${LAST_JOB_ID}: ${left}`)
  process.exit(left === 0 ? 0 : 1)
}

const before = await allRows()
if ((await benchRows()) > 0) {
  console.error(`${database}.${table} has jobs with id_job ${FIRST_JOB_ID}..${LAST_JOB_ID} already: run with --cleanup-only first`)
  process.exit(1)
}

// ---- what the rows are made of: a real finished job, real associations, nodes, TRES ----------
const columns = (await sql(`DESCRIBE ${table};`)).map((r) => r[0])
const hexRow = await sql(
  `SELECT ${columns.map((c) => `IF(\`${c}\` IS NULL, 'NULL', HEX(CAST(\`${c}\` AS BINARY)))`).join(', ')} FROM ${table} WHERE state = 3 AND time_start > 0 AND nodes_alloc > 0 ORDER BY job_db_inx DESC LIMIT 1;`,
)
if (hexRow.length === 0) throw new Error(`${table} has no finished job to copy: run one (sbatch --wrap true) and try again`)
// Each value as the bytes of its text (UNHEX gives a string: MariaDB converts it to the column's type;
// an X'..' literal would be a number in a numeric column).
const template = new Map(columns.map((c, i) => [c, hexRow[0][i] === 'NULL' ? 'NULL' : `UNHEX('${hexRow[0][i]}')`]))

const assocRows = await sql(`SELECT id_assoc, acct, user FROM \`${clusterName}_assoc_table\` WHERE deleted = 0 AND user <> '' AND acct NOT LIKE 'bench-%';`)
const assocs: {id: number; account: string; user: string; uid: number; gid: number}[] = []
for (const [id, account, user] of assocRows) {
  const pw = await run('getent', ['passwd', user], {timeoutMs: 30_000})
  if (pw.code !== 0) continue // a user the system cannot name: sacct would print a uid
  const f = pw.stdout.trim().split(':')
  assocs.push({id: Number(id), account, user, uid: Number(f[2]), gid: Number(f[3])})
}
if (assocs.length === 0) throw new Error('no user associations with a known uid to charge jobs to')
const nodes = (await check('sinfo', ['--Node', '--noheader', '--format=%N'], {env: slurmEnv, timeoutMs: 60_000})).stdout.split('\n').filter(Boolean).sort()
const uniqueNodes = [...new Set(nodes)]
const tresIds = new Map((await sql(`SELECT id, type, name FROM tres_table WHERE deleted = 0;`)).map(([id, type, name]) => [name ? `${type}/${name}` : type, id]))
const memPerNode = 512
console.log(
  `cluster ${cluster}: ${database}.${table} has ${before} rows; ${assocs.length} user associations (${assocs.map((a) => `${a.account}/${a.user}`).join(', ')}), ${uniqueNodes.length} nodes (node ${process.version})`,
)

// mulberry32: a seeded generator (the same rows every run).
let seed = 13
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32
}
const pick = (n: number) => Math.floor(rand() * n)
const q = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
const nodeRange = (first: number, width: number): string => {
  if (width === 1) return uniqueNodes[first]
  const m = /^(.*?)(\d+)$/.exec(uniqueNodes[first])
  const last = /^(.*?)(\d+)$/.exec(uniqueNodes[first + width - 1])
  if (!m || !last || m[1] !== last[1]) return uniqueNodes.slice(first, first + width).join(',')
  return `${m[1]}[${m[2]}-${last[2]}]`
}

const now = Math.floor(Date.now() / 1000)
const overrides = (i: number): Map<string, string> => {
  const a = assocs[pick(assocs.length)]
  const width = rand() < 0.9 ? 1 : 2
  const first = pick(uniqueNodes.length - width + 1)
  const cpus = width // 1 CPU per local node
  const start = now - 20 * DAY + pick(20 * DAY - 3 * 3600)
  const end = start + 1 + pick(2 * 3600)
  const submit = start - pick(60)
  const tres = [['cpu', cpus], ['mem', memPerNode * width], ['node', width], ['billing', cpus]]
    .filter(([k]) => tresIds.has(k as string))
    .map(([k, v]) => `${tresIds.get(k as string)}=${v}`)
    .join(',')
  return new Map([
    ['mod_time', String(now)],
    ['deleted', '0'],
    ['account', q(a.account)],
    ['cpus_req', String(cpus)],
    ['exit_code', '0'],
    ['job_name', q(JOB_NAME)],
    ['id_assoc', String(a.id)],
    ['id_job', String(FIRST_JOB_ID + i)],
    ['id_user', String(a.uid)],
    ['id_group', String(a.gid)],
    ['nodelist', q(nodeRange(first, width))],
    ['nodes_alloc', String(width)],
    ['node_inx', q(width === 1 ? String(first) : `${first}-${first + width - 1}`)],
    ['state', '3'],
    ['time_submit', String(submit)],
    ['time_eligible', String(submit)],
    ['time_start', String(start)],
    ['time_end', String(end)],
    ['tres_alloc', q(tres)],
    ['tres_req', q(tres)],
    ['submit_line', q('sbatch --wrap true # citc bench/usage-command.ts')],
    ['work_dir', q('/tmp')],
  ])
}
const insertCols = columns.filter((c) => c !== 'job_db_inx')
const rowSql = (i: number) => {
  const o = overrides(i)
  return `(${insertCols.map((c) => o.get(c) ?? template.get(c)).join(',')})`
}

let failed = false
const figures: [string, string, string][] = []
try {
  // ---- insert, 5,000 rows per statement --------------------------------------------------------
  const t0 = performance.now()
  for (let b = 0; b < JOBS; b += BATCH) {
    const values = Array.from({length: Math.min(BATCH, JOBS - b)}, (_, k) => rowSql(b + k)).join(',\n')
    await sql(`INSERT INTO ${table} (${insertCols.map((c) => `\`${c}\``).join(',')}) VALUES\n${values};`)
  }
  const inserted = await benchRows()
  console.log(`insert ${JOBS} jobs (${JOBS / BATCH} statements of ${BATCH})   ${s(performance.now() - t0)}  rows now ${inserted}`)
  if (inserted !== JOBS) throw new Error(`inserted ${inserted} rows, expected ${JOBS}`)

  // ---- bare sacct with citc's argv, over the same window as --since 30d ------------------------
  const window = {since: now - 30 * DAY, until: now}
  const sacct = sacctArgv(window, {confPath: contract.confPath})
  const sacctMs: number[] = []
  let sacctLines = 0
  let sacctBytes = 0
  for (let i = 0; i < RUNS; i++) {
    const r = await check(sacct[0], sacct.slice(1), {timeoutMs: 600_000})
    sacctMs.push(r.ms)
    sacctLines = r.stdout.split('\n').filter(Boolean).length
    sacctBytes = r.stdout.length
  }
  console.log(`sacct (citc's argv), 30 days              median ${s(median(sacctMs))}  (${sacctMs.map(s).join(', ')})  ${sacctLines} lines, ${(sacctBytes / 1e6).toFixed(1)} MB`)
  figures.push(['bare sacct (citc argv)', s(median(sacctMs)), `${sacctLines} lines`])

  const start = await run(process.execPath, [CITC, '--version'], {timeoutMs: 60_000})
  console.log(`citc --version (CLI start)                 ${s(start.ms)}`)

  // ---- the whole command --------------------------------------------------------------------
  const variants: [string, string[]][] = [
    ['usage --json (by account)', ['--json']],
    ['usage --by user --json', ['--by', 'user', '--json']],
    ['usage --by day --json', ['--by', 'day', '--json']],
    ['usage --csv (by account)', ['--csv']],
  ]
  for (const [label, extra] of variants) {
    const ms: number[] = []
    let note = ''
    for (let i = 0; i < RUNS; i++) {
      const r = await run(process.execPath, [CITC, 'usage', '-c', cluster, '--since', '30d', ...extra], {timeoutMs: 15 * 60_000})
      if (r.code !== 0) throw new Error(`citc ${label} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n')}`)
      ms.push(r.ms)
      if (extra.includes('--json')) {
        const doc = JSON.parse(r.stdout) as {rows: unknown[]; totals: {jobs: number; cpuHours: number}}
        if (doc.totals.jobs < JOBS) throw new Error(`${label}: totals.jobs ${doc.totals.jobs} < ${JOBS}`)
        note = `jobs ${doc.totals.jobs}, ${doc.rows.length} rows, ${Math.round(doc.totals.cpuHours)} CPU-hours`
      } else {
        note = `${r.stdout.split('\n').filter(Boolean).length} CSV lines`
      }
    }
    const m = median(ms)
    console.log(`${label.padEnd(42)} median ${s(m)}  (${ms.map(s).join(', ')})  ${note}  goal < 5 s: ${m < 5000 ? 'met' : 'MISSED'}`)
    figures.push([label, s(m), `${note}; citc's own share ≈ ${s(m - median(sacctMs))}`])
  }
} catch (error) {
  failed = true
  console.error(`FAILED: ${(error as Error).message}`)
} finally {
  try {
    const ms = await cleanup()
    console.log(`delete the ${JOBS} rows                      ${s(ms)}`)
  } catch (error) {
    failed = true
    console.error(`cleanup FAILED: ${(error as Error).message}\nrun again with --cleanup-only`)
  }
}
const after = await allRows()
console.log(`${database}.${table}: ${after} rows after cleanup (${before} before): ${after === before ? 'as before' : 'NOT as before'}`)
if (after !== before || (await benchRows()) !== 0) failed = true

console.log(`\n${'command'.padEnd(30)} ${'median'.padStart(8)}  notes`)
for (const [a, b, c] of figures) console.log(`${a.padEnd(30)} ${b.padStart(8)}  ${c}`)
process.exit(failed ? 1 : 0)
