// citc's PrologSlurmctld script (playbooks/roles/citc_programs/files/prolog-slurmctld) against a real
// slurmctld: it returns at once when the job's nodes are up, waits while they are powered down (up
// to ResumeTimeout), always exits 0 itself — also when slurmctld does not answer — and runs a site's
// own PrologSlurmctld with the job's environment, passing on its exit code.
import {spawn, spawnSync} from 'node:child_process'
import {appendFileSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {removeSharedAnswers} from '../helpers/cold-nodes.js'
import {parseSdiagRpcs} from '../helpers/load-run.js'
import {freePort} from '../helpers/net.js'
import {type SlurmSandbox, slurmSandbox} from '../helpers/slurm.js'

const SCRIPT = join(import.meta.dirname, '../../playbooks/roles/citc_programs/files/prolog-slurmctld')

let sb: SlurmSandbox
let work: string
/**
 * The sandbox's conf with ResumeTimeout=60: a case that should end "at once" is bounded at 30 s, half
 * the wait it must not do, which no loaded machine reaches (bounds of 1–2 s against a 3-s
 * ResumeTimeout did). How long "at once" takes is bench/prolog-slurmctld.ts's figure.
 */
let longConf: string
const NOT_THE_BOUND_MS = 30_000
/** Every slurm.conf the prologs were given: each has its own shared answers under /tmp/citc-prolog. */
const confs: string[] = []

/** slurmctld starts PrologSlurmctld with SIGCHLD blocked (seen in /proc/PID/status): so do the tests. */
const BLOCK_SIGCHLD = 'import os, signal, sys; signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD}); os.execv(sys.argv[1], sys.argv[1:])'

/** Run the script as slurmctld does: no environment but SLURM_* variables, SIGCHLD blocked. Bounded. */
function runProlog(env: Record<string, string>, timeoutMs = 30_000): Promise<{code: number | null; ms: number}> {
  if (env.SLURM_CONF && !confs.includes(env.SLURM_CONF)) confs.push(env.SLURM_CONF)
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const child = spawn('/usr/bin/python3', ['-c', BLOCK_SIGCHLD, SCRIPT], {env, stdio: 'ignore'})
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`prolog still running after ${timeoutMs} ms`))
    }, timeoutMs)
    child.on('error', reject)
    child.on('exit', (code) => {
      clearTimeout(timer)
      resolve({code, ms: Date.now() - started})
    })
  })
}

beforeAll(async () => {
  sb = await slurmSandbox('plg')
  work = mkdtempSync(join(tmpdir(), 'citc-prolog-'))
  writeFileSync(
    sb.confPath,
    sb.base +
      [
        'ResumeProgram=/bin/true',
        'SuspendProgram=/bin/true',
        'SuspendTime=600',
        'ResumeTimeout=3',
        'PrivateData=cloud',
        // Powered-down cloud nodes, and one always-on node with no slurmd (never powering up).
        'NodeName=plg-cloud-[1-2] State=CLOUD CPUs=1 RealMemory=100',
        'NodeName=plg-static-1 CPUs=1 RealMemory=100 NodeAddr=127.0.0.1',
        'PartitionName=all Nodes=ALL Default=YES State=UP',
        '',
      ].join('\n'),
  )
  await sb.startController()
  longConf = join(work, 'long.conf')
  writeFileSync(longConf, readFileSync(sb.confPath, 'utf8').replace('ResumeTimeout=3', 'ResumeTimeout=60'))
})

afterAll(async () => {
  for (const conf of confs) removeSharedAnswers(conf)
  await sb?.stop()
  if (work) rmSync(work, {recursive: true, force: true})
})

describe('prolog-slurmctld', () => {
  it('returns at once when none of the job’s nodes is powering up or powered down', async () => {
    const r = await runProlog({SLURM_CONF: longConf, SLURM_JOB_ID: '7', SLURM_JOB_NODELIST: 'plg-static-1'}, 45_000)
    expect(r.code).toBe(0)
    expect(r.ms).toBeLessThan(NOT_THE_BOUND_MS)
  })

  it('waits while a node is powered down, then exits 0 at ResumeTimeout (the job is never failed by it)', async () => {
    const r = await runProlog({SLURM_CONF: sb.confPath, SLURM_JOB_ID: '8', SLURM_JOB_NODELIST: 'plg-cloud-[1-2],plg-static-1'})
    expect(r.code).toBe(0)
    // `date +%s` has whole seconds: a 3-s bound waits 2 to 3 s. The upper bound only says it did not
    // go on waiting (runProlog's own 30 s would end that too); a loaded machine slows the polls.
    expect(r.ms).toBeGreaterThanOrEqual(1900)
    expect(r.ms).toBeLessThan(20_000)
  })

  it('exits 0 soon when slurmctld cannot be reached', async () => {
    const closed = await freePort()
    const conf = join(work, 'unreachable.conf')
    // Two questions of at most 5 s each, then it gives up: about 10 s, more on a loaded machine. The
    // bound it must not wait for is 600 s, so 45 s tells the two apart whatever the load.
    writeFileSync(conf, readFileSync(sb.confPath, 'utf8').replace(/^SlurmctldPort=\d+$/m, `SlurmctldPort=${closed}`).replace('ResumeTimeout=3', 'ResumeTimeout=600'))
    const r = await runProlog({SLURM_CONF: conf, SLURM_JOB_ID: '9', SLURM_JOB_NODELIST: 'plg-cloud-1'}, 55_000)
    expect(r.code).toBe(0)
    expect(r.ms).toBeLessThan(45_000)
  })

  it('runs the site’s own PrologSlurmctld with the job’s environment and passes on its exit code', async () => {
    const marker = join(work, 'site-ran')
    const site = join(work, 'site-prolog.sh')
    writeFileSync(site, `#!/bin/sh\necho "job=$SLURM_JOB_ID nodes=$SLURM_JOB_NODELIST" >> ${marker}\nexit 3\n`, {mode: 0o755})
    const conf = join(work, 'chained.conf')
    writeFileSync(conf, readFileSync(sb.confPath, 'utf8'))
    appendFileSync(conf, `#citc-chained-PrologSlurmctld=${site}\n`)
    const r = await runProlog({SLURM_CONF: conf, SLURM_JOB_ID: '10', SLURM_JOB_NODELIST: 'plg-static-1'})
    expect(readFileSync(marker, 'utf8')).toBe('job=10 nodes=plg-static-1\n')
    expect(r.code).toBe(3)
  })

  it('waits for a site program still running when the nodes are up, and ends with it (SIGCHLD blocked, as slurmctld starts it)', async () => {
    const site = join(work, 'slow-site-prolog.sh')
    writeFileSync(site, '#!/bin/sh\nsleep 1\nexit 0\n', {mode: 0o755})
    const conf = join(work, 'slow-chained.conf')
    writeFileSync(conf, readFileSync(sb.confPath, 'utf8'))
    appendFileSync(conf, `#citc-chained-PrologSlurmctld=${site}\n`)
    // Before: dash's `wait` on a running child never returned with SIGCHLD blocked (jobs stuck CONFIGURING).
    // Waited for the site's 1 s, and ended (a stuck `wait` would run into runProlog's 30 s).
    const r = await runProlog({SLURM_CONF: conf, SLURM_JOB_ID: '12', SLURM_JOB_NODELIST: 'plg-static-1'})
    expect(r.code).toBe(0)
    expect(r.ms).toBeGreaterThanOrEqual(1000)
  })

  it('stops waiting at once when one of the job’s nodes failed to start (DOWN)', async () => {
    // A reason is free text: one that reads like a state must not be taken for the node's.
    expect(sb.scontrol(['update', 'NodeName=plg-cloud-2', 'State=DOWN', 'Reason=citc: start failed: test State=IDLE+CLOUD']).status).toBe(0)
    try {
      const r = await runProlog({SLURM_CONF: longConf, SLURM_JOB_ID: '12', SLURM_JOB_NODELIST: 'plg-cloud-[1-2]'}, 45_000)
      expect(r.code).toBe(0)
      expect(r.ms).toBeLessThan(NOT_THE_BOUND_MS)
    } finally {
      sb.scontrol(['update', 'NodeName=plg-cloud-2', 'State=RESUME'])
    }
  })

  it('ends with a chained program’s failure at once, without waiting for the nodes', async () => {
    const site = join(work, 'site-fails.sh')
    writeFileSync(site, '#!/bin/sh\nexit 5\n', {mode: 0o755})
    const conf = join(work, 'chained-fails.conf')
    writeFileSync(conf, readFileSync(sb.confPath, 'utf8').replace('ResumeTimeout=3', 'ResumeTimeout=60') + `#citc-chained-PrologSlurmctld=${site}\n`)
    const r = await runProlog({SLURM_CONF: conf, SLURM_JOB_ID: '13', SLURM_JOB_NODELIST: 'plg-cloud-1'}, 45_000)
    expect(r.code).toBe(5)
    expect(r.ms).toBeLessThan(NOT_THE_BOUND_MS)
  })

  it('runs a comma-separated chain in order, and never starts itself again through it', async () => {
    const marker = join(work, 'list-ran')
    const a = join(work, 'a.sh')
    const b = join(work, 'b.sh')
    writeFileSync(a, `#!/bin/sh\necho a >> ${marker}\n`, {mode: 0o755})
    writeFileSync(b, `#!/bin/sh\necho b >> ${marker}\n`, {mode: 0o755})
    const conf = join(work, 'list.conf')
    writeFileSync(conf, readFileSync(sb.confPath, 'utf8') + `#citc-chained-PrologSlurmctld=${a},${SCRIPT},${b}\n`)
    const r = await runProlog({SLURM_CONF: conf, SLURM_JOB_ID: '14', SLURM_JOB_NODELIST: 'plg-static-1'})
    expect(r.code).toBe(0)
    expect(readFileSync(marker, 'utf8')).toBe('a\nb\n')
  })

  it('many prologs waiting at once share slurmctld’s answers: a few questions a second, not one each per poll', async () => {
    const rpcs = () => {
      const r = parseSdiagRpcs(spawnSync('sdiag', [], {env: sb.env, encoding: 'utf8', timeout: 20_000}).stdout)
      return (r.REQUEST_NODE_INFO?.count ?? 0) + (r.REQUEST_NODE_INFO_SINGLE?.count ?? 0)
    }
    const before = rpcs()
    const started = Date.now()
    // 20 jobs on powered-down nodes, each waiting to its 3-s bound (polling every 0.25 s: 12 polls each).
    const runs = await Promise.all(Array.from({length: 20}, (_, i) => runProlog({SLURM_CONF: sb.confPath, SLURM_JOB_ID: String(100 + i), SLURM_JOB_NODELIST: 'plg-cloud-[1-2]'})))
    const seconds = (Date.now() - started) / 1000
    const asked = rpcs() - before
    expect(runs.map((r) => r.code)).toEqual(Array(20).fill(0))
    // One question per half second for all of them (and a second one at a slot's edge), not 20 × 12.
    expect(asked).toBeGreaterThan(0)
    expect(asked).toBeLessThanOrEqual(2 * Math.ceil(seconds) + 4)
  })

  it('asks for its own nodes when the shared directory is not its own (another user made it), and still waits and ends', async () => {
    const tmp = join(work, 'tmp-not-ours')
    mkdirSync(join(tmp, 'citc-prolog'), {recursive: true, mode: 0o700})
    chownSync(join(tmp, 'citc-prolog'), 65_534, 65_534)
    const r = await runProlog({SLURM_CONF: sb.confPath, SLURM_JOB_ID: '15', SLURM_JOB_NODELIST: 'plg-cloud-1', TMPDIR: tmp})
    expect(r.code).toBe(0)
    expect(r.ms).toBeGreaterThanOrEqual(1900)
    expect(readdirSync(join(tmp, 'citc-prolog'))).toEqual([])
    const up = await runProlog({SLURM_CONF: longConf, SLURM_JOB_ID: '16', SLURM_JOB_NODELIST: 'plg-static-1', TMPDIR: tmp}, 45_000)
    expect(up.code).toBe(0)
    expect(up.ms).toBeLessThan(NOT_THE_BOUND_MS)
  })

  it('does nothing without a node list', async () => {
    const r = await runProlog({SLURM_CONF: longConf, SLURM_JOB_ID: '11'}, 45_000)
    expect(r.code).toBe(0)
    expect(r.ms).toBeLessThan(NOT_THE_BOUND_MS)
  })
})
