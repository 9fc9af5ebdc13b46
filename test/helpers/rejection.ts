// The CitcError a promise rejects with; any other outcome (it resolves, or rejects with something
// else) fails the test — a failure test never passes because the call "succeeded".
import {expect} from 'vitest'

import {CitcError} from '../../src/lib/errors.js'

export async function citcRejection(p: Promise<unknown>): Promise<CitcError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(CitcError)
  return error as CitcError
}
