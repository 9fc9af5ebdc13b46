// AWS Signature Version 4 (the IAM User Guide, "Create a signed AWS API request"), on node:crypto:
// what ec2-query.ts signs its EC2 calls with instead of @smithy/signature-v4 (whose import, with the
// rest of the SDK, was most of a node program's start). Header-signed requests only (no presigned URLs,
// no chunked payloads): the payload is hashed whole, and its hash also goes in x-amz-content-sha256
// as the SDK sends it.
import {createHash, createHmac} from 'node:crypto'

export interface AwsCredentials {
  accessKeyId: string
  secretAccessKey: string
  /** A role's temporary credentials carry one; it is sent (and signed) as x-amz-security-token. */
  sessionToken?: string
  /** When temporary credentials stop working. */
  expiration?: Date
}

export interface SignableRequest {
  method: string
  /** The request's URL: its host (and port) and path are signed; a query string too. */
  url: URL
  /** Lower-case names; every one of them is signed. */
  headers: Record<string, string>
  body: string
}

const sha256 = (data: string) => createHash('sha256').update(data, 'utf8').digest('hex')
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest()

/** RFC 3986 percent-encoding as SigV4 wants it: encodeURIComponent leaves !'()* alone. */
export const uriEncode = (s: string) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

/** "20150830T123600Z" */
export const amzDate = (d: Date) => d.toISOString().replace(/[-:]/g, '').replace(/\.\d{3}/, '')

/** Path segments encoded once (not the slashes), as every service but S3 wants them. */
function canonicalPath(path: string): string {
  return path.split('/').map((seg) => uriEncode(decodeURIComponent(seg))).join('/') || '/'
}

/** Parameters sorted by encoded name, then value; a name without a value gets "name=". */
function canonicalQuery(url: URL): string {
  const pairs = [...url.searchParams].map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
  pairs.sort(([ak, av], [bk, bv]) => (ak < bk ? -1 : ak > bk ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
  return pairs.map(([k, v]) => `${k}=${v}`).join('&')
}

/** The derived key: HMAC chain of the date, region, service and "aws4_request" (IAM User Guide, "Calculate the signature"). */
export function signingKey(secretAccessKey: string, date: string, region: string, service: string): Buffer {
  return hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), region), service), 'aws4_request')
}

export function canonicalRequest(r: SignableRequest): {text: string; signedHeaders: string} {
  const names = Object.keys(r.headers).map((n) => n.toLowerCase()).sort()
  const lower = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k.toLowerCase(), v]))
  // Values trimmed, inner runs of spaces made one (the spec's Trimall).
  const headerLines = names.map((n) => `${n}:${String(lower[n]).trim().replace(/\s+/g, ' ')}\n`).join('')
  const signedHeaders = names.join(';')
  const text = [r.method.toUpperCase(), canonicalPath(r.url.pathname), canonicalQuery(r.url), headerLines, signedHeaders, sha256(r.body)].join('\n')
  return {text, signedHeaders}
}

/**
 * The headers to add for signing `r` at `now` (x-amz-date, x-amz-content-sha256, host, the session
 * token if any, and authorization). Every header of `r` is signed, so the caller decides the set.
 */
export function signV4(r: SignableRequest, o: {credentials: AwsCredentials; region: string; service: string; now: Date; contentSha256?: boolean}): Record<string, string> {
  const stamp = amzDate(o.now)
  const date = stamp.slice(0, 8)
  const added: Record<string, string> = {host: r.url.host, 'x-amz-date': stamp}
  if (o.contentSha256 !== false) added['x-amz-content-sha256'] = sha256(r.body)
  if (o.credentials.sessionToken) added['x-amz-security-token'] = o.credentials.sessionToken
  const {text, signedHeaders} = canonicalRequest({...r, headers: {...r.headers, ...added}})
  const scope = `${date}/${o.region}/${o.service}/aws4_request`
  const toSign = ['AWS4-HMAC-SHA256', stamp, scope, sha256(text)].join('\n')
  const signature = createHmac('sha256', signingKey(o.credentials.secretAccessKey, date, o.region, o.service)).update(toSign, 'utf8').digest('hex')
  return {...added, authorization: `AWS4-HMAC-SHA256 Credential=${o.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`}
}
