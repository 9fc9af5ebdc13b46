// The refusals of `citc cluster add`, `cluster remove` and `destroy` that need no server: bad input is
// refused before any connection (exit 3, or 2 for a provider that cannot be registered), an unknown
// cluster is exit 5, and nothing is written to the data directory.
import {existsSync, readdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {cliSandbox} from './support.js'

const sandbox = cliSandbox('registry')
afterAll(() => sandbox.cleanup())
const {run, tmp, dataDir} = sandbox

// Not a usable key: only its form matters here (no connection is ever made). Port 1 on loopback: if a
// refusal ever came after the connection attempt, the test fails fast instead of waiting on a timeout.
const privateKey = join(tmp, 'id_ed25519')
const publicKey = join(tmp, 'id_ed25519.pub')
writeFileSync(privateKey, '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n', {mode: 0o600})
writeFileSync(publicKey, 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBZ0 test@example\n')
const GOOD_FINGERPRINT = 'SHA256:' + 'A'.repeat(43)

const add = (...more: string[]) => ['cluster', 'add', 'prod', '--host', '127.0.0.1', '--port', '1', '--user', 'citc', '--provider', 'aws', ...more]

/** Nothing was registered: no cluster directory (an empty clusters/ is tolerated). */
function nothingRegistered() {
  const clusters = join(dataDir, 'clusters')
  expect(existsSync(clusters) ? readdirSync(clusters) : []).toEqual([])
}

describe('cluster add: refused before connecting', () => {
  it('--key pointing at a missing file: exit 3, naming --key', async () => {
    const missing = join(tmp, 'no-such-key')
    const [plain, json] = await Promise.all([
      run(add('--key', missing, '--host-key-fingerprint', GOOD_FINGERPRINT)),
      run(add('--key', missing, '--host-key-fingerprint', GOOD_FINGERPRINT, '--json')),
    ])
    expect(plain.code, plain.stderr).toBe(3)
    expect(plain.stderr).toContain('--key')
    expect(plain.stderr).toContain(missing)
    expect(plain.stdout).toBe('')
    expect(json.code).toBe(3)
    expect(json.json().error).toMatchObject({kind: 'invalidInput', exitCode: 3, problems: [expect.objectContaining({where: '--key'})]})
    nothingRegistered()
  })

  it('a .pub file given as --key: exit 3', async () => {
    const r = await run(add('--key', publicKey, '--host-key-fingerprint', GOOD_FINGERPRINT))
    expect(r.code, r.stderr).toBe(3)
    expect(r.stderr).toContain('--key')
    expect(r.stderr).toMatch(/private key/)
    nothingRegistered()
  })

  it('a malformed --host-key-fingerprint: exit 3, naming the flag', async () => {
    const bad = ['SHA256:abc', 'MD5:aa:bb:cc', 'A'.repeat(43), `${GOOD_FINGERPRINT}=`]
    const results = await Promise.all(bad.map((fp) => run(add('--key', privateKey, '--host-key-fingerprint', fp))))
    results.forEach((r, i) => {
      expect(r.code, `${bad[i]}: ${r.stderr}`).toBe(3)
      expect(r.stderr).toContain('--host-key-fingerprint')
      expect(r.stderr).toContain(bad[i])
    })
    nothingRegistered()
  })

  it('--provider local: exit 2 (local clusters are made with citc create)', async () => {
    const r = await run(['cluster', 'add', 'prod', '--host', '127.0.0.1', '--port', '1', '--user', 'citc', '--key', privateKey, '--provider', 'local'])
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toContain('local')
    nothingRegistered()
  })
})

describe('an unknown cluster: exit 5', () => {
  it('cluster remove nope, destroy nope --yes', async () => {
    const [remove, destroy, destroyJson] = await Promise.all([
      run(['cluster', 'remove', 'nope']),
      run(['destroy', 'nope', '--yes']),
      run(['destroy', 'nope', '--yes', '--json']),
    ])
    for (const r of [remove, destroy]) {
      expect(r.code, r.stderr).toBe(5)
      expect(r.stderr).toContain('"nope"')
      expect(r.stdout).toBe('')
    }
    expect(destroyJson.code).toBe(5)
    expect(destroyJson.json().error).toMatchObject({kind: 'noCluster', exitCode: 5})
    nothingRegistered()
  })

  it('a name that cannot be a cluster name is "no such cluster" too, not a path', async () => {
    const r = await run(['cluster', 'remove', '../../etc'])
    expect(r.code, r.stderr).toBe(5)
    expect(existsSync(join(dataDir, 'etc'))).toBe(false)
  })
})
