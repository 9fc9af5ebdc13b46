// Key generation (citc create): the admin's key and the management node's host key, made here so the
// host key is known — and pinned — before the machine exists.
import ssh2 from 'ssh2' // the default import: named imports fail in plain Node ESM

import {parseSshPublicKey, publicKeyFingerprint} from './keys.js'

export interface GeneratedKeyPair {
  /** OpenSSH private key (PEM, unencrypted): for a 0600 file. */
  privateKey: string
  /** One line: "ssh-ed25519 AAAA… comment". */
  publicKey: string
  /** OpenSSH's SHA256 fingerprint of the public key. */
  fingerprint: string
}

/** A new ed25519 key pair (ssh2's generator: no ssh-keygen needed). */
export function generateEd25519KeyPair(comment: string): GeneratedKeyPair {
  // ssh2 1.x drops a leading zero byte of the 32-byte ed25519 public key (about one key in 256): the
  // pair is then malformed for every SSH implementation. Such a pair is thrown away and made again.
  for (let attempt = 0; attempt < 20; attempt++) {
    const pair = ssh2.utils.generateKeyPairSync('ed25519', {comment})
    const publicKey = pair.public.trim()
    if (parseSshPublicKey(publicKey) instanceof Error) continue
    return {privateKey: pair.private.endsWith('\n') ? pair.private : `${pair.private}\n`, publicKey, fingerprint: publicKeyFingerprint(publicKey)}
  }
  throw new Error('could not generate a well-formed ed25519 key pair in 20 attempts')
}
