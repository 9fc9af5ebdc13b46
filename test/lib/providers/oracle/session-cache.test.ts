// Oracle's session token kept between node programs (src/lib/providers/oracle/session-cache.ts), against the
// fake OCI (a TEST DOUBLE: test/doubles/cloud-api/oci.ts), which counts the tokens its auth service issues
// and can revoke them. Each "node program" is the driver's modules loaded afresh (vi.resetModules), as a
// new process has them: nothing of the last one's instance principal but the file.
import {chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import {readSession, SESSION_FILE, SESSION_MARGIN_S, tokenExpiry, writeSession} from '../../../../src/lib/providers/oracle/session-cache.js'
import {FAKE_OCI, startFakeOci, type FakeOci} from '../../../doubles/cloud-api/oci.js'
import {driverInput} from '../../../helpers/driver-input.js'
import {CLUSTER, driverOptions, fakeContext, imagesJson} from './helpers.js'

const work = mkdtempSync(join(tmpdir(), 'citc-oci-session-'))
let cloud: FakeOci
let images: ReturnType<typeof imagesJson>
beforeAll(async () => {
  images = imagesJson()
  cloud = await startFakeOci()
})
afterAll(async () => {
  await cloud.close()
  images.remove()
  rmSync(work, {recursive: true, force: true})
})

let n = 0
/** One node program's resume of one new node, with the driver's modules as a new process loads them; its log lines. */
async function nodeProgram(stateDir: string | undefined) {
  vi.resetModules()
  const {oracleDriver} = await import('../../../../src/lib/providers/oracle/driver.js')
  const {ctx, lines} = fakeContext()
  const [o] = await oracleDriver(driverInput(driverOptions(cloud, images.file, stateDir ? {stateDir} : {}))).resume([{name: `${CLUSTER}-vm-${++n}`, shape: 'VM.Standard2.1', ad: 1, arch: 'x86_64'}], ctx)
  expect(o, lines.join('\n')).toMatchObject({ok: true})
  return lines
}

const fakeJwt = (exp: number) => `e30.${Buffer.from(JSON.stringify({exp})).toString('base64url')}.sig`
const KEY = '-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n'

describe('the session between node programs', () => {
  it('the first program fetches a token and keeps it 0600; the next ones use it without the handshake', async () => {
    const dir = join(work, 'kept')
    const before = cloud.tokensIssued
    const logged = await nodeProgram(dir)
    expect(cloud.tokensIssued).toBe(before + 1)
    const file = join(dir, SESSION_FILE)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    const {token} = JSON.parse(readFileSync(file, 'utf8')) as {token: string}
    expect(tokenExpiry(token)).toBeGreaterThan(Date.now() / 1000)
    logged.push(...(await nodeProgram(dir)), ...(await nodeProgram(dir)))
    expect(cloud.tokensIssued).toBe(before + 1)
    // Never logged.
    expect(logged.join('\n')).not.toContain(token.split('.')[1])
  })

  it('a corrupt file, or one others may read, is not used: the handshake runs and the file is rewritten 0600', async () => {
    const dir = join(work, 'corrupt')
    await nodeProgram(dir)
    const file = join(dir, SESSION_FILE)
    for (const spoil of [() => writeFileSync(file, '{"version":1,"token":'), () => chmodSync(file, 0o644)]) {
      spoil()
      const before = cloud.tokensIssued
      await nodeProgram(dir)
      expect(cloud.tokensIssued).toBe(before + 1)
      expect(statSync(file).mode & 0o777).toBe(0o600)
      expect(readSession(file, `${cloud.metadataUrl} ${cloud.url}`, FAKE_OCI.region)).toBeDefined()
    }
  })

  it('a kept token the API refuses (revoked) is dropped: the program does the handshake once and succeeds', async () => {
    const dir = join(work, 'revoked')
    await nodeProgram(dir)
    const file = join(dir, SESSION_FILE)
    const old = readFileSync(file, 'utf8')
    cloud.revokeSessions()
    const before = cloud.tokensIssued
    await nodeProgram(dir)
    expect(cloud.tokensIssued).toBe(before + 1)
    expect(readFileSync(file, 'utf8')).not.toBe(old)
  })

  it('a stand-in with the doubles and no stateDir keeps nothing (never the host\'s /var/lib/citc)', async () => {
    const {sessionCacheFile} = await import('../../../../src/lib/providers/oracle/driver.js')
    expect(sessionCacheFile({endpoints: {api: cloud.url}})).toBeUndefined()
    expect(sessionCacheFile({stateDir: '/tmp/x'})).toBe(`/tmp/x/${SESSION_FILE}`)
    expect(sessionCacheFile({})).toBe(`/var/lib/citc/node-programs/${SESSION_FILE}`)
  })
})

describe('readSession', () => {
  const file = join(work, 'unit', SESSION_FILE)
  const now = 2_000_000_000
  const R = 'uk-london-1'
  const session = (exp: number, privateKey = KEY) => ({token: fakeJwt(exp), privateKey, coreEndpoint: 'https://iaas.uk-london-1.oraclecloud.com'})
  it('uses a token only while it has more than the margin left, and only for the same endpoints and region', () => {
    expect(writeSession(file, 'a b', R, session(now + SESSION_MARGIN_S + 60))).toBe(true)
    expect(readSession(file, 'a b', R, now)).toEqual(session(now + SESSION_MARGIN_S + 60))
    expect(readSession(file, 'a b', R, now + 120)).toBeUndefined()
    expect(readSession(file, 'other b', R, now)).toBeUndefined()
    expect(readSession(file, 'a b', 'eu-frankfurt-1', now)).toBeUndefined()
  })

  it('refuses what is not a kept session: a token without exp, a key that is not one, no endpoint, an older citc\'s file, a missing file', () => {
    writeSession(file, 'a b', R, {...session(now), token: 'e30.e30.sig'})
    expect(readSession(file, 'a b', R, now)).toBeUndefined()
    writeSession(file, 'a b', R, session(now + 3600, 'nope'))
    expect(readSession(file, 'a b', R, now)).toBeUndefined()
    writeSession(file, 'a b', R, {...session(now + 3600), coreEndpoint: 'iaas.example'})
    expect(readSession(file, 'a b', R, now)).toBeUndefined()
    // Version 1 (no endpoint): the handshake runs once and the file is rewritten.
    writeFileSync(file, JSON.stringify({version: 1, endpoints: 'a b', token: fakeJwt(now + 3600), privateKey: KEY}), {mode: 0o600})
    expect(readSession(file, 'a b', R, now)).toBeUndefined()
    expect(readSession(join(work, 'none', SESSION_FILE), 'a b', R, now)).toBeUndefined()
  })

  it('a directory that cannot be made is no error: nothing is kept', () => {
    writeFileSync(join(work, 'plain'), '')
    expect(writeSession(join(work, 'plain', 'sub', SESSION_FILE), 'a b', R, session(now))).toBe(false)
  })
})
