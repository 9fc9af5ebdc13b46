import {Errors} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {classify, rendererPolicy} from '../../src/lib/base-command.js'
import {CitcError, HostKeyMismatchError, InvalidInputError, noSuchCluster} from '../../src/lib/errors.js'

describe('renderer policy', () => {
  it('draws the interactive list only on a TTY outside CI, and nothing under --json', () => {
    expect(rendererPolicy({json: false, verbose: false, tty: true, ci: false})).toBe('default')
    expect(rendererPolicy({json: false, verbose: false, tty: false, ci: false})).toBe('simple')
    expect(rendererPolicy({json: false, verbose: false, tty: true, ci: true})).toBe('simple')
    expect(rendererPolicy({json: false, verbose: true, tty: true, ci: false})).toBe('verbose')
    expect(rendererPolicy({json: true, verbose: true, tty: true, ci: false})).toBe('silent')
  })
})

describe('error kinds and exit codes', () => {
  it('maps every kind to its documented code', () => {
    expect(classify(new InvalidInputError([{where: 'limits.yaml:1:1', message: 'x'}])).code).toBe(3)
    expect(classify(noSuchCluster('x')).code).toBe(5)
    expect(classify(new CitcError('remote', 'x')).code).toBe(4)
    expect(classify(new CitcError('cancelled', 'x')).code).toBe(130)
    expect(classify(Object.assign(new Error('x'), {name: 'ExitPromptError'})).code).toBe(130)
    expect(classify(new Errors.CLIError('Parsing --port \n\tExpected an integer but received: abc')).code).toBe(2)
    expect(classify(new TypeError('boom'))).toMatchObject({code: 1, kind: 'unexpected'})
  })

  it('a typed error keeps its kind and code; a hint in parts reaches --json as one string', () => {
    expect(classify(new HostKeyMismatchError('h:22', 'SHA256:a', 'SHA256:b', 'ssh-ed25519'))).toMatchObject({
      code: 4,
      kind: 'remote',
      details: {expectedFingerprint: 'SHA256:a', receivedFingerprint: 'SHA256:b', algorithm: 'ssh-ed25519'},
    })
    const parts = classify(new CitcError('remote', 'x', {hint: {fix: 'fix it', retry: 'then run `citc create --resume`', log: '/l'}}))
    expect(parts.hint).toBe('fix it, then run `citc create --resume` (full output: /l)')
  })
})
