import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {pidAlive, procStat} from '../../../src/lib/proc.js'
import {waitFor} from '../../helpers/wait.js'

import {CitcError} from '../../../src/lib/errors.js'
import {REAPER, run, spawnDetached, which} from '../../../src/lib/tools/exec.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-exec-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
const tmp = (name: string) => join(dir, `${++n}-${name}`)




const readPid = (file: string) => Number(readFileSync(file, 'utf8').trim())

describe('run', () => {
  it('returns stdout, stderr and a non-zero exit code without throwing', async () => {
    const r = await run('sh', ['-c', 'echo out; echo err >&2; exit 3'])
    expect(r).toEqual({stdout: 'out\n', stderr: 'err\n', exitCode: 3})
  })

  it('passes argv without a shell', async () => {
    const r = await run('printf', ['%s|', 'a;b', '$(id)', '`id`', ''])
    expect(r.stdout).toBe('a;b|$(id)|`id`||')
  })

  it('feeds input to stdin; without input stdin is empty', async () => {
    expect((await run('cat', [], {input: 'hello\nworld'})).stdout).toBe('hello\nworld')
    expect((await run('cat', [], {input: Buffer.from([0, 1, 2])})).stdout).toBe('\0\u0001\u0002')
    expect((await run('cat', [])).stdout).toBe('')
  })

  it('adds env to the environment and honours cwd', async () => {
    const r = await run('sh', ['-c', 'printf "%s %s %s" "$CITC_X" "$PWD" "${PATH:+has-path}"'], {env: {CITC_X: "a b'c"}, cwd: dir})
    expect(r.stdout).toBe(`a b'c ${dir} has-path`)
  })

  it('streams output while the program runs', async () => {
    // The program waits for a file that only the onOutput callback creates: without streaming it hangs.
    const marker = tmp('marker')
    const seen: string[] = []
    const r = await run('sh', ['-c', 'echo one; while [ ! -e "$1" ]; do sleep 0.02; done; echo two >&2', 'sh', marker], {
      timeoutMs: 20_000,
      onOutput: (chunk, stream) => {
        seen.push(`${stream}:${chunk}`)
        if (chunk.includes('one')) writeFileSync(marker, '')
      },
    })
    expect(r.exitCode).toBe(0)
    expect(seen).toEqual(['stdout:one\n', 'stderr:two\n'])
  })

  it('never splits a UTF-8 character across chunks', async () => {
    const chunks: string[] = []
    // 'é' is 2 bytes: the first byte, a pause, then the second.
    await run('sh', ['-c', "printf '\\303'; sleep 0.2; printf '\\251\\n'"], {onOutput: (c) => chunks.push(c)})
    expect(chunks.join('')).toBe('é\n')
    expect(chunks.every((c) => !c.includes('\uFFFD'))).toBe(true)
  })

  it('appends the command and timestamped output lines to logFile', async () => {
    const log = tmp('logs/run.log')
    await run('sh', ['-c', 'echo first; echo oops >&2; printf partial'], {logFile: log})
    await run('true', [], {logFile: log, input: 'secret'})
    const lines = readFileSync(log, 'utf8').trimEnd().split('\n')
    const ts = String.raw`\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] `
    expect(lines.every((l) => new RegExp(`^${ts}`).test(l))).toBe(true)
    const body = lines.map((l) => l.replace(new RegExp(`^${ts}`), ''))
    expect(body).toContain(`$ sh -c 'echo first; echo oops >&2; printf partial'`)
    expect(body).toContain('first')
    expect(body).toContain('[stderr] oops')
    expect(body).toContain('partial')
    expect(body).toContain('exit 0')
    expect(body).toContain('$ true <stdin not logged>')
    expect(readFileSync(log, 'utf8')).not.toContain('secret')
  })

  it('reports death by signal as 128+n', async () => {
    expect((await run('sh', ['-c', 'kill -KILL $$'])).exitCode).toBe(137)
  })

  it('rejects when the program cannot be started', async () => {
    const error = await run('/nonexistent/citc-no-such-program', []).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('remote')
    expect((error as CitcError).message).toMatch(/cannot run \/nonexistent\/citc-no-such-program/)
  })

  it('on timeout kills the whole process group and rejects', async () => {
    const pidFile = tmp('bg.pid')
    // The timeout must come after the shell started its background child and wrote its pid, or there
    // is nothing to prove: a shell's start takes milliseconds, but on a loaded machine a 300–500-ms
    // limit can come first (no pid file). 1.5 s leaves that start a wide margin.
    const error = await run('sh', ['-c', 'sleep 300 & echo $! > "$1"; wait', 'sh', pidFile], {timeoutMs: 1500}).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('remote')
    expect((error as CitcError).message).toMatch(/timed out after 1.5 s/)
    // The background grandchild was in the group: it is gone too.
    expect(pidAlive(readPid(pidFile))).toBe(false)
  })

  it('sends SIGKILL after the grace period to a group that ignores SIGTERM', async () => {
    const pidFile = tmp('stubborn.pid')
    // As above: the shell must have set its trap and started its child before the limit (1.5 s).
    const error = await run('sh', ['-c', 'trap "" TERM; sleep 300 & echo $! > "$1"; wait; wait', 'sh', pidFile], {
      timeoutMs: 1500,
      killGraceMs: 300,
    }).catch((e: unknown) => e)
    expect((error as CitcError).message).toMatch(/timed out/)
    await waitFor('the pid file', () => existsSync(pidFile))
    expect(pidAlive(readPid(pidFile))).toBe(false)
  })

  it('an abort signal kills the group and rejects as cancelled', async () => {
    const pidFile = tmp('abort.pid')
    const ac = new AbortController()
    const promise = run('sh', ['-c', 'sleep 300 & echo $! > "$1"; echo ready; wait', 'sh', pidFile], {
      signal: ac.signal,
      onOutput: (c) => c.includes('ready') && ac.abort(),
    })
    const error = await promise.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('cancelled')
    expect(pidAlive(readPid(pidFile))).toBe(false)
  })

  it('an already aborted signal starts nothing', async () => {
    const marker = tmp('never')
    const error = await run('touch', [marker], {signal: AbortSignal.abort()}).catch((e: unknown) => e)
    expect((error as CitcError).kind).toBe('cancelled')
    expect(existsSync(marker)).toBe(false)
  })
})

/** A citc stand-in for tsx: `lines` after imports of statSync and exec.ts's run. (.mts: the script lives outside the package.) */
function standIn(name: string, lines: string[]): string {
  const script = tmp(`${name}.mts`)
  const execModule = new URL('../../../src/lib/tools/exec.ts', import.meta.url).pathname
  writeFileSync(script, [`import {statSync} from 'node:fs'`, `import {run} from ${JSON.stringify(execModule)}`, ...lines].join('\n'))
  return script
}

describe('when citc exits', () => {
  it('the process groups of running children get SIGTERM', async () => {
    const pidFile = tmp('orphan.pid')
    const script = standIn('exits', [
      `run('sh', ['-c', 'sleep 300 & echo $! > "$1"; wait', 'sh', ${JSON.stringify(pidFile)}]).catch(() => {})`,
      `setInterval(() => { try { statSync(${JSON.stringify(pidFile)}); process.exit(0) } catch {} }, 20)`,
      `setTimeout(() => process.exit(2), 10_000)`,
    ])
    const r = await run(join(process.cwd(), 'node_modules/.bin/tsx'), [script], {timeoutMs: 30_000})
    expect(r.exitCode).toBe(0)
    await waitFor('the process in the pid file to exit', () => !pidAlive(readPid(pidFile)))
  })
})

describe('when citc is killed (SIGKILL: no exit hook runs)', () => {
  /** A citc stand-in that runs `sh` (which starts a `sleep` ignoring SIGTERM), says "ready", and waits to be killed. */
  async function killedCitc(stopIfCitcDies: boolean): Promise<number> {
    const pidFile = tmp('sleep.pid')
    const script = standIn('killed', [
      // The sleep ignores SIGTERM (an ignored signal stays ignored across exec): only SIGKILL ends it.
      `run('sh', ['-c', 'trap "" TERM; sleep 300 & echo $! > "$1"; wait', 'sh', ${JSON.stringify(pidFile)}], {stopIfCitcDies: ${stopIfCitcDies}, killGraceMs: 1000}).catch(() => {})`,
      `const ready = setInterval(() => { try { statSync(${JSON.stringify(pidFile)}); console.log('ready'); clearInterval(ready) } catch {} }, 20)`,
      `setTimeout(() => process.exit(2), 60_000)`,
    ])
    const citc = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), [script], {stdio: ['ignore', 'pipe', 'inherit']})
    let out = ''
    citc.stdout.on('data', (d) => (out += d))
    await waitFor('the stand-in to start its child', () => out.includes('ready') || citc.exitCode !== null, 30_000)
    expect(out).toContain('ready')
    // tsx runs the script in a child node process: SIGKILL the process that ran run(), not tsx.
    const sleepPid = readPid(pidFile)
    const citcPid = procStat(procStat(sleepPid)!.ppid)!.ppid
    // Only ever the stand-in itself (never whatever adopted an orphan).
    expect(readFileSync(`/proc/${citcPid}/cmdline`, 'utf8')).toContain(script)
    process.kill(citcPid, 'SIGKILL')
    citc.kill('SIGKILL')
    return sleepPid
  }

  it('a child run with stopIfCitcDies is stopped, its whole process group, SIGKILL after the grace', async () => {
    const sleepPid = await killedCitc(true)
    await waitFor('the sleep to be killed', () => !pidAlive(sleepPid), 20_000)
  })

  it('without it the process group runs on (what the option is for)', async () => {
    const sleepPid = await killedCitc(false)
    try {
      await new Promise((r) => setTimeout(r, 3000))
      expect(pidAlive(sleepPid)).toBe(true)
    } finally {
      const group = procStat(sleepPid)?.pgrp
      try {
        if (group) process.kill(-group, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
    }
  })

  it('the reaper leaves alone a group that ended (its number may be another group’s by then)', async () => {
    const other = spawn('sleep', ['300'], {detached: true, stdio: 'ignore'})
    try {
      const reaper = spawn('/bin/sh', ['-c', REAPER], {stdio: ['pipe', 'ignore', 'ignore']})
      reaper.stdin.end(`+ ${other.pid} 1\n+ 999999 1\n- ${other.pid}\n`)
      const code = await new Promise((r) => reaper.once('exit', r))
      expect(code).toBe(0)
      expect(pidAlive(other.pid!)).toBe(true)
    } finally {
      other.kill('SIGKILL')
    }
  })
})

describe('which', () => {
  it('finds programs on PATH and not what is missing', async () => {
    expect(await which('sh')).toMatch(/^\/.*\/sh$/)
    expect(await which('citc-no-such-program-x')).toBeUndefined()
    expect(await which('/bin/sh')).toBe('/bin/sh')
    const plain = tmp('not-executable')
    writeFileSync(plain, '', {mode: 0o644})
    expect(await which(plain)).toBeUndefined()
    expect(await which('sh', '/nonexistent')).toBeUndefined()
  })
})

describe('spawnDetached', () => {
  it('starts a process in its own process group, output to the log, and returns its pid', async () => {
    const log = tmp('detached/out.log')
    const pid = await spawnDetached('sh', ['-c', 'echo started; exec sleep 300'], {logFile: log})
    try {
      await waitFor('"started" in the log', () => readFileSync(log, 'utf8').includes('\nstarted\n'))
      expect(pidAlive(pid)).toBe(true)
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const pgid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2])
      expect(pgid).toBe(pid)
      expect(readFileSync(log, 'utf8')).toMatch(/^\[.*\] \$ sh -c 'echo started; exec sleep 300'\nstarted\n$/)
    } finally {
      process.kill(pid, 'SIGKILL')
    }
    await waitFor('the process to exit', () => !pidAlive(pid))
  })
})
