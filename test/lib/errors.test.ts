import {describe, expect, it} from 'vitest'

import {CitcError, HostKeyMismatchError, hintText, withRetry, type Hint} from '../../src/lib/errors.js'

describe('hints in parts', () => {
  it('read as "fix, retry (full output: log)"', () => {
    expect(hintText({fix: 'refresh the credentials', retry: 'then run `citc create --resume`'})).toBe('refresh the credentials, then run `citc create --resume`')
    expect(hintText({retry: 'run `citc create --resume` (it runs terraform init first)'})).toBe('run `citc create --resume` (it runs terraform init first)')
    expect(hintText({fix: 'check the connection', retry: 'then run `citc destroy` again', log: '/l/tf.log'})).toBe('check the connection, then run `citc destroy` again (full output: /l/tf.log)')
    expect(hintText({})).toBeUndefined()
  })

  it('a CitcError keeps the parts and shows the text; plain text is all fix', () => {
    const e = new CitcError('remote', 'x', {hint: {fix: 'a', retry: 'then b'}})
    expect(e.hint).toBe('a, then b')
    expect(e.hintParts).toEqual({fix: 'a', retry: 'then b'})
    expect(new CitcError('remote', 'x', {hint: 'a, then run `citc create --resume`'}).hintParts).toEqual({fix: 'a, then run `citc create --resume`'})
    expect(new CitcError('remote', 'x').hint).toBeUndefined()
  })
})

describe('withRetry', () => {
  const retry = 'citc create --name lab --resume continues where it stopped'
  const error = (hint?: string | Hint) => new CitcError('remote', 'failed', {hint})
  it.each<[string | Hint | undefined, string]>([
    // A lower layer's generic retry gives way to the exact one, never repeated.
    [{fix: 'refresh the AWS credentials (`aws sso login --profile <profile>`)', retry: 'then run `citc create --resume`'}, 'refresh the AWS credentials (`aws sso login --profile <profile>`); then ' + retry],
    [{fix: 'try another zone (--zone) or shape (--mgmt-shape)', retry: 'or wait and run `citc create --resume`'}, 'try another zone (--zone) or shape (--mgmt-shape); then ' + retry],
    [{retry: 'run `citc create --resume` (it runs terraform init first)'}, retry],
    [{fix: 'delete them in the aws console (log: /x)', retry: 'then run `citc destroy lab` again'}, 'delete them in the aws console (log: /x); then ' + retry],
    // The log stays; a hint with no retry part keeps all its words (nothing is guessed from the text).
    [{fix: 'check the internet connection', retry: 'then run `citc create --resume`', log: '/l/tf.log'}, 'check the internet connection (full output: /l/tf.log); then ' + retry],
    [{retry: 'run `citc create --resume` (it runs terraform init first)', log: '/l/tf.log'}, '(full output: /l/tf.log); then ' + retry],
    ['install the AWS CLI; or add --skip-sweep', 'install the AWS CLI; or add --skip-sweep; then ' + retry],
    [undefined, retry],
  ])('%j', (hint, expected) => {
    expect(withRetry(error(hint), retry)).toBe(expected)
  })
})

describe('HostKeyMismatchError', () => {
  it('is a remote error (exit 4) that says both keys, with the fingerprints for --json', () => {
    const e = new HostKeyMismatchError('203.0.113.5:22', 'SHA256:expected', 'SHA256:received', 'ssh-ed25519')
    expect(e).toBeInstanceOf(CitcError)
    expect(e.kind).toBe('remote')
    expect(e.exitCode).toBe(4)
    expect(e.message).toBe(
      'the host key of 203.0.113.5:22 does not match the pinned key (it changed): refusing to connect\n  expected SHA256:expected\n  received SHA256:received (ssh-ed25519)',
    )
    expect(e.hint).toMatch(/ssh-keygen -lf/)
    expect(e.details).toEqual({expectedFingerprint: 'SHA256:expected', receivedFingerprint: 'SHA256:received', algorithm: 'ssh-ed25519'})
    expect(e.receivedFingerprint).toBe('SHA256:received')
  })
})
