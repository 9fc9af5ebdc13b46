// The instance principal's session between node programs: slurmctld starts one per power event, and
// each used to fetch a session token (metadata reads, an RSA key pair, a call to the auth service: the
// largest part of an Oracle node program's start, bench/node-cold-start.ts). The token and the private
// key it is bound to are kept in one file of the node programs' own state directory (NODE_PROGRAMS_STATE_DIR,
// providers/state-dir.ts), mode 0600, until shortly before the token expires. With them, the Core API
// endpoint of the cluster's region as the SDK worked it out during the handshake (realms, region files
// and variables: oci-common's EndpointBuilder), so a program with a kept session loads no SDK at all.
//   secret   the file holds a private key and a bearer token: written 0600 (atomically: a temp file
//            made 0600, then renamed), read only when it is this user's own and nobody else may read or
//            write it; never logged (errors name the file, never its content).
//   stale    a token that expires within SESSION_MARGIN_S, or a file that cannot be read, parsed, is
//            someone else's, for other endpoints or another region, or of an older citc (version 1 had
//            no endpoint): not used; the handshake runs and the file is rewritten.
//   refused  a token the API refuses (401) although it had not expired (revoked): oci-api.ts drops the
//            file and does the handshake once.
// No SDK: loaded with the driver.
import {rmSync} from 'node:fs'

import {readPrivateJson, writePrivateJson} from '../state-dir.js'

export const SESSION_FILE = 'oci-session.json'

/**
 * A token is used only while it has this long left: longer than a node program may take (resume's
 * budget, 300 s, tasks/node/node-programs.ts), so it never expires half-way.
 */
export const SESSION_MARGIN_S = 360

export interface CachedSession {
  /** The session token (a JWT; its `exp` says when it expires). */
  token: string
  /** The PEM private key the token is bound to (its public half went to the auth service). */
  privateKey: string
  /** The Core API base URL of the region (without the API version). */
  coreEndpoint: string
}

interface SessionFile extends CachedSession {
  version: 2
  /** Which metadata service and auth service the token came from: another's is not used. */
  endpoints: string
  /** The region coreEndpoint is of. */
  region: string
}

/** The token's expiry (epoch s), from its payload; undefined if it is not a JWT with `exp`. */
export function tokenExpiry(token: string): number | undefined {
  const payload = token.split('.')[1]
  if (!payload) return undefined
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as {exp?: unknown}).exp
    return typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined
  } catch {
    return undefined
  }
}

/** The cached session for these endpoints and this region, if it is usable now (see the header); else undefined. */
export function readSession(file: string, endpoints: string, region: string, nowS = Date.now() / 1000): CachedSession | undefined {
  const doc = readPrivateJson(file) as Partial<SessionFile> | undefined
  if (doc?.version !== 2 || doc.endpoints !== endpoints || doc.region !== region) return undefined
  if (typeof doc.token !== 'string' || typeof doc.privateKey !== 'string' || typeof doc.coreEndpoint !== 'string') return undefined
  if (!doc.privateKey.includes('PRIVATE KEY') || !/^https?:\/\//.test(doc.coreEndpoint)) return undefined
  const exp = tokenExpiry(doc.token)
  if (exp === undefined || exp - nowS < SESSION_MARGIN_S) return undefined
  return {token: doc.token, privateKey: doc.privateKey, coreEndpoint: doc.coreEndpoint}
}

/**
 * Keep the session for the next node program (0600, replacing the file atomically). A directory that
 * cannot be made or written only means the next program does the handshake again: never an error.
 */
export function writeSession(file: string, endpoints: string, region: string, session: CachedSession): boolean {
  return writePrivateJson(file, {version: 2, endpoints, region, token: session.token, privateKey: session.privateKey, coreEndpoint: session.coreEndpoint} satisfies SessionFile)
}

/** Forget the session (the API refused its token). */
export function dropSession(file: string) {
  rmSync(file, {force: true})
}
