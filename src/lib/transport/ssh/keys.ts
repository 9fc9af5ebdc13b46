// SSH keys read with ssh2's parser: public keys (for `citc add-user --key` and fingerprints) and the
// private key a connection logs in with.
import {readFile} from 'node:fs/promises'

import ssh2 from 'ssh2' // the default import: named imports fail in plain Node ESM

import {InvalidInputError} from '../../errors.js'
import {sshFingerprint} from './host-key.js'

/** One SSH public key as ssh2's parser reads it (for `citc add-user --key`). */
export interface ParsedPublicKey {
  /** The algorithm, e.g. `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`. */
  type: string
  /** The raw key blob (what the base64 field of an authorized_keys line decodes to), re-encoded by ssh2. */
  blob: Buffer
  /** The public key as PEM (SPKI), for node:crypto (e.g. an RSA key's modulus length). */
  pem: string
  comment: string
  /** True when the text was a private key (then blob and pem are its public half). */
  isPrivate: boolean
}

/** Parse one key (`type base64 [comment]`, or a key file's text) with ssh2's parser; its error otherwise. */
export function parseSshPublicKey(text: string | Buffer): ParsedPublicKey | Error {
  let parsed: ReturnType<typeof ssh2.utils.parseKey>
  try {
    parsed = ssh2.utils.parseKey(text)
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
  if (parsed instanceof Error) return parsed
  const key = Array.isArray(parsed) ? (parsed[0] as typeof parsed | undefined) : parsed
  if (!key) return new Error('no key found')
  try {
    return {type: key.type, blob: key.getPublicSSH(), pem: key.getPublicPEM(), comment: key.comment ?? '', isPrivate: key.isPrivateKey()}
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error))
  }
}

/** The SHA256 fingerprint of an OpenSSH public key line ("ssh-ed25519 AAAA… [comment]"). */
export function publicKeyFingerprint(publicKeyLine: string): string {
  const parsed = parseSshPublicKey(publicKeyLine)
  if (parsed instanceof Error) throw new InvalidInputError([{where: 'public key', message: parsed.message}])
  return sshFingerprint(parsed.blob)
}

/** The private key itself, or read from the file it names (a file citc cannot read is invalid input). */
export async function loadPrivateKey(privateKey: Buffer | string): Promise<Buffer> {
  if (Buffer.isBuffer(privateKey)) return privateKey
  try {
    return await readFile(privateKey)
  } catch (error) {
    throw new InvalidInputError([{where: privateKey, message: `cannot read the private key (${(error as NodeJS.ErrnoException).code})`}])
  }
}
