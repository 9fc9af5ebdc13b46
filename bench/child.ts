// Child processes for the benches that drive a real cluster: every one bounded (SIGKILL at its
// timeout, reported as exit 124), timed, run from the repository root.
import {execFile} from 'node:child_process'
import {join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'

export const ROOT = resolve(import.meta.dirname, '..')
export const CITC = join(ROOT, 'bin/run.js')

export interface Run {
  code: number
  stdout: string
  stderr: string
  ms: number
}

export function run(cmd: string, args: string[], opts: {input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv} = {}): Promise<Run> {
  const t0 = performance.now()
  const timeout = opts.timeoutMs ?? 120_000
  return new Promise((done) => {
    const child = execFile(cmd, args, {timeout, killSignal: 'SIGKILL', maxBuffer: 1 << 30, encoding: 'utf8', env: opts.env ?? process.env, cwd: ROOT}, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : error.killed ? 124 : 1) : 0
      if (error?.killed) stderr += `\n(killed after ${timeout} ms)`
      done({code, stdout, stderr, ms: performance.now() - t0})
    })
    child.stdin?.on('error', () => {}) // a child that exits early closes its stdin: reported by its exit code
    child.stdin?.end(opts.input ?? '')
  })
}

/** run(), and an error with the command and its last lines when it exits non-zero. */
export async function check(cmd: string, args: string[], opts: Parameters<typeof run>[2] = {}): Promise<Run> {
  const r = await run(cmd, args, opts)
  if (r.code !== 0) throw new Error(`${cmd} ${args.slice(0, 8).join(' ')}${args.length > 8 ? ' …' : ''} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n').slice(-5).join('\n')}`)
  return r
}

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`
