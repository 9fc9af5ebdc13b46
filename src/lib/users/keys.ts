// A user's SSH public keys from what `--key` says: a key itself, a path to a .pub file, or a URL
// (https://, file://; plain http:// only on loopback) such as a GitHub `https://github.com/NAME.keys`.
//
// Every key is read by a real parser (ssh2's, through transport/ssh/; FIDO security keys, which ssh2
// does not know, field by field as OpenSSH reads them: security-keys.ts) and checked: DSA and RSA keys
// under 2048 bits are refused, and so are lines that are not keys. A URL that fails, answers an HTTP
// error, times out, returns an HTML page or no keys at all is refused — CitC's `curl --silent` let an
// error page land in authorized_keys. Problems name the --key value and the line.
import {createPublicKey} from 'node:crypto'
import {readFile, stat} from 'node:fs/promises'
import {homedir} from 'node:os'
import {isAbsolute, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import type {InputProblem} from '../errors.js'
import {parseSshPublicKey, sshFingerprint} from '../transport/ssh/index.js'
import {parseSecurityKeyBlob, SK_ECDSA_P256, SK_ED25519} from './security-keys.js'

const MIN_RSA_BITS = 2048
/** Default time for a URL to answer completely. */
const KEY_FETCH_TIMEOUT_MS = 15_000
/** A keys file or page larger than this is not a keys file. */
const MAX_KEYS_BYTES = 1 << 20

export interface PublicKey {
  /** e.g. ssh-ed25519 */
  type: string
  /** The key blob, base64 (as in authorized_keys). */
  data: string
  comment: string
  /** RSA: the modulus length; ECDSA: the curve size; ed25519 and the security keys: 256. */
  bits: number
  /** A FIDO security key's application (relying party), usually "ssh:"; absent for other keys. */
  application?: string
  /** OpenSSH's `SHA256:` fingerprint. */
  fingerprint: string
  /** The normalized authorized_keys line: `type base64 comment` (no trailing space). */
  line: string
  /** Where it came from: the URL, the file, or "key given" (for messages and --json). */
  source: string
}

export interface KeyOptions {
  timeoutMs?: number
  maxBytes?: number
  /** Relative paths are resolved against this directory (default: the working directory). */
  baseDir?: string
}

export interface KeysResult {
  keys: PublicKey[]
  problems: InputProblem[]
}

/** `type base64 [comment]` with a type citc knows to look like a key (so a path is not mistaken for one). */
const LITERAL = /^\s*(?:ssh-[a-z0-9-]+|ecdsa-sha2-[a-z0-9-]+|sk-[a-z0-9@.-]+|[a-z0-9-]+-cert-v01@openssh\.com)\s+[A-Za-z0-9+/]/
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/
const ECDSA_BITS: Record<string, number> = {'ecdsa-sha2-nistp256': 256, 'ecdsa-sha2-nistp384': 384, 'ecdsa-sha2-nistp521': 521}
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g

/** Shorten a value for a message. */
function shown(value: string, max = 60): string {
  const one = value.replace(CONTROL, ' ').trim()
  return one.length > max ? `${one.slice(0, max - 3)}...` : one
}

/** A line for a message: a key as `type AAAAC3NzaC1l… comment`, anything else shortened. */
function describeLine(line: string): string {
  const [type, data, ...comment] = line.trim().split(/\s+/)
  if (data !== undefined && data.length > 24 && BASE64.test(data)) return shown([type, `${data.slice(0, 16)}…`, ...comment].join(' '))
  return shown(line)
}

/** The algorithm name a key blob starts with (an SSH string), if it looks like one. */
function blobType(blob: Buffer): string | undefined {
  if (blob.length < 4) return undefined
  const n = blob.readUInt32BE(0)
  if (n < 3 || n > 64 || blob.length < 4 + n) return undefined
  const name = blob.subarray(4, 4 + n).toString('latin1')
  return /^[a-z][a-z0-9@.-]*$/.test(name) ? name : undefined
}

/** Why one line of text is not an acceptable key; or the key. */
export function parseKeyLine(rawLine: string, source: string): PublicKey | string {
  const line = rawLine.trim()
  const tokens = line.split(/\s+/)
  const [type, data] = tokens
  if (/^-----BEGIN .*PRIVATE KEY-----/.test(line)) return 'this is a PRIVATE key: give the public key (the .pub file next to it), and keep the private key to yourself'
  if (/^---- BEGIN SSH2 PUBLIC KEY/.test(line)) return 'a key in RFC 4716 format: convert it with `ssh-keygen -i -f FILE` and give the result'
  if (/^-----BEGIN/.test(line)) return 'a PEM block, not an SSH public key: give the OpenSSH line ("ssh-ed25519 AAAA… comment")'
  const notAKey = `not an SSH public key (expected "type base64 [comment]", e.g. "ssh-ed25519 AAAAC3… you@laptop"; options before the key are not accepted)`
  if (tokens.length < 2 || !/^[a-z][a-z0-9@.-]*$/.test(type) || !BASE64.test(data)) return notAKey
  const decoded = Buffer.from(data, 'base64')
  const inner = blobType(decoded)
  if (inner === undefined) return notAKey
  if (inner !== type) return `the line says ${type}, but its data is a ${shown(inner, 40)} key`
  if (type === 'ssh-dss') return 'a DSA key: DSA is too weak (OpenSSH no longer accepts it); use an ed25519 key (ssh-keygen -t ed25519)'
  if (type.includes('-cert-')) return `an SSH certificate (${type}), not a plain public key`
  if (type.startsWith('sk-')) return securityKey(type, decoded, tokens, source)
  const parsed = parseSshPublicKey(`${type} ${data}`)
  if (parsed instanceof Error) return `does not parse as an SSH public key (${parsed.message})`
  if (parsed.isPrivate) return 'this is a PRIVATE key: give the public key (the .pub file next to it)'
  if (!decoded.equals(parsed.blob)) return `the ${type} key's data is damaged (${decoded.length - parsed.blob.length} bytes more than the key holds)`
  let bits: number
  if (parsed.type === 'ssh-rsa') {
    bits = createPublicKey(parsed.pem).asymmetricKeyDetails?.modulusLength ?? 0
    if (bits < MIN_RSA_BITS) return `an RSA key of ${bits} bits is too weak: at least ${MIN_RSA_BITS} are needed (better: ssh-keygen -t ed25519)`
  } else if (parsed.type === 'ssh-ed25519') {
    bits = 256
  } else if (ECDSA_BITS[parsed.type] !== undefined) {
    bits = ECDSA_BITS[parsed.type]
  } else {
    return `key type ${parsed.type} is not accepted; use ed25519, ecdsa or RSA (≥ ${MIN_RSA_BITS} bits)`
  }
  return publicKey(parsed.type, parsed.blob, bits, tokens, source)
}

/** The key of a line whose blob was read and checked. */
function publicKey(type: string, blob: Buffer, bits: number, tokens: string[], source: string, application?: string): PublicKey {
  // Control characters out, then the words joined by one space: the line written reads back as this key
  // with this comment (a comment "a \u0001" would otherwise leave "a " and read back as "a").
  const comment = tokens.slice(2).join(' ').replace(CONTROL, ' ').split(/\s+/).filter(Boolean).join(' ')
  const b64 = blob.toString('base64')
  return {
    type,
    data: b64,
    comment,
    bits,
    fingerprint: sshFingerprint(blob),
    line: comment ? `${type} ${b64} ${comment}` : `${type} ${b64}`,
    source,
    ...(application === undefined ? {} : {application}),
  }
}

/** A FIDO security key (ssh2 cannot read them): its blob read as OpenSSH reads it. */
function securityKey(type: string, blob: Buffer, tokens: string[], source: string): PublicKey | string {
  if (type !== SK_ED25519 && type !== SK_ECDSA_P256) {
    return `key type ${type} is not accepted; the security-key types are ${SK_ED25519} (ssh-keygen -t ed25519-sk) and ${SK_ECDSA_P256} (-t ecdsa-sk)`
  }
  const parts = parseSecurityKeyBlob(type, blob)
  if (typeof parts === 'string') return `the ${type} key's data is not a key OpenSSH would accept: ${parts}; copy the whole line of the .pub file again`
  return publicKey(type, parts.blob, parts.bits, tokens, source, parts.application)
}

/**
 * Every key in a text (one per line; blank lines and # comments skipped). Problems are
 * `{line: 1-based, message}`; a private key anywhere makes the whole text one problem.
 */
export function parseKeyText(text: string, source: string): {keys: PublicKey[]; problems: {line: number; text: string; message: string}[]} {
  const keys: PublicKey[] = []
  const problems: {line: number; text: string; message: string}[] = []
  const lines = text.replace(/^\uFEFF/, '').split('\n')
  const privateAt = lines.findIndex((l) => /PRIVATE KEY-----/.test(l))
  if (privateAt >= 0) {
    return {keys, problems: [{line: privateAt + 1, text: 'a private key', message: 'this is a PRIVATE key: give the public key (the .pub file next to it), and keep the private key to yourself'}]}
  }
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '')
    if (line.trim() === '' || line.trim().startsWith('#')) return
    const r = parseKeyLine(line, source)
    if (typeof r === 'string') problems.push({line: i + 1, text: describeLine(line), message: r})
    else keys.push(r)
  })
  return {keys, problems}
}

type Source = {kind: 'literal'; text: string} | {kind: 'file'; path: string} | {kind: 'url'; url: URL}

/** What a --key value is. Throws a message for a value that is none of them. */
export function classifyKeySpec(spec: string, baseDir = process.cwd()): Source {
  if (LITERAL.test(spec) || spec.includes('\n')) return {kind: 'literal', text: spec}
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(spec)?.[1]?.toLowerCase()
  if (scheme !== undefined) {
    let url: URL
    try {
      url = new URL(spec)
    } catch {
      throw new Error('is not a valid URL')
    }
    if (scheme === 'file') return {kind: 'file', path: fileURLToPath(url)}
    if (scheme === 'https') return {kind: 'url', url}
    if (scheme === 'http') {
      if (isLoopback(url.hostname)) return {kind: 'url', url}
      throw new Error(`plain http:// is refused (the keys could be swapped on the way): use https://${spec.slice('http://'.length)}`)
    }
    throw new Error(`${scheme}:// is not supported: give a key, a path to a .pub file, an https:// or a file:// URL`)
  }
  if (/^AAAA[A-Za-z0-9+/]{20,}/.test(spec.trim())) throw new Error('looks like a key without its type: give the whole line, e.g. "ssh-ed25519 AAAA… comment"')
  let path = spec
  if (path === '~' || path.startsWith('~/')) path = homedir() + path.slice(1)
  return {kind: 'file', path: isAbsolute(path) ? path : resolve(baseDir, path)}
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || hostname === '::1' || /^127\.\d+\.\d+\.\d+$/.test(hostname)
}

/** Why a fetch failed, for people. */
function fetchFailure(error: unknown, timeoutMs: number): string {
  const e = error as Error & {cause?: {code?: string; message?: string}}
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `no complete answer within ${timeoutMs / 1000} s (timed out)`
  const cause = e?.cause
  if (cause?.code) {
    const what: Record<string, string> = {
      ECONNREFUSED: 'connection refused',
      ENOTFOUND: 'unknown host',
      EAI_AGAIN: 'cannot resolve the host name (no DNS?)',
      ECONNRESET: 'the connection was reset',
      ETIMEDOUT: 'the connection timed out',
      EHOSTUNREACH: 'host unreachable',
      ENETUNREACH: 'network unreachable',
      CERT_HAS_EXPIRED: 'the server’s TLS certificate has expired',
      DEPTH_ZERO_SELF_SIGNED_CERT: 'the server’s TLS certificate is self-signed',
      ERR_TLS_CERT_ALTNAME_INVALID: 'the server’s TLS certificate is for another name',
    }
    return `cannot fetch it: ${what[cause.code] ?? cause.message ?? cause.code} (${cause.code})`
  }
  return `cannot fetch it: ${cause?.message ?? e?.message ?? String(error)}`
}

/** Redirects followed at most (each one checked before it is followed). */
const MAX_REDIRECTS = 5

async function fetchText(url: URL, timeoutMs: number, maxBytes: number): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs)
  let res: Response
  let at = url
  for (let hops = 0; ; hops++) {
    try {
      res = await fetch(at, {signal, redirect: 'manual', headers: {accept: 'text/plain, */*;q=0.5', 'user-agent': 'citc add-user'}})
    } catch (error) {
      throw new Error(fetchFailure(error, timeoutMs))
    }
    const location = res.headers.get('location')
    if (res.status < 300 || res.status >= 400 || location === null) break
    await res.body?.cancel().catch(() => {})
    if (hops >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`)
    const next = new URL(location, at)
    if (next.protocol !== 'https:' && !(next.protocol === 'http:' && isLoopback(next.hostname))) {
      throw new Error(`redirects to ${shown(next.href)}; only https:// is followed`)
    }
    at = next
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {})
    throw new Error(`the server answered HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${res.status === 404 ? ' (no such page or user?)' : ''}`)
  }
  const type = res.headers.get('content-type') ?? ''
  if (/text\/html|application\/xhtml/i.test(type)) {
    await res.body?.cancel().catch(() => {})
    throw new Error(`the server answered with a web page (${type.split(';')[0]}), not a list of keys`)
  }
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = res.body?.getReader()
  if (reader) {
    // Only the network read is a fetch failure; an answer too large is said as such.
    const read = () => reader.read().catch((error: unknown) => Promise.reject(new Error(fetchFailure(error, timeoutMs))))
    for (;;) {
      const {done, value} = await read()
      if (done) break
      size += value.byteLength
      if (size > maxBytes) {
        await reader.cancel().catch(() => {})
        throw new Error(`the answer is larger than ${maxBytes} bytes: not a keys file`)
      }
      chunks.push(value)
    }
  }
  return Buffer.concat(chunks).toString('utf8')
}

async function readKeyFile(path: string, maxBytes: number): Promise<string> {
  const st = await stat(path).catch((error: unknown) => Promise.reject(readFailure(path, error)))
  if (st.isDirectory()) throw new Error(`${path} is a directory, not a public key file`)
  if (st.size > maxBytes) throw new Error(`${path} is ${st.size} bytes: too large for a public key file`)
  return readFile(path, 'utf8').catch((error: unknown) => Promise.reject(readFailure(path, error)))
}

/** Why a key file could not be read, for people. */
function readFailure(path: string, error: unknown): Error {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') {
    return new Error(`no such file: ${path} (--key takes a public key "ssh-ed25519 AAAA…", a path to a .pub file, or a URL such as https://github.com/NAME.keys)`)
  }
  return new Error(`cannot read ${path} (${code ?? (error as Error).message})`)
}

/**
 * The keys of one --key value. `where` locates problems (e.g. "--key", or "users.yaml:7:9");
 * every message names the value (the URL, the file, or the start of the key).
 */
export async function loadKeySpec(spec: string, where: string, opts: KeyOptions = {}): Promise<KeysResult> {
  const timeoutMs = opts.timeoutMs ?? KEY_FETCH_TIMEOUT_MS
  const maxBytes = opts.maxBytes ?? MAX_KEYS_BYTES
  const problem = (message: string): KeysResult => ({keys: [], problems: [{where, message}]})
  if (spec.trim() === '') return problem('is empty: give a public key, a path to a .pub file, or an https:// URL')
  let source: Source
  try {
    source = classifyKeySpec(spec, opts.baseDir)
  } catch (error) {
    return problem(`${shown(spec)}: ${(error as Error).message}`)
  }
  let text: string
  let label: string
  try {
    if (source.kind === 'literal') {
      text = source.text
      label = `the key "${describeLine(spec)}"`
    } else if (source.kind === 'file') {
      label = source.path
      text = await readKeyFile(source.path, maxBytes)
    } else {
      label = source.url.href
      text = await fetchText(source.url, timeoutMs, maxBytes)
    }
  } catch (error) {
    return problem(`${source.kind === 'url' ? source.url.href : spec}: ${(error as Error).message}`)
  }
  const parsed = parseKeyText(text, source.kind === 'literal' ? 'key given' : label)
  const oneLiteral = source.kind === 'literal' && !text.trim().includes('\n')
  // A key given as is is named by the label already; in a file or a page, say which line and what it holds.
  const problems = parsed.problems.map((p) => ({where, message: oneLiteral ? `${label}: ${p.message}` : `${label} line ${p.line} (${p.text}): ${p.message}`}))
  if (parsed.keys.length === 0 && problems.length === 0) {
    problems.push({where, message: `${label}: ${source.kind === 'url' ? 'the answer holds no keys (has that account any SSH keys?)' : 'holds no keys'}`})
  }
  return {keys: parsed.keys, problems}
}

export function dedupeKeys(keys: readonly PublicKey[]): PublicKey[] {
  const seen = new Set<string>()
  return keys.filter((k) => {
    const id = `${k.type} ${k.data}`
    if (seen.has(id)) return false
    seen.add(id)
    return true
  })
}

/** authorized_keys content for `keys`: one normalized line each, with a header. */
export function authorizedKeys(keys: readonly PublicKey[], header = '# Written by citc add-user.'): string {
  return [header, ...keys.map((k) => k.line)].join('\n') + '\n'
}
