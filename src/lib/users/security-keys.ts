// FIDO security keys' public keys (`ssh-keygen -t ed25519-sk` / `-t ecdsa-sk`), which ssh2's parser
// does not know. Their blob is read field by field as OpenSSH's sshkey_from_blob reads it (sshkey.c,
// ssh-ed25519.c, ssh-ecdsa.c, OpenSSH 9.x), so citc accepts the keys sshd accepts and refuses the rest:
//
//   sk-ssh-ed25519@openssh.com          string type, string public key (32 bytes), string application
//   sk-ecdsa-sha2-nistp256@openssh.com  string type, string curve "nistp256", string point, string application
//
// then nothing more. The application is only required to be there (sshkey_deserialize_sk); OpenSSH
// checks no "ssh:" prefix when it reads a public key, so neither does citc.
import {createPublicKey} from 'node:crypto'

export const SK_ED25519 = 'sk-ssh-ed25519@openssh.com'
export const SK_ECDSA_P256 = 'sk-ecdsa-sha2-nistp256@openssh.com'

/** What a security key's blob holds besides its public key. */
export interface SecurityKeyParts {
  type: typeof SK_ED25519 | typeof SK_ECDSA_P256
  /** The FIDO application (relying party) the key was made for, usually "ssh:". */
  application: string
  bits: 256
  /**
   * The blob as OpenSSH writes it back (sshkey_to_blob): the same bytes, except that a NUL ending the
   * curve name or the application (sshbuf_get_cstring reads a string without it) is dropped.
   * ssh-keygen's fingerprint, and sshd's comparison of keys, are of this blob.
   */
  blob: Buffer
}

const ED25519_PUBLIC_BYTES = 32
/** 0x04, then x and y of 32 bytes each: the only form OpenSSH reads (sshbuf_get_ec). */
const P256_POINT_BYTES = 65
/** The order n of P-256's group (FIPS 186-4, D.1.2.3). */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551')
const P256_ORDER_BITS = 256

/** Reads SSH strings (uint32 length, then the bytes) one after another; errors name the field. */
function stringReader(blob: Buffer) {
  let at = 0
  const next = (what: string): Buffer | string => {
    const left = blob.length - at
    if (left === 0) return `it ends before ${what}`
    if (left < 4) return `it ends inside the length of ${what}`
    const n = blob.readUInt32BE(at)
    if (n > left - 4) return `${what} is said to be ${n} bytes long, but only ${left - 4} follow`
    at += 4 + n
    return blob.subarray(at - n, at)
  }
  return {
    next,
    /** A string read as OpenSSH's sshbuf_get_cstring does: a NUL is allowed only as its last byte. */
    cstring(what: string): string | {error: string} {
      const b = next(what)
      if (typeof b === 'string') return {error: b}
      const nul = b.indexOf(0)
      if (nul >= 0 && nul < b.length - 1) return {error: `${what} holds a NUL byte`}
      return b.subarray(0, nul >= 0 ? nul : b.length).toString('latin1')
    },
    left: () => blob.length - at,
  }
}

function sshString(b: Buffer): Buffer {
  const n = Buffer.alloc(4)
  n.writeUInt32BE(b.length)
  return Buffer.concat([n, b])
}

const bitLength = (n: bigint) => (n === 0n ? 0 : n.toString(2).length)

/**
 * Why a nistp256 point is not a public key OpenSSH takes, or undefined: uncompressed, on the curve
 * (OpenSSL's own check, through node:crypto), and sshkey_ec_validate_public's bounds (each coordinate
 * longer than half the order's bits and below n - 1; P-256's cofactor is 1, so a point on the curve is
 * in the group and nQ = infinity holds).
 */
function p256PointProblem(point: Buffer): string | undefined {
  if (point.length === 0 || point[0] !== 0x04) {
    return `the EC point is not in uncompressed form (it starts with 0x${(point[0] ?? 0).toString(16).padStart(2, '0')}, OpenSSH reads only 0x04)`
  }
  if (point.length !== P256_POINT_BYTES) return `the EC point is ${point.length} bytes; a nistp256 point is ${P256_POINT_BYTES} (0x04, x, y)`
  const x = point.subarray(1, 33)
  const y = point.subarray(33)
  try {
    createPublicKey({key: {kty: 'EC', crv: 'P-256', x: x.toString('base64url'), y: y.toString('base64url')}, format: 'jwk'})
  } catch {
    return 'the EC point is not on the nistp256 curve'
  }
  const [bx, by] = [BigInt(`0x${x.toString('hex')}`), BigInt(`0x${y.toString('hex')}`)]
  if (bitLength(bx) <= P256_ORDER_BITS / 2 || bitLength(by) <= P256_ORDER_BITS / 2 || bx >= P256_ORDER - 1n || by >= P256_ORDER - 1n) {
    return 'the EC point is on the curve but not a public key OpenSSH accepts (a coordinate is out of its bounds)'
  }
  return undefined
}

/**
 * The parts of a security key's blob, or why it is not one (a clause: "it ends before …", "the EC point …").
 * `type` is the type the line names; the blob must name the same.
 */
export function parseSecurityKeyBlob(type: string, blob: Buffer): SecurityKeyParts | string {
  const r = stringReader(blob)
  const inner = r.cstring('the key type')
  if (typeof inner !== 'string') return inner.error
  if (inner !== type) return `it names the type ${JSON.stringify(inner.slice(0, 40))}, not ${type}`
  const fields: Buffer[] = [Buffer.from(type, 'latin1')]
  if (type === SK_ED25519) {
    const pk = r.next(`the ${ED25519_PUBLIC_BYTES}-byte public key`)
    if (typeof pk === 'string') return pk
    if (pk.length !== ED25519_PUBLIC_BYTES) return `the public key is ${pk.length} bytes; an ed25519 public key is ${ED25519_PUBLIC_BYTES}`
    fields.push(pk)
  } else if (type === SK_ECDSA_P256) {
    const curve = r.cstring('the curve name')
    if (typeof curve !== 'string') return curve.error
    if (curve !== 'nistp256') return `it names the curve ${JSON.stringify(curve.slice(0, 40))}; a ${SK_ECDSA_P256} key is on nistp256`
    const point = r.next('the EC point')
    if (typeof point === 'string') return point
    const problem = p256PointProblem(point)
    if (problem) return problem
    fields.push(Buffer.from(curve, 'latin1'), point)
  } else {
    return `${type} is not a security-key type citc knows (${SK_ED25519} and ${SK_ECDSA_P256} are)`
  }
  const application = r.cstring('the application string (e.g. "ssh:")')
  if (typeof application !== 'string') return application.error
  if (r.left() > 0) return `${r.left()} byte${r.left() === 1 ? '' : 's'} follow the application string (the data is damaged or not one key)`
  fields.push(Buffer.from(application, 'latin1'))
  return {type, application, bits: 256, blob: Buffer.concat(fields.map(sshString))}
}
