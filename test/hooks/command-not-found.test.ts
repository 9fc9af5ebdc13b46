// The suggestion for an unknown command (the hook's output is checked on the built CLI in
// test/cli/errors.test.ts).
import {describe, expect, it} from 'vitest'

import {closestCommand, unknownCommandError} from '../../src/hooks/command-not-found.js'
import {CitcError} from '../../src/lib/errors.js'

const KNOWN = ['add-user', 'cluster add', 'cluster list', 'cluster remove', 'create', 'destroy', 'doctor', 'finish', 'nodes', 'ssh', 'status', 'users']

describe('closestCommand', () => {
  it('answers a typo with the command meant', () => {
    expect(closestCommand('stauts', KNOWN)).toBe('status')
    expect(closestCommand('destory', KNOWN)).toBe('destroy')
    expect(closestCommand('add-usr', KNOWN)).toBe('add-user')
    expect(closestCommand('cluster lst', KNOWN)).toBe('cluster list')
    expect(closestCommand('user', KNOWN)).toBe('users')
  })

  it('takes a command that starts with what was typed first', () => {
    expect(closestCommand('fin', KNOWN)).toBe('finish')
    expect(closestCommand('cluster r', KNOWN)).toBe('cluster remove')
  })

  it('has nothing to say without commands', () => {
    expect(closestCommand('x', [])).toBeUndefined()
  })
})

describe('unknownCommandError', () => {
  it('is a usage error (exit 2) naming what was typed, with the closest command as the hint', () => {
    const e = unknownCommandError('stauts', KNOWN)
    expect(e).toBeInstanceOf(CitcError)
    expect(e).toMatchObject({kind: 'usage', exitCode: 2, message: '"stauts" is not a citc command'})
    expect(e.hint).toBe('did you mean `citc status`? `citc --help` lists every command')
    expect(unknownCommandError('x', []).hint).toBe('`citc --help` lists every command')
  })
})
