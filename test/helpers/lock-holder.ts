// Another citc command holding a cluster's lock, as a real process: a child `node -e` takes the lock
// through src/lib/cluster/lock.ts (loaded with tsx) and holds it until told to release it, or until it
// is killed by its PID (SIGKILL: it cannot clean up, as a killed citc could not).
import {type ChildProcess, spawn} from 'node:child_process'
import {join} from 'node:path'

import {ROOT} from './cli.js'

const LOCK_TS = join(ROOT, 'src/lib/cluster/lock.ts')

const HOLDER = `
import {acquireLock} from ${JSON.stringify(LOCK_TS)}
const [dir, what] = process.argv.slice(1)
const lock = await acquireLock(dir, what)
process.stdout.write('locked\\n')
process.stdin.setEncoding('utf8')
process.stdin.on('data', (d) => {
  if (d.includes('release')) { lock.release(); process.stdout.write('released\\n') }
})
setInterval(() => {}, 1 << 30)
`

export interface LockHolder {
  pid: number
  /** Release the lock (the process keeps running) and wait until it says so. */
  release(): Promise<void>
  /** SIGKILL by PID and wait for the exit: the lock file stays behind. */
  kill(): Promise<void>
}

const WAIT_MS = 20_000

/** Take the lock on `dir` as `what` ("citc finish") in a child process; resolves once it holds it. */
export async function holdLock(dir: string, what: string, children: ChildProcess[]): Promise<LockHolder> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', HOLDER, dir, what], {cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe']})
  children.push(child)
  let out = ''
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d))
  const exited = new Promise<void>((res) => child.once('exit', () => res()))
  const seen = (line: string) =>
    new Promise<void>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`lock holder: no "${line}" in ${WAIT_MS} ms: ${err}`)), WAIT_MS)
      const check = () => {
        if (!out.split('\n').includes(line)) return
        clearTimeout(timer)
        res()
      }
      child.stdout!.on('data', check)
      void exited.then(() => {
        clearTimeout(timer)
        if (out.split('\n').includes(line)) res()
        else rej(new Error(`lock holder exited before "${line}": ${err}`))
      })
      check()
    })
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d))
  await seen('locked')
  const pid = child.pid!
  return {
    pid,
    release: async () => {
      child.stdin!.write('release\n')
      await seen('released')
    },
    kill: async () => {
      process.kill(pid, 'SIGKILL')
      await exited
    },
  }
}

/** SIGKILL every holder still running (by its PID), and wait for each to exit. */
export async function stopHolders(children: ChildProcess[]): Promise<void> {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null && c.pid) {
      const gone = new Promise((res) => c.once('exit', res))
      process.kill(c.pid, 'SIGKILL')
      await gone
    }
  }
}
