// The workflow helper's plumbing, on a temp cluster dir: the lock, the journal and --resume, log
// names, Ctrl-C (a real SIGINT listener, fired with process.emit) and the error re-wrap.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {clusterWorkflow, logStamp, type Step, type WorkflowContext, type WorkflowSpec} from '../../../src/lib/tasks/workflow.js'

/** What holds <dir>/lock (cluster/lock.ts writes {pid, what, …} there), if anything. */
function lockHolder(dir: string): {what: string} | undefined {
  return existsSync(join(dir, 'lock')) ? JSON.parse(readFileSync(join(dir, 'lock'), 'utf8')) : undefined
}

let dir: string
let paths: WorkflowSpec['paths']
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'citc-workflow-'))
  paths = {dir, journal: join(dir, 'journal'), logsDir: join(dir, 'logs')}
  mkdirSync(paths.logsDir)
})
afterEach(() => rmSync(dir, {recursive: true, force: true}))

interface Ctx extends WorkflowContext {
  ran: string[]
}

const step = (name: string, o: Partial<Step<Ctx>> = {}): Step<Ctx> => ({
  title: name,
  journal: name,
  run: (ctx) => {
    ctx.ran.push(name)
  },
  ...o,
})

const spec = (o: Partial<WorkflowSpec> = {}): WorkflowSpec => ({paths, command: 'citc test', renderer: 'silent', ...o})

describe('clusterWorkflow', () => {
  it('holds the lock while it runs, journals steps with what they return, and releases the lock', async () => {
    let holder: string | undefined
    const result = await clusterWorkflow(spec({journal: {resume: false, reset: false}}), async (wf) => {
      holder = lockHolder(dir)?.what
      const ctx = {...wf.context, ran: [] as string[]}
      await wf.steps([step('one'), step('two', {run: () => ({answer: 42})}), step('three', {journal: undefined})], ctx)
      return ctx.ran
    })
    expect(holder).toBe('citc test')
    expect(lockHolder(dir)).toBeUndefined()
    expect(result).toEqual(['one', 'three'])
    const lines = readFileSync(paths.journal, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as {step: string; data?: unknown})
    expect(lines.map((l) => [l.step, l.data])).toEqual([
      ['one', undefined],
      ['two', {answer: 42}],
    ])
  })

  it('with resume, skips what an earlier run did (unless always); a reset forgets it', async () => {
    const run = (resume: boolean, reset: boolean) =>
      clusterWorkflow(spec({journal: {resume, reset}}), async (wf) => {
        const ctx = {...wf.context, ran: [] as string[]}
        await wf.steps([step('a'), step('b', {always: true}), step('c', {skip: () => 'not today'})], ctx)
        return ctx.ran
      })
    expect(await run(false, false)).toEqual(['a', 'b'])
    expect(await run(true, false)).toEqual(['b'])
    expect(await run(false, true)).toEqual(['a', 'b'])
    expect(readFileSync(paths.journal, 'utf8')).not.toMatch(/"c"/)
  })

  it('a reset keeps the steps it is told to keep (with their data), and only if they were done', async () => {
    const run = (reset: boolean, steps: Array<Step<Ctx>>) =>
      clusterWorkflow(spec({journal: {resume: false, reset, keep: ['started', 'never']}}), async (wf) => {
        await wf.steps(steps, {...wf.context, ran: []})
        return wf.journal.steps().map((e) => [e.step, e.data])
      })
    expect(await run(false, [step('started', {run: () => ({at: 1})}), step('done')])).toEqual([
      ['started', {at: 1}],
      ['done', undefined],
    ])
    // The re-run's reset forgets "done" (it runs again) but remembers "started".
    expect(await run(true, [step('other')])).toEqual([
      ['started', {at: 1}],
      ['other', undefined],
    ])
    expect(await run(true, [])).toEqual([['started', {at: 1}]])
  })

  it('names log files <kind>-<stamp>.log in the cluster logs/, one stamp per run', async () => {
    const files = await clusterWorkflow(spec(), async (wf) => [wf.logFile('ansible'), wf.logFile('create')])
    expect(files[0]).toMatch(new RegExp(`^${paths.logsDir}/ansible-\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z\\.log$`))
    expect(files[1]).toBe(files[0].replace('/ansible-', '/create-'))
    expect(logStamp(new Date('2026-11-21T12:01:02.345Z'))).toBe('2026-11-21T12-01-02-345Z')
  })

  it('re-wraps a failing step (and guarded work), not what fails before them; clean-ups run last first', async () => {
    const order: string[] = []
    const rewrap: WorkflowSpec['rewrap'] = (error, run) => new CitcError(error.kind, `wrapped: ${error.message}`, {hint: `see ${run.logFile('x')}`})
    const failing = clusterWorkflow(spec({rewrap}), async (wf) => {
      wf.cleanup(() => order.push('first added'))
      wf.cleanup(() => order.push('last added'))
      await wf.steps([step('bad', {run: () => Promise.reject(new CitcError('remote', 'it broke'))})], {...wf.context, ran: []})
    })
    const error = (await failing.catch((e: unknown) => e)) as CitcError
    expect(error.message).toBe('wrapped: it broke')
    expect(error.kind).toBe('remote')
    expect(error.hint).toMatch(new RegExp(`^see ${paths.logsDir}/x-.*\\.log$`))
    expect(order).toEqual(['last added', 'first added'])
    expect(lockHolder(dir)).toBeUndefined()

    const guarded = await clusterWorkflow(spec({rewrap}), (wf) => wf.guard(() => Promise.reject(new CitcError('usage', 'no')))).catch((e: unknown) => e)
    expect((guarded as Error).message).toBe('wrapped: no')
    const before = await clusterWorkflow(spec({rewrap}), () => Promise.reject(new CitcError('usage', 'early'))).catch((e: unknown) => e)
    expect((before as Error).message).toBe('early')
    // An error of another kind passes unchanged.
    const plain = await clusterWorkflow(spec({rewrap}), (wf) => wf.guard(() => Promise.reject(new TypeError('bug')))).catch((e: unknown) => e)
    expect(plain).toBeInstanceOf(TypeError)
  })

  it('a clean-up that throws neither skips the others nor hides the run’s own error', async () => {
    const order: string[] = []
    const failing = clusterWorkflow(spec(), async (wf) => {
      wf.cleanup(() => order.push('first added'))
      wf.cleanup(() => {
        throw new Error('clean-up broke')
      })
      throw new CitcError('remote', 'the run failed')
    })
    await expect(failing).rejects.toThrow('the run failed')
    expect(order).toEqual(['first added'])
    const succeeding = clusterWorkflow(spec(), async (wf) => {
      wf.cleanup(() => {
        throw new Error('clean-up broke')
      })
      wf.cleanup(() => order.push('after a success'))
      return 'done'
    })
    await expect(succeeding).rejects.toThrow('clean-up broke')
    expect(order).toEqual(['first added', 'after a success'])
    expect(lockHolder(dir)).toBeUndefined()
  })

  it('Ctrl-C aborts the signal; the step that stops on it ends as a cancellation (exit 130), re-wrapped', async () => {
    let interrupted: boolean | undefined
    const waitForAbort: Step<Ctx> = {
      title: 'wait',
      journal: 'wait',
      run: (ctx) =>
        new Promise((_, reject) => {
          // Not a CitcError: what a tool killed by the signal may throw.
          ctx.signal.addEventListener('abort', () => reject(new Error('killed')))
          setTimeout(() => process.emit('SIGINT'), 10)
        }),
    }
    const error = await clusterWorkflow(
      spec({
        journal: {resume: false, reset: false},
        rewrap: (e, run) => {
          interrupted = run.interrupted
          return new CitcError(e.kind, `test interrupted (${e.message})`)
        },
      }),
      async (wf) => {
        await wf.steps([waitForAbort], {...wf.context, ran: []})
      },
    ).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('cancelled')
    expect((error as CitcError).exitCode).toBe(130)
    expect((error as CitcError).message).toBe('test interrupted (citc test interrupted)')
    expect(interrupted).toBe(true)
    expect(existsSync(paths.journal)).toBe(false) // the step is not done
    expect(process.listenerCount('SIGINT')).toBe(0)
    expect(lockHolder(dir)).toBeUndefined()
  })
})
