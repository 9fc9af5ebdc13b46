// TEST DOUBLE — the identity half of a fake OCI (test/doubles/cloud-api/oci.ts): the certificates an OCI
// instance finds in its metadata service, the auth service's session tokens, and the check of OCI's
// request signatures (draft-cavage HTTP signatures; OCI documentation, "Request Signatures"). Not Oracle's code: written from what
// oci-common 2.139.1 sends (X509FederationClient, DefaultRequestSigner) so that the real
// instance-principal chain runs offline, end to end, against it.
import {execFileSync} from 'node:child_process'
import {createHash, createPublicKey, randomUUID, sign, verify, X509Certificate, type KeyObject} from 'node:crypto'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {IncomingHttpHeaders} from 'node:http'

/** What the metadata service hands an instance: its leaf certificate and key, and the intermediate. */
export interface InstanceIdentity {
  tenancy: string
  instanceId: string
  leafCert: string
  leafKey: string
  intermediateCert: string
  /** For the fake auth service: the leaf's public key, the intermediate's (its issuer) and the leaf's SHA-1 fingerprint (aa:bb:…). */
  leafPublicKey: KeyObject
  intermediatePublicKey: KeyObject
  leafSha1: string
}

const openssl = (args: string[]) => execFileSync('openssl', args, {stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000})

/**
 * A throwaway CA ("intermediate") and an instance leaf it signs, with OCI's subject fields — the SDK
 * reads the tenancy from the leaf's `OU=opc-tenant:<ocid>`. Made with the openssl CLI (Node can read
 * X.509 but not issue it); RSA-2048, valid one day.
 */
export function makeInstanceIdentity(tenancy: string, instanceId: string): InstanceIdentity {
  const dir = mkdtempSync(join(tmpdir(), 'citc-fake-oci-'))
  try {
    const f = (n: string) => join(dir, n)
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=fake OCI intermediate (citc tests)'])
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('leaf.key'), '-out', f('leaf.csr'), '-subj', `/CN=${instanceId}/OU=opc-certtype:instance/OU=opc-instance:${instanceId}/OU=opc-tenant:${tenancy}`])
    openssl(['x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f('leaf.pem'), '-days', '1'])
    // The SDK reads the key as PKCS#1 or PKCS#8 PEM; openssl 3 writes PKCS#8.
    const leafCert = readFileSync(f('leaf.pem'), 'utf8')
    const intermediateCert = readFileSync(f('ca.pem'), 'utf8')
    const leaf = new X509Certificate(leafCert)
    return {
      tenancy,
      instanceId,
      leafCert,
      leafKey: readFileSync(f('leaf.key'), 'utf8'),
      intermediateCert,
      leafPublicKey: leaf.publicKey,
      intermediatePublicKey: new X509Certificate(intermediateCert).publicKey,
      // As sshpk prints it and the SDK puts it in the keyId: "ed:84:…" (lower-case, colon-separated).
      leafSha1: leaf.fingerprint.toLowerCase(),
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}

const b64url = (s: string | Buffer) => Buffer.from(s).toString('base64url')

/** The auth service's session tokens: a JWT per federation, bound to the session key it was asked for. */
export class FakeAuthService {
  private readonly sessions = new Map<string, KeyObject>()
  constructor(
    private readonly identity: InstanceIdentity,
    private readonly signingKey: string,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * POST /v1/x509: the body names the leaf (which must be ours and signed by the intermediate) and the
   * session public key; the request must be signed with the leaf's key. Returns the status and body.
   */
  federate(body: string): {status: number; json: unknown} {
    let req: {certificate?: string; publicKey?: string; intermediateCertificates?: string[]}
    try {
      req = JSON.parse(body)
    } catch {
      return {status: 400, json: {code: 'InvalidParameter', message: 'body is not JSON'}}
    }
    const pem = (b64: string | undefined, kind: string) => `-----BEGIN ${kind}-----\n${(b64 ?? '').replace(/\s+/g, '')}\n-----END ${kind}-----\n`
    let leaf: X509Certificate
    let session: KeyObject
    try {
      leaf = new X509Certificate(pem(req.certificate, 'CERTIFICATE'))
      session = createPublicKey(pem(req.publicKey, 'PUBLIC KEY'))
    } catch {
      return {status: 400, json: {code: 'InvalidParameter', message: 'certificate or publicKey unreadable'}}
    }
    if (!leaf.verify(this.identity.intermediatePublicKey) || (req.intermediateCertificates ?? []).length === 0) {
      return {status: 401, json: {code: 'NotAuthenticated', message: 'the certificate is not issued by the intermediate'}}
    }
    const t = Math.floor(this.now() / 1000)
    const head = b64url(JSON.stringify({alg: 'RS256', typ: 'JWT', kid: 'fake'}))
    const payload = b64url(JSON.stringify({sub: this.identity.instanceId, tenant: this.identity.tenancy, ptype: 'instance', iat: t, exp: t + 3600, jti: randomUUID()}))
    const token = `${head}.${payload}.${b64url(sign('sha256', Buffer.from(`${head}.${payload}`), this.signingKey))}`
    this.sessions.set(token, session)
    this.issued++
    return {status: 200, json: {token}}
  }

  /** The key a request's keyId stands for: a session token (ST$…) or, for /v1/x509, the leaf. */
  keyFor(keyId: string, federation: boolean): KeyObject | undefined {
    if (federation) return keyId === `${this.identity.tenancy}/fed-x509/${this.identity.leafSha1}` ? this.identity.leafPublicKey : undefined
    return keyId.startsWith('ST$') ? this.sessions.get(keyId.slice(3)) : undefined
  }

  private issued = 0

  get tokensIssued() {
    return this.issued
  }

  revoke() {
    this.sessions.clear()
  }
}

/**
 * Why a request's signature is not acceptable, or undefined when it is: the Authorization header's
 * signing string is rebuilt from the headers it names (lower-case names, `(request-target)` as
 * "<method> <path?query>"), checked with the key its keyId names, and a body's x-content-sha256 must
 * be its SHA-256. Every request must sign (request-target), host and a date.
 */
export function signatureProblem(
  method: string,
  url: string,
  headers: IncomingHttpHeaders,
  body: string,
  keyFor: (keyId: string) => KeyObject | undefined,
): string | undefined {
  const auth = headers.authorization
  if (!auth?.startsWith('Signature ')) return 'no Signature authorization'
  const params = Object.fromEntries([...auth.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]))
  if (params.version !== '1' || params.algorithm !== 'rsa-sha256' || !params.keyId || !params.signature || !params.headers) return 'signature parameters missing'
  // oci-common names some headers in mixed case ("Content-Type Content-Length"); the signing string
  // uses lower-case names, as draft-cavage says.
  const names = params.headers.split(' ').map((n) => n.toLowerCase())
  for (const need of ['(request-target)', 'host']) if (!names.includes(need)) return `${need} is not signed`
  if (!names.includes('date') && !names.includes('x-date')) return 'no date is signed'
  if (method === 'POST' || method === 'PUT') {
    for (const need of ['content-length', 'x-content-sha256']) if (!names.includes(need)) return `${need} is not signed`
    if (headers['x-content-sha256'] !== createHash('sha256').update(body).digest('base64')) return 'x-content-sha256 does not match the body'
  }
  const lines = []
  for (const n of names) {
    if (n === '(request-target)') lines.push(`(request-target): ${method.toLowerCase()} ${url}`)
    else {
      const v = headers[n]
      if (v === undefined) return `signed header ${n} is missing`
      lines.push(`${n}: ${Array.isArray(v) ? v.join(', ') : v}`)
    }
  }
  const key = keyFor(params.keyId)
  if (!key) return `unknown keyId ${params.keyId.slice(0, 40)}…`
  return verify('sha256', Buffer.from(lines.join('\n')), key, Buffer.from(params.signature, 'base64')) ? undefined : 'signature does not verify'
}
