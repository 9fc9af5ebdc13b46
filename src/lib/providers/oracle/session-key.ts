// The RSA pair an instance principal's session token is bound to, started as soon as the driver knows
// it needs one (oci-api.ts ociApi: no session kept from an earlier node program, session-cache.ts).
// Generating it takes 0.2–0.6 s of CPU on a small machine (bench/node-cold-start.ts measures the whole);
// generateKeyPair runs on libuv's thread pool, so it is made while the metadata service is read,
// instead of after. node:crypto only.
import {generateKeyPair} from 'node:crypto'

export interface SessionKeyPair {
  publicKey: string
  privateKey: string
}

let early: Promise<SessionKeyPair | undefined> | undefined

/** Start making the pair (once per process; a failure only means it is made later, synchronously). */
export function startSessionKey() {
  early ??= new Promise((resolve) => {
    generateKeyPair('rsa', {modulusLength: 2048, publicKeyEncoding: {type: 'spki', format: 'pem'}, privateKeyEncoding: {type: 'pkcs8', format: 'pem'}}, (error, publicKey, privateKey) =>
      resolve(error ? undefined : {publicKey, privateKey}),
    )
  })
}

/** The pair started early, once (a second token gets a new pair), or undefined when none was started. */
export async function takeSessionKey(): Promise<SessionKeyPair | undefined> {
  const p = early
  early = undefined
  return p
}
