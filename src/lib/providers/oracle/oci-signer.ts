// OCI's request signature (draft-cavage-http-signatures-08, rsa-sha256; OCI documentation, "Request
// Signatures") with node:crypto alone: what oci-common 2.139.1's DefaultRequestSigner (through
// http-signature 1.3.1 and sshpk) does to a request, step for step, so an Oracle node program with a kept
// session token (session-cache.ts) never loads oci-common (≈0.1 s of its start, bench/node-cold-start.ts).
//   headers  host (from the URL, with its port), x-date and date (the same instant: oci-common signs
//            x-date and http-signature adds Date), and for POST/PUT/PATCH content-type (application/json
//            unless given), content-length and x-content-sha256 (the body's SHA-256, base64).
//   signed   "x-date (request-target) host", then "Content-Type Content-Length x-content-sha256" for a
//            body method — in that case, as oci-common names them in the Authorization header; the
//            signing string uses the lower-case names, as the draft says.
//   header   Authorization: Signature version="1",keyId="…",algorithm="rsa-sha256",headers="…",signature="…"
// Checked byte for byte against oci-common's signer by test/lib/providers/oracle/oci-signer.test.ts.
import {createHash, createPrivateKey, sign, type KeyObject} from 'node:crypto'

export interface UnsignedRequest {
  method: string
  /** The whole URL; its path and query are the request target. */
  url: string
  /** Lower-case names. */
  headers: Record<string, string>
  body?: string
}

/** What signs: the keyId ("ST$<session token>" for an instance principal) and its private key (PEM or parsed). */
export interface SigningKey {
  keyId: string
  privateKey: string | KeyObject
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH'])
const SIGNED = ['x-date', '(request-target)', 'host']
// oci-common's names for these, kept in the Authorization header's headers="…" as it writes them.
const SIGNED_BODY = ['Content-Type', 'Content-Length', 'x-content-sha256']

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('base64')

/** The last key parsed, by its PEM: a node program signs every call with one key. */
let parsed: {pem: string; key: KeyObject} | undefined
function keyObject(k: string | KeyObject): KeyObject {
  if (typeof k !== 'string') return k
  if (parsed?.pem !== k) parsed = {pem: k, key: createPrivateKey(k)}
  return parsed.key
}

/** The request target as oci-common's signer takes it (url.parse(uri).path): path and query. */
function target(url: URL): string {
  return url.pathname + url.search
}

/** The headers to send: the request's own, the ones the signature covers, and Authorization. */
export function signOciRequest(r: UnsignedRequest, key: SigningKey, date: Date = new Date()): Record<string, string> {
  const url = new URL(r.url)
  const method = r.method.toUpperCase()
  const headers: Record<string, string> = {...r.headers}
  const when = date.toUTCString()
  headers.host ??= url.host
  headers['x-date'] ??= when
  headers.date ??= when
  const names = [...SIGNED]
  if (BODY_METHODS.has(method)) {
    headers['content-type'] ??= 'application/json'
    const body = r.body ?? ''
    headers['x-content-sha256'] = sha256(body)
    headers['content-length'] ??= String(Buffer.byteLength(body, 'utf8'))
    names.push(...SIGNED_BODY)
  }
  const lines = names.map((n) => {
    const h = n.toLowerCase()
    if (h === '(request-target)') return `(request-target): ${method.toLowerCase()} ${target(url)}`
    const v = headers[h]
    if (v === undefined || v === '') throw new Error(`signing ${method} ${r.url}: header ${h} is missing (oci-signer.ts)`)
    return `${h}: ${v}`
  })
  const signature = sign('sha256', Buffer.from(lines.join('\n'), 'utf8'), keyObject(key.privateKey)).toString('base64')
  headers.authorization = `Signature version="1",keyId="${key.keyId}",algorithm="rsa-sha256",headers="${names.join(' ')}",signature="${signature}"`
  return headers
}
