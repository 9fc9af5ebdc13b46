// FIDO security keys (sk-ssh-ed25519@openssh.com, sk-ecdsa-sha2-nistp256@openssh.com) as add-user reads
// them. ssh-keygen cannot make one without a FIDO device, so the keys are OpenSSH's own test keys and
// blobs built here from real key bytes (node:crypto); the real parser, `ssh-keygen -l`, is the judge:
// every key citc accepts it accepts with the same fingerprint, and every blob citc refuses it refuses.
import {execFileSync, spawnSync} from 'node:child_process'
import {generateKeyPairSync} from 'node:crypto'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../../src/lib/errors.js'
import {authorizedKeys, loadKeySpec, parseKeyLine, type PublicKey} from '../../../src/lib/users/keys.js'
import {parseUsersFile, prepareUsers, requestFromFlags} from '../../../src/lib/users/request.js'
import {parseSecurityKeyBlob, SK_ECDSA_P256, SK_ED25519} from '../../../src/lib/users/security-keys.js'

/**
 * OpenSSH's own test keys: openssh-portable, regress/unittests/sshkey/testdata/{ed25519_sk1,ed25519_sk2,
 * ecdsa_sk1,ecdsa_sk2}.pub, with the fingerprints of its ed25519_sk2.fp and ecdsa_sk2.fp.
 */
const OPENSSH = {
  ed25519sk1: 'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAICFo/k5LU8863u66YC9eUO2170QduohPURkQnbLa/dczAAAABHNzaDo= ED25519-SK test key #1',
  ed25519sk2: 'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAIBXx+7VJzfVAsrZH/MY903e97nG4W8NzuYQBbFtoj5hzAAAABHNzaDo= ED25519-SK test key #2',
  ecdsask1:
    'sk-ecdsa-sha2-nistp256@openssh.com AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBGdVPkKOLUMZ7b6rZfS8BOHotic4NX4MmuyEmiuvkaeKlbb1F+5oNezRYHpcF6P104trNVEONCu1XX1CA7px+QUAAAAEc3NoOg== ECDSA-SK test key #1',
  ecdsask2:
    'sk-ecdsa-sha2-nistp256@openssh.com AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBJOX5JHqtOCU5mZxCQK0nc936VaKd7Oj+AeTihl1lxNCyYRizvroGVYa4HYHPepBEtrpxew/7gr2QCMAnvN2gVQAAAAEc3NoOg== ECDSA-SK test key #2',
}
const OPENSSH_FINGERPRINTS = {ed25519sk2: 'SHA256:b9BVPS5vuU4yu/FgweojLLg6zbfmBBoWLUgibdxxsoo', ecdsask2: 'SHA256:pz8VkgtRY3r50F4zSuzRlmq9c6vPTpJXLKKOgkyUcKE'}

const dir = mkdtempSync(join(tmpdir(), 'citc-sk-keys-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

// ---- blobs from known bytes ----

/** An SSH string: uint32 length, then the bytes. */
const str = (b: Buffer | string) => {
  const bytes = typeof b === 'string' ? Buffer.from(b, 'latin1') : b
  const n = Buffer.alloc(4)
  n.writeUInt32BE(bytes.length)
  return Buffer.concat([n, bytes])
}
const line = (type: string, ...fields: Buffer[]) => `${type} ${Buffer.concat(fields).toString('base64')} built@test`

/** A real ed25519 public key (32 bytes) and a real P-256 point (0x04 ‖ x ‖ y). */
const ED_PK = generateKeyPairSync('ed25519').publicKey.export({format: 'der', type: 'spki'}).subarray(-32)
const P256 = (() => {
  const jwk = generateKeyPairSync('ec', {namedCurve: 'P-256'}).publicKey.export({format: 'jwk'})
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')])
})()

const skEd = (o: {pk?: Buffer; app?: string; extra?: Buffer} = {}) => line(SK_ED25519, str(SK_ED25519), str(o.pk ?? ED_PK), str(o.app ?? 'ssh:'), o.extra ?? Buffer.alloc(0))
const skEc = (o: {curve?: string; point?: Buffer; app?: string} = {}) => line(SK_ECDSA_P256, str(SK_ECDSA_P256), str(o.curve ?? 'nistp256'), str(o.point ?? P256), str(o.app ?? 'ssh:'))

/**
 * A point on P-256 (y² = x³ − 3x + b mod p) with the first x ≥ `from` that has one: points OpenSSL
 * takes but sshkey_ec_validate_public refuses (a coordinate of ≤ 128 bits, or ≥ n − 1).
 */
function p256PointFrom(from: bigint): Buffer {
  const p = BigInt('0xffffffff00000001000000000000000000000000ffffffffffffffffffffffff')
  const b = BigInt('0x5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b')
  const pow = (a: bigint, e: bigint) => {
    let r = 1n
    for (a %= p; e > 0n; e >>= 1n, a = (a * a) % p) if (e & 1n) r = (r * a) % p
    return r
  }
  for (let x = from; ; x++) {
    const rhs = (((x * x * x - 3n * x + b) % p) + p) % p
    const y = pow(rhs, (p + 1n) / 4n) // p ≡ 3 (mod 4)
    if ((y * y) % p === rhs) return Buffer.from(`04${x.toString(16).padStart(64, '0')}${y.toString(16).padStart(64, '0')}`, 'hex')
  }
}
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')

/** What `ssh-keygen -l` says of one key line: its fingerprint, or undefined when it refuses the line. */
let n = 0
function keygenSays(keyLine: string): string | undefined {
  const f = join(dir, `k${n++}.pub`)
  writeFileSync(f, `${keyLine}\n`)
  const r = spawnSync('ssh-keygen', ['-l', '-f', f], {encoding: 'utf8'})
  return r.status === 0 ? r.stdout.split(/\s+/)[1] : undefined
}

const ok = (r: PublicKey | string): PublicKey => {
  if (typeof r === 'string') throw new Error(`expected a key, got: ${r}`)
  return r
}

describe('security keys accepted', () => {
  it('OpenSSH’s own sk test keys: type, 256 bits, application, comment, OpenSSH’s fingerprint, the line unchanged', () => {
    for (const [name, keyLine] of Object.entries(OPENSSH)) {
      const k = ok(parseKeyLine(keyLine, 'test'))
      expect(k.type).toBe(keyLine.split(' ')[0])
      expect(k.bits).toBe(256)
      expect(k.application).toBe('ssh:')
      expect(k.comment).toMatch(/^(ED25519|ECDSA)-SK test key #\d$/)
      expect(k.line).toBe(keyLine)
      expect(k.fingerprint, name).toBe(keygenSays(keyLine))
    }
    expect(ok(parseKeyLine(OPENSSH.ed25519sk2, 'test')).fingerprint).toBe(OPENSSH_FINGERPRINTS.ed25519sk2)
    expect(ok(parseKeyLine(OPENSSH.ecdsask2, 'test')).fingerprint).toBe(OPENSSH_FINGERPRINTS.ecdsask2)
  })

  it.each([
    ['ed25519-sk from a real ed25519 key', skEd()],
    ['ecdsa-sk from a real P-256 point', skEc()],
    ['an application other than "ssh:" (OpenSSH only asks that it be there)', skEd({app: 'ssh:citc-test'})],
    ['an empty application', skEd({app: ''})],
  ])('%s: accepted, as ssh-keygen accepts it, with its fingerprint', (_, keyLine) => {
    const k = ok(parseKeyLine(keyLine, 'test'))
    expect(k.line).toBe(keyLine)
    expect(k.fingerprint).toBe(keygenSays(keyLine))
  })

  it('a NUL ending the application or the curve name, which OpenSSH reads past: accepted, written as OpenSSH writes it back', () => {
    for (const [odd, plain] of [
      [skEd({app: 'ssh:\0'}), skEd()],
      [skEc({curve: 'nistp256\0'}), skEc()],
    ]) {
      const k = ok(parseKeyLine(odd, 'test'))
      expect(k.line).toBe(plain)
      expect(k.application).toBe('ssh:')
      expect(k.fingerprint).toBe(keygenSays(odd)) // ssh-keygen's fingerprint is of the blob written back
    }
  })
})

describe('security keys refused, as ssh-keygen refuses them', () => {
  const smallX = p256PointFrom(5n)
  const largeX = p256PointFrom(P256_ORDER - 1n)
  it.each([
    ['the public key cut short (31 bytes)', skEd({pk: ED_PK.subarray(1)}), /the public key is 31 bytes; an ed25519 public key is 32/],
    ['a public key of 33 bytes', skEd({pk: Buffer.concat([ED_PK, Buffer.from([0])])}), /the public key is 33 bytes/],
    ['no application', line(SK_ED25519, str(SK_ED25519), str(ED_PK)), /it ends before the application string \(e\.g\. "ssh:"\)/],
    ['bytes after the application', skEd({extra: Buffer.from('junk')}), /4 bytes follow the application string/],
    ['a NUL inside the application', skEd({app: 'ss\0h:'}), /the application string .* holds a NUL byte/],
    ['a length longer than the data', line(SK_ED25519, str(SK_ED25519), str(ED_PK), Buffer.from([0, 0, 1, 0]), Buffer.from('ssh:')), /the application string .* is said to be 256 bytes long, but only 4 follow/],
    ['a length cut in the middle', line(SK_ED25519, str(SK_ED25519), str(ED_PK), Buffer.from([0, 0])), /it ends inside the length of the application string/],
    ['ecdsa-sk on another curve', skEc({curve: 'nistp384'}), /it names the curve "nistp384"; a sk-ecdsa-sha2-nistp256@openssh.com key is on nistp256/],
    ['a compressed point', skEc({point: Buffer.concat([Buffer.from([2]), P256.subarray(1, 33)])}), /not in uncompressed form \(it starts with 0x02, OpenSSH reads only 0x04\)/],
    ['a point cut short', skEc({point: P256.subarray(0, 64)}), /the EC point is 64 bytes; a nistp256 point is 65/],
    ['a point off the curve', skEc({point: Buffer.concat([P256.subarray(0, 64), Buffer.from([P256[64] ^ 1])])}), /the EC point is not on the nistp256 curve/],
    ['a point whose x has ≤ 128 bits (sshkey_ec_validate_public)', skEc({point: smallX}), /on the curve but not a public key OpenSSH accepts/],
    ['a point whose x is ≥ n − 1 (sshkey_ec_validate_public)', skEc({point: largeX}), /on the curve but not a public key OpenSSH accepts/],
    ['a line whose type is not its data’s', line(SK_ED25519, str(SK_ECDSA_P256), str('nistp256'), str(P256), str('ssh:')), /^the line says sk-ssh-ed25519@openssh.com, but its data is a sk-ecdsa-sha2-nistp256@openssh.com key$/],
    ['a security-key type OpenSSH does not have', line('sk-ssh-ed448@openssh.com', str('sk-ssh-ed448@openssh.com'), str(ED_PK), str('ssh:')), /key type sk-ssh-ed448@openssh.com is not accepted; the security-key types are/],
    ['a security-key certificate', line('sk-ssh-ed25519-cert-v01@openssh.com', str('sk-ssh-ed25519-cert-v01@openssh.com'), str(ED_PK)), /an SSH certificate/],
  ])('%s', (_, keyLine, why) => {
    const r = parseKeyLine(keyLine, 'test')
    expect(r).toMatch(why)
    expect(keygenSays(keyLine), 'ssh-keygen -l accepts what citc refuses').toBeUndefined()
  })

  it('says which key and what to do', () => {
    expect(parseKeyLine(skEd({pk: ED_PK.subarray(1)}), 'test')).toBe(
      'the sk-ssh-ed25519@openssh.com key\'s data is not a key OpenSSH would accept: the public key is 31 bytes; an ed25519 public key is 32; copy the whole line of the .pub file again',
    )
  })

  it('parseSecurityKeyBlob reads the parts of a blob and refuses a type it does not know', () => {
    const blob = Buffer.from(OPENSSH.ecdsask1.split(' ')[1], 'base64')
    expect(parseSecurityKeyBlob(SK_ECDSA_P256, blob)).toEqual({type: SK_ECDSA_P256, application: 'ssh:', bits: 256, blob})
    expect(parseSecurityKeyBlob(SK_ED25519, blob)).toBe(`it names the type "${SK_ECDSA_P256}", not ${SK_ED25519}`)
    expect(parseSecurityKeyBlob(SK_ED25519, Buffer.alloc(0))).toBe('it ends before the key type')
  })
})

describe('every way add-user takes a key', () => {
  const bad = skEd({extra: Buffer.from('!')})

  it('--key with the key itself, and with a .pub file: the file’s bad line located by number', async () => {
    expect((await loadKeySpec(OPENSSH.ed25519sk1, '--key')).keys.map((k) => k.line)).toEqual([OPENSSH.ed25519sk1])
    const f = join(dir, 'sk.pub')
    writeFileSync(f, `${OPENSSH.ecdsask1}\n${bad}\n`)
    const r = await loadKeySpec(f, '--key')
    expect(r.keys.map((k) => k.line)).toEqual([OPENSSH.ecdsask1])
    expect(r.problems).toEqual([
      {where: '--key', message: `${f} line 2 (${SK_ED25519} ${bad.split(' ')[1].slice(0, 16)}… built@test): the ${SK_ED25519} key's data is not a key OpenSSH would accept: 1 byte follow the application string (the data is damaged or not one key); copy the whole line of the .pub file again`},
    ])
  })

  it('users.yaml (--from): the key accepted, a damaged one located at its line and column', async () => {
    const text = `- {username: alice, firstName: Alice, surname: Liddell, keys: ["${OPENSSH.ed25519sk2}"]}\n- username: bob\n  firstName: Bob\n  surname: Ross\n  keys:\n    - "${OPENSSH.ecdsask2}"\n    - "${bad}"\n`
    const error = await prepareUsers(parseUsersFile(text, 'users.yaml')).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).problems).toEqual([
      {where: 'users.yaml:7:7', path: '[1].keys[1]', message: expect.stringMatching(/^the key "sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1l… built@test": the sk-ssh-ed25519@openssh.com key's data is not a key OpenSSH would accept: 1 byte follow/)},
    ])
    const [alice, bob] = await prepareUsers(parseUsersFile(text.split('\n').slice(0, 6).join('\n') + '\n', 'users.yaml'))
    expect(alice.keys.map((k) => k.line)).toEqual([OPENSSH.ed25519sk2])
    expect(bob.keys.map((k) => k.line)).toEqual([OPENSSH.ecdsask2])
  })

  it('the authorized_keys add-user writes holds the lines as given, and OpenSSH reads every one', async () => {
    const [u] = await prepareUsers([requestFromFlags({username: 'alice', firstName: 'A', surname: 'L', keys: [OPENSSH.ed25519sk1, OPENSSH.ecdsask1, skEc()]})])
    const text = authorizedKeys(u.keys)
    expect(text).toBe(`# Written by citc add-user.\n${OPENSSH.ed25519sk1}\n${OPENSSH.ecdsask1}\n${skEc()}\n`)
    const f = join(dir, 'authorized_keys')
    writeFileSync(f, text)
    const out = execFileSync('ssh-keygen', ['-lf', f], {encoding: 'utf8'}).trim().split('\n')
    expect(out.map((l) => l.split(' ')[1])).toEqual(u.keys.map((k) => k.fingerprint))
  })
})
