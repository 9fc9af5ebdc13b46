// The lock across real processes: a child takes the lock through lock.ts and holds it until told to
// release it, or until it is killed by its PID (test/helpers/lock-holder.ts).
import {type ChildProcess, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {acquireLock, formatSince, withLock} from '../../../src/lib/cluster/lock.js'
import {ROOT} from '../../helpers/cli.js'
import {holdLock, stopHolders} from '../../helpers/lock-holder.js'
import {CitcError} from '../../../src/lib/errors.js'

const LOCK_TS = join(ROOT, 'src/lib/cluster/lock.ts')

/** The holder <dir>/lock names (the file's format is lock.ts's header), if there is one. */
function lockHolder(dir: string): {pid: number; what: string} | undefined {
  return existsSync(join(dir, 'lock')) ? JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) : undefined
}

const children: ChildProcess[] = []

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function caught(p: Promise<unknown>): Promise<CitcError> {
  try {
    await p
  } catch (error) {
    expect(error).toBeInstanceOf(CitcError)
    return error as CitcError
  }
  throw new Error('expected a CitcError')
}

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'citc-lock-'))
})
afterEach(async () => {
  await stopHolders(children)
  rmSync(dir, {recursive: true, force: true})
})

describe('withLock in one process', () => {
  it('writes {pid, what, since} in <dir>/lock, runs fn, removes the lock, returns fn’s value', async () => {
    const value = await withLock(dir, 'citc finish', (lock) => {
      const onDisk = JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))
      expect(onDisk).toMatchObject({pid: process.pid, what: 'citc finish'})
      expect(new Date(onDisk.since).getTime()).toBeGreaterThan(Date.now() - 60_000)
      expect(lock.path).toBe(join(dir, 'lock'))
      expect(lockHolder(dir)?.pid).toBe(process.pid)
      return 42
    })
    expect(value).toBe(42)
    expect(existsSync(join(dir, 'lock'))).toBe(false)
    expect(lockHolder(dir)).toBeUndefined()
  })

  it('releases when fn throws; release is idempotent and leaves a later holder’s lock alone', async () => {
    await expect(withLock(dir, 'citc finish', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
    expect(existsSync(join(dir, 'lock'))).toBe(false)
    const first = await acquireLock(dir, 'citc a')
    first.release()
    const second = await acquireLock(dir, 'citc b')
    first.release() // again: must not remove citc b's lock
    expect(first.released).toBe(true)
    expect(lockHolder(dir)?.what).toBe('citc b')
    second.release()
    second.release()
    expect(existsSync(join(dir, 'lock'))).toBe(false)
  })

  it('refuses a nested lock on the same directory in the same process', async () => {
    await withLock(dir, 'citc finish', async () => {
      const e = await caught(acquireLock(dir, 'citc destroy'))
      expect(e.message).toMatch(new RegExp(`another citc finish \\(pid ${process.pid}\\)`))
    })
  })

  it('a lock whose PID now belongs to another process (different start time) is stale', async () => {
    const notes: string[] = []
    writeFileSync(join(dir, 'lock'), JSON.stringify({pid: process.pid, what: 'citc old', since: new Date().toISOString(), host: '', start: 1, token: 'x'}))
    await withLock(dir, 'citc finish', () => expect(lockHolder(dir)?.what).toBe('citc finish'), {note: (m) => notes.push(m)})
    expect(notes).toEqual([expect.stringMatching(/stale lock: citc old/)])
  })

  it('an unreadable lock file is a holder while fresh, stale when old', async () => {
    const file = join(dir, 'lock')
    writeFileSync(file, '')
    expect((await caught(acquireLock(dir, 'citc finish'))).message).toMatch(/another citc command/)
    const old = new Date(Date.now() - 60_000)
    utimesSync(file, old, old)
    const notes: string[] = []
    const lock = await acquireLock(dir, 'citc finish', {note: (m) => notes.push(m)})
    expect(notes).toEqual([expect.stringMatching(/stale, unreadable lock/)])
    lock.release()
  })

  it('fails clearly when the directory does not exist', async () => {
    await expect(acquireLock(join(dir, 'missing'), 'citc finish')).rejects.toThrow(/does not exist/)
  })

  it('formats the holder’s time as the time today, with the date another day', () => {
    const now = new Date(2026, 10, 21, 15, 0, 0)
    expect(formatSince(new Date(2026, 10, 21, 12, 1, 2).toISOString(), now)).toBe('12:01:02')
    expect(formatSince(new Date(2026, 10, 20, 9, 8, 7).toISOString(), now)).toBe('2026-11-20 09:08:07')
  })
})

describe('withLock across processes', () => {
  it('refuses while another process holds it, saying who and since when', async () => {
    const holder = await holdLock(dir, 'citc finish', children)
    let ran = false
    const e = await caught(
      withLock(dir, 'citc destroy', () => {
        ran = true
      }),
    )
    expect(ran).toBe(false)
    expect(e.kind).toBe('usage')
    expect(e.message).toMatch(
      new RegExp(`^another citc finish \\(pid ${holder.pid}\\) has held this cluster since \\d\\d:\\d\\d:\\d\\d; run this again when it has finished$`),
    )
    // A command with --wait (it passes wait: false) is told about it.
    const e2 = await caught(withLock(dir, 'citc finish', () => {}, {wait: false}))
    expect(e2.message).toMatch(/; wait for it or retry with --wait$/)
    expect(e.details).toMatchObject({lock: {pid: holder.pid, what: 'citc finish'}})
    expect(lockHolder(dir)?.pid).toBe(holder.pid) // the refused process left the holder's lock alone
  })

  it('with wait, polls until the holder releases it, then runs', async () => {
    const holder = await holdLock(dir, 'citc finish', children)
    const notes: string[] = []
    let ran = false
    const waiting = withLock(
      dir,
      'citc destroy',
      () => {
        ran = true
        expect(lockHolder(dir)?.pid).toBe(process.pid)
      },
      {wait: true, timeoutMs: 30_000, pollMs: 50, note: (m) => notes.push(m)},
    )
    await new Promise((r) => setTimeout(r, 400))
    expect(ran).toBe(false)
    await holder.release()
    await waiting
    expect(ran).toBe(true)
    expect(notes).toEqual([`waiting for citc finish (pid ${holder.pid}) to release this cluster…`])
    expect(alive(holder.pid)).toBe(true) // released, not dead: no stale takeover
  })

  it('with wait, gives up after timeoutMs', async () => {
    const holder = await holdLock(dir, 'citc finish', children)
    const e = await caught(withLock(dir, 'citc destroy', () => {}, {wait: true, timeoutMs: 300, pollMs: 50, note: () => {}}))
    // The message gives the time really waited, rounded: 0 s here, more when a loaded machine ran the
    // last poll late. That it gave up at all (the holder never lets go) is the point.
    expect(e.message).toMatch(new RegExp(`^gave up after \\d+ s: another citc finish \\(pid ${holder.pid}\\) has held this cluster since`))
  })

  it('stops waiting when the signal aborts (a cancellation)', async () => {
    await holdLock(dir, 'citc finish', children)
    const ac = new AbortController()
    setTimeout(() => ac.abort(), 200)
    const e = await caught(acquireLock(dir, 'citc destroy', {wait: true, timeoutMs: 30_000, pollMs: 5_000, signal: ac.signal, note: () => {}}))
    expect(e.kind).toBe('cancelled')
  })

  it('takes over the lock of a holder that was killed, with a note', async () => {
    const holder = await holdLock(dir, 'citc finish', children)
    await holder.kill()
    expect(lockHolder(dir)?.pid).toBe(holder.pid) // SIGKILL: no chance to clean up
    const notes: string[] = []
    await withLock(dir, 'citc destroy', () => expect(lockHolder(dir)?.what).toBe('citc destroy'), {note: (m) => notes.push(m)})
    expect(notes).toEqual([expect.stringMatching(new RegExp(`^note: taking over a stale lock: citc finish \\(pid ${holder.pid}\\)`))])
    expect(existsSync(join(dir, 'lock'))).toBe(false)
  })

  it('a holder that exits without releasing still removes its lock (exit listener)', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', `import {acquireLock} from ${JSON.stringify(LOCK_TS)}; await acquireLock(process.argv[1], 'citc x'); process.exit(3)`, dir],
      {cwd: ROOT, encoding: 'utf8'},
    )
    expect(r.status).toBe(3)
    expect(existsSync(join(dir, 'lock'))).toBe(false)
  })
})
