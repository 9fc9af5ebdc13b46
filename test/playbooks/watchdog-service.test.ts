// The watchdog as the citc_watchdog role deploys it, with the role's default settings (citc_sync_every
// 60): its systemd service and timer checked by `systemd-analyze verify`, and — where systemd does not
// run — its init script (roles/common/templates/citc-service.init.j2) started, left alone and stopped
// for real. The files are rendered by ansible-playbook from the role's own tasks (their templates and
// variables, read from tasks/main.yml), into a temp root: only the paths move there. The node-sync
// program citc_programs installs execs a stand-in citc (test/helpers/node-sync-standin.ts) that runs
// citc's own --every loop with a pass that records itself; everything between the init script and
// that loop (start-stop-daemon, the pid file, --chuid to the Slurm user, the program) is real.
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse, stringify} from 'yaml'

import {pidAlive, sleep} from '../../src/lib/proc.js'
import {waitFor} from '../helpers/wait.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const PLAYBOOKS = join(ROOT, 'playbooks')
const ROLE = join(PLAYBOOKS, 'roles/citc_watchdog')
const STANDIN = join(ROOT, 'test/helpers/node-sync-standin.ts')
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
const EVERY_S = Number((parse(readFileSync(join(ROLE, 'defaults/main.yml'), 'utf8')) as {citc_sync_every: number}).citc_sync_every)

let work: string
let root: string
let runs: string
/** The rendered files, by the path the role gives them (under root). */
const file = (p: string) => join(root, p)
let initScript: string
let pidFile: string

type Task = {name: string; loop?: unknown; vars?: Record<string, unknown>; 'ansible.builtin.template'?: {src: string; dest: string; mode?: string}}
const roleTask = (tasksFile: string, name: string): Task => {
  const t = (parse(readFileSync(tasksFile, 'utf8')) as Task[]).find((x) => x.name === name)
  if (!t?.['ansible.builtin.template']) throw new Error(`no template task "${name}" in ${tasksFile}`)
  return t
}

/**
 * The role's template tasks as a playbook writing under `root` (dest prefixed, owner and conditions
 * dropped); its variables from group_vars and the roles' defaults, the paths moved by extra vars
 * (vars_files would win over play vars: only -e moves them).
 */
function renderPlaybook(nodeBin: string): string {
  const units = roleTask(join(ROLE, 'tasks/main.yml'), "Install the watchdog's systemd units")
  const init = roleTask(join(ROLE, 'tasks/main.yml'), "Install the watchdog's service (no systemd)")
  const moved = (t: Task, role: string, extra: Record<string, unknown> = {}) => {
    const tpl = t['ansible.builtin.template']!
    const src = tpl.src.replace('{{ role_path }}', role)
    return {
      name: t.name,
      'ansible.builtin.template': {src: src.startsWith('/') ? src : join(role, 'templates', src), dest: `${root}${tpl.dest}`, mode: tpl.mode},
      ...(t.loop ? {loop: t.loop} : {}),
      vars: {...t.vars, ...extra},
    }
  }
  return stringify([
    {
      hosts: 'localhost',
      connection: 'local',
      gather_facts: false,
      vars_files: [join(PLAYBOOKS, 'group_vars/all.yml'), join(PLAYBOOKS, 'roles/citc_programs/defaults/main.yml'), join(ROLE, 'defaults/main.yml')],
      tasks: [
        moved(units, ROLE),
        moved(init, ROLE),
        // The watchdog's program, as citc_programs installs each node program (its task's template and item).
        {
          name: 'Install the node-sync program',
          'ansible.builtin.template': {src: join(PLAYBOOKS, 'roles/citc_programs/templates/node-program.sh.j2'), dest: `${root}/usr/local/libexec/citc/{{ item.file }}`, mode: '0755'},
          loop: "{{ citc_node_programs | selectattr('file', 'equalto', 'node-sync') | list }}",
          vars: {node_path: nodeBin},
        },
      ],
    },
  ])
}

function sh(args: string[], env: NodeJS.ProcessEnv = process.env, timeout = 60_000) {
  const r = spawnSync(args[0], args.slice(1), {encoding: 'utf8', env, timeout, killSignal: 'SIGKILL'})
  return {status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? '', out: `${r.stdout ?? ''}${r.stderr ?? ''}`}
}

/** The init script as root runs it (service(8) gives it no more environment than this). */
const service = (verb: string) =>
  sh([initScript, verb], {PATH: '/usr/sbin:/usr/bin:/sbin:/bin', CITC_STANDIN_RUNS: runs, CITC_STANDIN_FAIL: '1'})
const loopPid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8').trim()) : undefined)
/** Every process running the stand-in (whatever started it): one loop, or none. */
function loops(): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(STANDIN)
      } catch {
        return false
      }
    })
    .map(Number)
}
const runLines = () => (existsSync(runs) ? readFileSync(runs, 'utf8').trim().split('\n').filter(Boolean).map((l) => l.split(' ').map(Number)) : [])
const stateOf = (pid: number) => /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1]

/**
 * The init script's start run under a parent that never reaps (as pid 1 of many containers): a
 * subreaper, so the loop start-stop-daemon leaves behind is its child, and once killed stays a zombie.
 */
const NON_REAPING = 'import ctypes, subprocess, sys, time; ctypes.CDLL(None).prctl(36, 1, 0, 0, 0); subprocess.run(sys.argv[1:]); print("started", flush=True); time.sleep(600)'
const inits: ChildProcess[] = []
async function startUnderNonReapingInit(): Promise<ChildProcess> {
  const init = spawn('python3', ['-c', NON_REAPING, initScript, 'start'], {env: {PATH: '/usr/sbin:/usr/bin:/sbin:/bin', CITC_STANDIN_RUNS: runs}, stdio: ['ignore', 'pipe', 'inherit']})
  inits.push(init)
  let out = ''
  init.stdout!.on('data', (d: Buffer) => (out += d.toString()))
  await waitFor('the start under the non-reaping init', () => out.includes('started'), 20_000, 50)
  return init
}

const userOf = (pid: number) => Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1])

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error('this test needs root (the init script starts the loop as the Slurm user)')
  work = mkdtempSync(join(tmpdir(), 'citc-watchdog-'))
  // The Slurm user runs the loop: it must reach the stand-in and write its record.
  chmodSync(work, 0o755)
  root = join(work, 'root')
  mkdirSync(join(root, 'etc/systemd/system'), {recursive: true})
  mkdirSync(join(root, 'etc/init.d'), {recursive: true})
  mkdirSync(join(root, 'usr/local/libexec/citc'), {recursive: true})
  runs = join(work, 'runs', 'runs.log')
  mkdirSync(dirname(runs), {mode: 0o777})
  chmodSync(dirname(runs), 0o777)
  // The node binary the program execs: this one, loading TypeScript (the stand-in is a .ts file).
  const nodeBin = join(work, 'node-tsx')
  writeFileSync(nodeBin, `#!/bin/sh\nexec ${process.execPath} --import ${TSX} "$@"\n`, {mode: 0o755})
  const vars = {
    // A cloud's management node: the loop runs as slurm (group_vars' slurm_user).
    provider: 'aws',
    cluster_name: 'demo',
    citc_programs_dir: `${root}/usr/local/libexec/citc`,
    citc_run_dir: `${root}/run/citc`,
    citc_bin: STANDIN,
    citc_node_bin: nodeBin,
  }
  const playbook = join(work, 'render.yml')
  writeFileSync(playbook, renderPlaybook(nodeBin))
  writeFileSync(join(work, 'vars.json'), JSON.stringify(vars))
  const r = spawnSync('ansible-playbook', ['-i', 'localhost,', '-e', `@${join(work, 'vars.json')}`, playbook], {encoding: 'utf8', env: {...process.env, ANSIBLE_CONFIG: join(PLAYBOOKS, 'ansible.cfg')}, timeout: 120_000, killSignal: 'SIGKILL'})
  if (r.status !== 0) throw new Error(`rendering the watchdog's files failed:\n${`${r.stdout}${r.stderr}`.slice(-3000)}`)
  initScript = file('/etc/init.d/citc-node-sync')
  pidFile = file('/run/citc/citc-node-sync.pid')
  // Never run a script that would act on this machine's own watchdog (a cluster may live here).
  const text = readFileSync(initScript, 'utf8')
  if (!text.includes(`PIDFILE=${pidFile}\n`) || !text.includes(`PROGRAM=${root}/usr/local/libexec/citc/node-sync\n`)) {
    initScript = ''
    throw new Error(`the rendered init script does not use the test's paths under ${root}:\n${text}`)
  }
}, 180_000)

afterAll(async () => {
  if (initScript && existsSync(initScript)) service('stop')
  for (const pid of loops()) process.kill(pid, 'SIGKILL')
  for (const init of inits) init.kill('SIGKILL')
  if (work) rmSync(work, {recursive: true, force: true})
})

describe('the watchdog under systemd: its units as rendered', () => {
  it('run the node-sync program every citc_sync_every seconds, as the Slurm user, and pass systemd-analyze verify', () => {
    const unit = readFileSync(file('/etc/systemd/system/citc-node-sync.service'), 'utf8')
    const timer = readFileSync(file('/etc/systemd/system/citc-node-sync.timer'), 'utf8')
    expect(unit).toContain(`ExecStart=${root}/usr/local/libexec/citc/node-sync\n`)
    expect(unit).toMatch(/^User=slurm$/m)
    expect(unit).toMatch(/^Type=oneshot$/m)
    expect(timer).toMatch(new RegExp(`^OnUnitInactiveSec=${EVERY_S}s$`, 'm'))
    // The program both run: citc's node sync, with its whole description in the header.
    const program = readFileSync(file('/usr/local/libexec/citc/node-sync'), 'utf8')
    expect(program).toContain('(citc role citc_programs): watchdog (run every minute by citc-node-sync, not by Slurm) for cluster demo.')
    expect(program).toMatch(new RegExp(`^exec ${work}/node-tsx ${STANDIN} node sync "\\$@"$`, 'm'))
    if (sh(['sh', '-c', 'command -v systemd-analyze']).status !== 0) throw new Error('systemd-analyze is missing: .ci/run must install the systemd package')
    const verify = sh(['systemd-analyze', 'verify', '--man=no', file('/etc/systemd/system/citc-node-sync.timer'), file('/etc/systemd/system/citc-node-sync.service')])
    expect(verify.status, verify.out).toBe(0)
    // verify reports problems on stderr and may still exit 0 for some (unknown keys, bad values).
    expect(verify.out.split('\n').filter((l) => l.includes('citc-node-sync')), verify.out).toEqual([])
  })
})

describe('the watchdog without systemd: its init script, on its own', () => {
  let first: number

  it('starts one loop as the Slurm user, which runs a pass at once', async () => {
    const start = service('start')
    expect(start.status, start.out).toBe(0)
    first = loopPid()!
    expect(first).toBeGreaterThan(0)
    expect(loops()).toEqual([first])
    expect(userOf(first)).toBe(Number(sh(['id', '-u', 'slurm']).stdout.trim()))
    // The program execs node: the pid in the file is the loop itself.
    expect(readFileSync(`/proc/${first}/cmdline`, 'utf8').split('\0')).toEqual(expect.arrayContaining([STANDIN, 'node', 'sync', '--every', String(EVERY_S)]))
    await waitFor('the first pass', () => runLines().length === 1, 30_000, 100)
    expect(service('status')).toMatchObject({status: 0, stdout: `citc-node-sync is running (pid ${first})\n`})
  }, 60_000)

  it('a second start leaves the one loop alone', () => {
    const again = service('start')
    expect(again).toMatchObject({status: 0, stdout: 'citc-node-sync is already running\n'})
    expect(loops()).toEqual([first])
    expect(loopPid()).toBe(first)
  })

  it(`runs again ${EVERY_S} s after a pass that failed`, async () => {
    // Pass 1 failed on purpose (CITC_STANDIN_FAIL=1); the loop must neither die nor hurry.
    await waitFor(
      'the second pass',
      () => {
        if (!pidAlive(first)) throw new Error(`the loop (pid ${first}) died after ${runLines().length} pass(es)`)
        return runLines().length >= 2
      },
      (EVERY_S + 30) * 1000,
      250,
    )
    const [[t1, pid1, n1], [t2, pid2, n2]] = runLines()
    expect([n1, n2, pid1, pid2]).toEqual([1, 2, first, first])
    expect(t2 - t1).toBeGreaterThanOrEqual(EVERY_S * 1000)
    expect(t2 - t1).toBeLessThan((EVERY_S + 15) * 1000)
    expect(loops()).toEqual([first])
  }, (EVERY_S + 60) * 1000)

  it('stops: the loop gone, its pid file removed, status says so', async () => {
    const stop = service('stop')
    expect(stop.status, stop.out).toBe(0)
    expect(pidAlive(first)).toBe(false)
    expect(loops()).toEqual([])
    expect(existsSync(pidFile)).toBe(false)
    expect(service('status')).toMatchObject({status: 3, stdout: 'citc-node-sync is not running\n'})
    // A stopped service stays stopped: no pass after the stop.
    const before = runLines().length
    await sleep(1500)
    expect(runLines().length).toBe(before)
  })

  it('after the loop was SIGKILLed (a stale pid file): status, stop and start all work', async () => {
    expect(service('start').status).toBe(0)
    const pid = loopPid()!
    process.kill(pid, 'SIGKILL')
    await waitFor('the killed loop to be gone', () => !pidAlive(pid), 10_000, 50)
    expect(existsSync(pidFile)).toBe(true)
    expect(service('status')).toMatchObject({status: 3, stdout: 'citc-node-sync is not running\n'})
    const stop = service('stop')
    expect(stop.status, stop.out).toBe(0)
    expect(existsSync(pidFile)).toBe(false)
    // And start over a stale pid file (killed again first, without a stop).
    expect(service('start').status).toBe(0)
    const second = loopPid()!
    process.kill(second, 'SIGKILL')
    await waitFor('the killed loop to be gone', () => !pidAlive(second), 10_000, 50)
    const restart = service('start')
    expect(restart.status, restart.out).toBe(0)
    const third = loopPid()!
    expect(third).not.toBe(second)
    expect(loops()).toEqual([third])
    expect(service('stop').status).toBe(0)
    expect(loops()).toEqual([])
  }, 60_000)

  it('under an init that never reaps: a killed loop (a zombie) is not running, start starts another, stop returns at once', async () => {
    const init = await startUnderNonReapingInit()
    const dead = loopPid()!
    expect(Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${dead}/status`, 'utf8'))![1])).toBe(init.pid)
    process.kill(dead, 'SIGKILL')
    await waitFor('the killed loop to be a zombie', () => stateOf(dead) === 'Z', 10_000, 50)
    expect(service('status')).toMatchObject({status: 3, stdout: 'citc-node-sync is not running\n'})
    const start = service('start')
    expect(start.status, start.out).toBe(0)
    const fresh = loopPid()!
    expect(fresh).not.toBe(dead)
    expect(loops()).toEqual([fresh])
    expect(service('stop').status).toBe(0)
    // A loop stopped under that init ends a zombie too: stop must not wait 25 s on it and fail.
    await startUnderNonReapingInit()
    const last = loopPid()!
    const started = Date.now()
    const stop = service('stop')
    expect(stop.status, stop.out).toBe(0)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(stateOf(last)).toBe('Z')
    expect(existsSync(pidFile)).toBe(false)
    expect(loops()).toEqual([])
  }, 60_000)
})
