import {describe, expect, it} from 'vitest'

import {withRetry} from '../../src/lib/errors.js'

describe('withRetry', () => {
  const retry = 'citc create --name lab --resume continues where it stopped'
  it.each([
    // A lower layer's generic retry is replaced by the exact one, never repeated.
    ['refresh the AWS credentials (`aws sso login --profile <profile>`), then run `citc create --resume`', 'refresh the AWS credentials (`aws sso login --profile <profile>`); then ' + retry],
    ['try another zone (--zone) or shape (--mgmt-shape), or wait and run `citc create --resume`', 'try another zone (--zone) or shape (--mgmt-shape); then ' + retry],
    ['run `citc create --resume` (it runs terraform init first)', retry],
    ['delete them in the aws console (log: /x), then run `citc destroy lab` again', 'delete them in the aws console (log: /x); then ' + retry],
    // A hint without a retry keeps all its words; none at all is just the retry.
    ['install the AWS CLI; or add --skip-sweep', 'install the AWS CLI; or add --skip-sweep; then ' + retry],
    [undefined, retry],
  ])('%s', (hint, expected) => {
    expect(withRetry(hint, retry)).toBe(expected)
  })
})
