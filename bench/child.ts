// Child processes for the benches that drive a real cluster: every one bounded (SIGKILL at its
// timeout, reported as exit 124), timed, run from the repository root.
import {execFile} from 'node:child_process'
import {readFileSync} from 'node:fs'
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

/** cluster.json of `cluster`, which must be a citc cluster whose management node is this machine; else the bench stops. */
export async function managementNodeOf(cluster: string): Promise<{name: string; confPath: string}> {
  const list = await check(process.execPath, [CITC, 'cluster', 'list', '--json'], {timeoutMs: 60_000})
  const known = (JSON.parse(list.stdout) as {clusters: {name: string}[]}).clusters.map((c) => c.name)
  if (!known.includes(cluster)) {
    console.error(`no citc cluster named ${JSON.stringify(cluster)} (citc knows: ${known.join(', ') || 'none'})`)
    process.exit(5)
  }
  const contract = JSON.parse(readFileSync('/etc/citc/cluster.json', 'utf8')) as {name: string; confPath: string}
  if (contract.name !== cluster) {
    console.error(`this machine is the management node of ${contract.name}, not ${cluster}: run the bench there`)
    process.exit(2)
  }
  return contract
}
