// Runs the built citc (bin/run.js → dist) as a user would: a child process, no TTY, exit code and
// output captured. `npm test` builds first.
import {type ChildProcess, spawn} from 'node:child_process'
import {existsSync} from 'node:fs'
import {join} from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..')
const BIN = join(ROOT, 'bin', 'run.js')

export interface CliResult {
  code: number
  stdout: string
  stderr: string
  /** stdout parsed as JSON (for --json runs). */
  json<T = any>(): T
}

export interface CliOptions {
  env?: NodeJS.ProcessEnv
  timeoutMs?: number
  input?: string
  /** Called with the child as soon as it runs (to signal it, as Ctrl-C would). */
  onSpawn?: (child: ChildProcess) => void
  /** Called with every chunk of stdout and stderr. */
  onOutput?: (chunk: string) => void
}

export function citc(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      // NODE_ENV=test (vitest's) would make oclif load src/*.ts instead of the build: run what users run.
      env: {...process.env, CI: 'true', NO_COLOR: '1', NODE_ENV: 'production', ...opts.env},
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    opts.onSpawn?.(child)
    child.stdout.on('data', (d) => {
      stdout += d
      opts.onOutput?.(String(d))
    })
    child.stderr.on('data', (d) => {
      stderr += d
      opts.onOutput?.(String(d))
    })
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`citc ${args.join(' ')} did not finish in ${opts.timeoutMs ?? 120_000} ms\n${stdout}\n${stderr}`))
    }, opts.timeoutMs ?? 120_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({
        code: code ?? -1,
        stdout,
        stderr,
        json() {
          try {
            return JSON.parse(stdout)
          } catch {
            throw new Error(`not JSON (exit ${code}):\n${stdout}\n--- stderr ---\n${stderr}`)
          }
        },
      })
    })
    child.stdin.end(opts.input ?? '')
  })
}
