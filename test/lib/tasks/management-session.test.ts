// The one session with the management node (tasks/management-session.ts), on the memory transport:
// closed after a success, a failure and an interrupt (a real SIGINT listener, fired with process.emit,
// as workflow.test.ts does), every command in the log file; and the workflows' side of it — wf.connect
// closed with the workflow, failures naming the full log.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {classify} from '../../../src/lib/base-command.js'
import {CitcError, InvalidInputError} from '../../../src/lib/errors.js'
import {withManagementNode} from '../../../src/lib/tasks/management-session.js'
import {clusterWorkflow, namingFullLog, type WorkflowSpec} from '../../../src/lib/tasks/workflow.js'
import {MemoryTransport} from '../../doubles/memory-transport.js'

let dir: string
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'citc-session-'))
})
afterEach(() => rmSync(dir, {recursive: true, force: true}))

/** A node whose `sleep` never ends by itself: it rejects when the session is closed (as a dropped SSH channel does) or its signal aborts. */
function node(): MemoryTransport {
  const t = new MemoryTransport().on(['hostname'], {stdout: 'mgmt\n'}).on(['false'], {exitCode: 1, stderr: 'no\n'})
  const close = t.close.bind(t)
  const waiting: Array<(e: Error) => void> = []
  t.on(['sleep'], (_argv, opts) =>
    new Promise((_, reject) => {
      waiting.push(reject)
      opts.signal?.addEventListener('abort', () => reject(new Error('killed')))
    }),
  )
  t.close = async () => {
    await close()
    for (const reject of waiting) reject(new Error('channel closed'))
  }
  return t
}

const failure = (p: Promise<unknown>) => p.then(
  () => {
    throw new Error('expected a failure')
  },
  (e: unknown) => e as Error,
)

describe('withManagementNode', () => {
  it('closes the session after a success, and logs every command to the log file', async () => {
    const t = node()
    const logFile = join(dir, 'logs', 'users-1.log')
    const out = await withManagementNode(async () => t, {command: 'citc users', logFile}, async (transport) => (await transport.check(['hostname'])).stdout.trim())
    expect(out).toBe('mgmt')
    expect(t.closed).toBe(true)
    expect(readFileSync(logFile, 'utf8')).toMatch(/\$ hostname\nmgmt\n.*exit 0\n/)
    expect(process.listenerCount('SIGINT')).toBe(0)
  })

  it('closes the session after a failure; the failure is the error', async () => {
    const t = node()
    const error = await failure(withManagementNode(async () => t, {command: 'citc users'}, (transport) => transport.check(['false'])))
    expect(error.message).toMatch(/exit 1|no/)
    expect(t.closed).toBe(true)
  })

  it('Ctrl-C closes the session at once (ending what waited on it) and ends in a cancellation: exit 130, no stack trace', async () => {
    const t = node()
    setTimeout(() => process.emit('SIGINT'), 20)
    const error = await failure(withManagementNode(async () => t, {command: 'citc usage'}, (transport) => transport.run(['sleep', '1000'])))
    expect(error).toBeInstanceOf(CitcError)
    expect(error.message).toBe('citc usage interrupted')
    expect(classify(error)).toMatchObject({code: 130, kind: 'cancelled'})
    expect(t.closed).toBe(true)
    expect(process.listenerCount('SIGINT')).toBe(0)
    expect(process.listenerCount('SIGTERM')).toBe(0)
  })

  it('with a caller’s signal (a workflow’s step): obeys it, installs no handler of its own', async () => {
    const t = node()
    const stop = new AbortController()
    let handlers = -1
    const error = await failure(
      withManagementNode(async () => t, {command: 'citc destroy', signal: stop.signal}, (transport) => {
        handlers = process.listenerCount('SIGINT')
        setTimeout(() => stop.abort(), 10)
        return transport.run(['sleep', '1000'])
      }),
    )
    expect(handlers).toBe(0)
    expect(error.message).toBe('citc destroy interrupted')
    expect(t.closed).toBe(true)
  })

  it('a node that cannot be reached: `unreachable` answers instead (status), and nothing is left open', async () => {
    const doc = await withManagementNode(
      async () => {
        throw new Error('connect ECONNREFUSED')
      },
      {command: 'citc status', unreachable: (e) => `unreachable: ${(e as Error).message}`},
      async () => 'reached',
    )
    expect(doc).toBe('unreachable: connect ECONNREFUSED')
    expect(process.listenerCount('SIGINT')).toBe(0)
  })

  it('a session that fails to close after a success: that is the error', async () => {
    const t = node()
    t.close = async () => {
      throw new Error('close failed')
    }
    await expect(withManagementNode(async () => t, {command: 'citc users'}, async () => 'done')).rejects.toThrow('close failed')
    // …unless the caller says the work done is what counts (destroy's power-down).
    await expect(withManagementNode(async () => t, {command: 'citc destroy', closeQuietly: true}, async () => 'done')).resolves.toBe('done')
  })
})

describe('wf.connect and the full log', () => {
  let paths: WorkflowSpec['paths']
  beforeEach(() => {
    paths = {dir, journal: join(dir, 'journal'), logsDir: join(dir, 'logs')}
    mkdirSync(paths.logsDir)
  })
  const spec = (o: Partial<WorkflowSpec> = {}): WorkflowSpec => ({paths, command: 'citc test', renderer: 'silent', log: {kind: 'test'}, ...o})

  it('the session is logged to the run’s log and closed when the workflow ends', async () => {
    const t = node()
    let logFile = ''
    let openDuring: boolean | undefined
    await clusterWorkflow(spec(), async (wf) => {
      const transport = await wf.connect(async () => t)
      await transport.check(['hostname'])
      openDuring = !t.closed
      logFile = wf.logFile('test')
    })
    expect(openDuring).toBe(true)
    expect(t.closed).toBe(true)
    expect(readFileSync(logFile, 'utf8')).toContain('$ hostname')
  })

  it('closed after a failure too, which names the full log (its own hint kept when it has one)', async () => {
    const t = node()
    let logFile = ''
    const error = await failure(
      clusterWorkflow(spec(), async (wf) => {
        logFile = wf.logFile('test')
        const transport = await wf.connect(async () => t)
        await wf.guard(() => transport.check(['false']))
      }),
    )
    expect(t.closed).toBe(true)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).hint).toBe(`full log: ${logFile}`)
    expect(existsSync(logFile)).toBe(true)
    const own = namingFullLog(new CitcError('remote', 'x', {hint: 'do this'}), '/l.log')
    expect(own.hint).toBe('do this')
  })

  it('closed after Ctrl-C; the interrupt is a cancellation', async () => {
    const t = node()
    const error = await failure(
      clusterWorkflow(spec(), async (wf) => {
        const transport = await wf.connect(async () => t)
        setTimeout(() => process.emit('SIGINT'), 10)
        await wf.guard(() => transport.run(['sleep', '1000'], {signal: wf.signal}))
      }),
    )
    expect(t.closed).toBe(true)
    expect((error as CitcError).exitCode).toBe(130)
    expect(process.listenerCount('SIGINT')).toBe(0)
  })

  it('passThrough leaves a failure that says everything as it is; inDetails puts the log in the JSON error', () => {
    const bad = new InvalidInputError([{where: 'NAME', message: 'taken'}])
    expect(namingFullLog(bad, '/l.log', {passThrough: (e) => e.kind === 'invalidInput'})).toBe(bad)
    const remote = new CitcError('remote', 'ldapadd failed', {details: {step: 'ldap'}})
    expect(namingFullLog(remote, '/l.log').details).toEqual({step: 'ldap'})
    expect(namingFullLog(remote, '/l.log', {inDetails: true}).details).toEqual({step: 'ldap', logFile: '/l.log'})
  })
})
