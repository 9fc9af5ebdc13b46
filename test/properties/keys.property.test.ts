// SSH public keys as add-user reads them (users/keys.ts, as it is on main): for any line, a key or a
// message saying why not — never a throw, whatever the type says and whatever the data holds (garbage
// behind a well-formed type header reaches ssh2's own parser); every problem of a --key value located
// at the flag or the file position given; an accepted key's normalized line reads back as the same key.
// FIDO security keys (security-keys.ts, OpenSSH's own field-by-field reading) are among the seeds.
import {generateKeyPairSync} from 'node:crypto'

import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {classifyKeySpec, loadKeySpec, parseKeyLine, parseKeyText, type PublicKey} from '../../src/lib/users/keys.js'
import {anyText, cpuMs, HANG_MS, RUNS} from './fuzz.js'

/** An SSH wire-format string: uint32 length, then the bytes. */
const sshString = (b: Buffer | string) => {
  const body = typeof b === 'string' ? Buffer.from(b, 'latin1') : b
  const len = Buffer.alloc(4)
  len.writeUInt32BE(body.length)
  return Buffer.concat([len, body])
}
/** An SSH mpint: leading zero byte when the top bit is set. */
const mpint = (b: Buffer) => sshString(b[0] & 0x80 ? Buffer.concat([Buffer.alloc(1), b]) : b)
const b64u = (s: string) => Buffer.from(s, 'base64url')

/** Real public keys of every accepted type, written as OpenSSH writes them (no ssh-keygen needed). */
function realKeys(): string[] {
  const out: string[] = []
  const ed = generateKeyPairSync('ed25519').publicKey.export({format: 'jwk'})
  out.push(`ssh-ed25519 ${Buffer.concat([sshString('ssh-ed25519'), sshString(b64u(ed.x!))]).toString('base64')} alice@laptop`)
  for (const [curve, crv] of [['nistp256', 'P-256'], ['nistp384', 'P-384']] as const) {
    const k = generateKeyPairSync('ec', {namedCurve: crv}).publicKey.export({format: 'jwk'})
    const point = Buffer.concat([Buffer.from([4]), b64u(k.x!), b64u(k.y!)])
    out.push(`ecdsa-sha2-${curve} ${Buffer.concat([sshString(`ecdsa-sha2-${curve}`), sshString(curve), sshString(point)]).toString('base64')} bob@work`)
  }
  // FIDO security keys (ssh-keygen -t ed25519-sk / ecdsa-sk): the public key, then the application.
  out.push(`sk-ssh-ed25519@openssh.com ${Buffer.concat([sshString('sk-ssh-ed25519@openssh.com'), sshString(b64u(ed.x!)), sshString('ssh:')]).toString('base64')} carol@yubikey`)
  const p256 = generateKeyPairSync('ec', {namedCurve: 'P-256'}).publicKey.export({format: 'jwk'})
  const p256Point = Buffer.concat([Buffer.from([4]), b64u(p256.x!), b64u(p256.y!)])
  out.push(`sk-ecdsa-sha2-nistp256@openssh.com ${Buffer.concat([sshString('sk-ecdsa-sha2-nistp256@openssh.com'), sshString('nistp256'), sshString(p256Point), sshString('ssh:\0')]).toString('base64')}`)
  const rsa = generateKeyPairSync('rsa', {modulusLength: 2048}).publicKey.export({format: 'jwk'})
  out.push(`ssh-rsa ${Buffer.concat([sshString('ssh-rsa'), mpint(b64u(rsa.e!)), mpint(b64u(rsa.n!))]).toString('base64')}`)
  return out
}
const KEYS = realKeys()

const TYPES = [
  'ssh-ed25519', 'ssh-rsa', 'ssh-dss', 'ecdsa-sha2-nistp256', 'ecdsa-sha2-nistp384', 'ecdsa-sha2-nistp521',
  'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com', 'ssh-ed25519-cert-v01@openssh.com', 'ssh-ed448', 'x',
]
const type = fc.oneof(fc.constantFrom(...TYPES), fc.stringMatching(/^[a-z][a-z0-9@.-]{0,30}$/))
/** Garbage behind a well-formed header: the line's type, or another one, then random SSH strings and bytes. */
const blob = fc
  .tuple(type, fc.array(fc.oneof(fc.uint8Array({maxLength: 80}).map((b) => sshString(Buffer.from(b))), fc.uint8Array({maxLength: 8}).map((b) => Buffer.from(b))), {maxLength: 6}))
  .map(([t, parts]) => Buffer.concat([sshString(t), ...parts]))
const comment = fc.oneof(fc.constant(''), fc.string({maxLength: 20}), fc.string({unit: 'binary', maxLength: 20}))
const keyish = fc.oneof(
  fc.tuple(type, blob, comment).map(([t, b, c]) => `${t} ${b.toString('base64')} ${c}`),
  fc.tuple(fc.constantFrom(...KEYS), fc.nat(), fc.constantFrom('A', '/', '+', '=', ' ', '\t', '', 'é')).map(([k, at, ch]) => {
    const i = at % k.length
    return k.slice(0, i) + ch + k.slice(i + 1)
  }),
  fc.tuple(fc.constantFrom(...KEYS), fc.uint8Array({minLength: 1, maxLength: 16})).map(([k, extra]) => {
    const [t, data, ...rest] = k.split(' ')
    return [t, Buffer.concat([Buffer.from(data, 'base64'), Buffer.from(extra)]).toString('base64'), ...rest].join(' ')
  }),
  fc.tuple(fc.constantFrom(...KEYS), fc.nat()).map(([k, n]) => {
    const [t, data] = k.split(' ')
    const bytes = Buffer.from(data, 'base64')
    return `${t} ${bytes.subarray(0, n % bytes.length).toString('base64')}`
  }),
  anyText,
)

/** parseKeyLine, bounded in time, that must answer a key or a message. */
function keyOrMessage(line: string): PublicKey | string {
  const started = cpuMs()
  const r = parseKeyLine(line, 'key given')
  expect(cpuMs() - started).toBeLessThan(HANG_MS)
  if (typeof r === 'string') expect(r.trim()).not.toBe('')
  else expect(r.line).toBe(r.comment ? `${r.type} ${r.data} ${r.comment}` : `${r.type} ${r.data}`)
  return r
}

describe('SSH public keys: any line gives a key or a message', () => {
  it('the real keys are accepted (so the damaged ones start from real keys)', () => {
    for (const k of KEYS) expect(typeof parseKeyLine(k, 'key given')).toBe('object')
  })

  it('any line, well-formed headers with garbage behind them, and real keys damaged', () => {
    fc.assert(fc.property(keyish, (line) => void keyOrMessage(line)), {numRuns: RUNS * 2})
  })

  it('an accepted key\'s normalized line is the same key', () => {
    fc.assert(
      // Any comment, control characters included (a comment "a \u0001" once gave the line "… a " that read back as "a").
      fc.property(fc.constantFrom(...KEYS), comment, fc.constantFrom(' ', '  ', '\t'), (k, c, sep) => {
        const [t, data] = k.split(' ')
        const first = keyOrMessage(`${t}${sep}${data}${sep}${c}`)
        if (typeof first === 'string') throw new Error(`a real key was refused: ${first}`)
        const again = keyOrMessage(first.line)
        expect(again).toEqual(first)
      }),
      {numRuns: RUNS},
    )
  })

  it('a keys file: every problem at a line of the text', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(keyish, fc.constantFrom(...KEYS), fc.constant('# comment'), fc.constant('')), {maxLength: 6}), fc.constantFrom('\n', '\r\n'), (ls, eol) => {
        const text = ls.join(eol)
        const {keys, problems} = parseKeyText(text, 'alice.pub')
        const count = text.split('\n').length
        for (const p of problems) {
          expect(p.line >= 1 && p.line <= count).toBe(true)
          expect(p.message.trim()).not.toBe('')
        }
        for (const k of keys) expect(typeof keyOrMessage(k.line)).toBe('object')
      }),
      {numRuns: RUNS},
    )
  })
})

/** The value is a key itself (not a path or a URL): loading it reads no file and fetches nothing. */
function isLiteral(spec: string): boolean {
  try {
    return classifyKeySpec(spec, '/nonexistent').kind === 'literal'
  } catch {
    return false
  }
}

describe('SSH public keys: a --key value that is a key is loaded or refused at the place given', () => {
  it('every problem is at the flag or file position given, never a rejection', async () => {
    // Only values that are keys themselves (the line's form or several lines): no file is read, no URL fetched.
    const literal = fc.oneof(keyish.map((l) => `ssh-ed25519 ${l}`), fc.array(keyish, {minLength: 2, maxLength: 3}).map((ls) => ls.join('\n')), fc.constantFrom(...KEYS))
    await fc.assert(
      fc.asyncProperty(literal, fc.constantFrom('--key', 'users.yaml:4:10'), async (spec, where) => {
        fc.pre(isLiteral(spec))
        const r = await loadKeySpec(spec, where, {timeoutMs: 1000})
        expect(r.keys.length + r.problems.length).toBeGreaterThan(0)
        for (const p of r.problems) {
          expect(p.where).toBe(where)
          expect(p.message.trim()).not.toBe('')
        }
      }),
      {numRuns: Math.ceil(RUNS / 2)},
    )
  })
})
