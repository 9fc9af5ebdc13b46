// The instance principal's session key, started early (session-key.ts): made once,
// handed out once (a later token gets a new pair from the driver), a usable RSA-2048 pair.
import {createPrivateKey, createPublicKey} from 'node:crypto'

import {describe, expect, it} from 'vitest'

import {startSessionKey, takeSessionKey} from '../../../../src/lib/providers/oracle/session-key.js'

describe('oracle session key made early', () => {
  it('is none when not started; once started, one RSA-2048 pair, handed out once', async () => {
    await takeSessionKey() // one another test file in this worker may have started (an Oracle driver without a kept session)
    expect(await takeSessionKey()).toBeUndefined()
    startSessionKey()
    const pair = await takeSessionKey()
    expect(createPublicKey(pair!.publicKey).asymmetricKeyDetails?.modulusLength).toBe(2048)
    expect(createPrivateKey(pair!.privateKey).asymmetricKeyType).toBe('rsa')
    expect(await takeSessionKey()).toBeUndefined()
  })
})
