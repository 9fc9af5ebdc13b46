// `citc monitor`'s page server: node:http on 127.0.0.1, every path behind a random token
// (`/<token>/…`: the URL printed is all a browser needs, and no cookie outlives the run). It serves
// the page (templates/monitor/), uPlot from its npm package (no CDN: it works offline) and a proxy of
// exactly two read-only Prometheus API calls the page makes. Anything else is refused: a wrong or
// missing token gets a bare 403, so nothing tells a stranger what runs here.
import {randomBytes, timingSafeEqual} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import {CitcError} from '../errors.js'
import {PACKAGE_ROOT} from '../package-root.js'

/** The Prometheus API paths the page may use, all GET. No admin, no targets, no series listing. */
export const PROXIED = new Set(['api/v1/query', 'api/v1/query_range'])
export const UPSTREAM_TIMEOUT_MS = 20_000

export const PAGE_DIR = join(PACKAGE_ROOT, 'templates', 'monitor')

/** uPlot's dist/ folder, wherever npm put the package. */
function uplotDist(): string {
  return dirname(createRequire(import.meta.url).resolve('uplot'))
}

interface Asset {
  type: string
  body: Buffer
}

function loadAssets(): Map<string, Asset> {
  const dist = uplotDist()
  const files: Array<[string, string, string]> = [
    ['', join(PAGE_DIR, 'index.html'), 'text/html; charset=utf-8'],
    ['monitor.js', join(PAGE_DIR, 'monitor.js'), 'text/javascript; charset=utf-8'],
    ['monitor.css', join(PAGE_DIR, 'monitor.css'), 'text/css; charset=utf-8'],
    ['uplot.js', join(dist, 'uPlot.iife.min.js'), 'text/javascript; charset=utf-8'],
    ['uplot.css', join(dist, 'uPlot.min.css'), 'text/css; charset=utf-8'],
  ]
  return new Map(files.map(([path, file, type]) => [path, {type, body: readFileSync(file)}]))
}

export interface MonitorServerOptions {
  /** Prometheus's base URL as this machine reaches it (reach.ts). */
  prometheusUrl: string
  /** 0 or absent: a free port. */
  port?: number
  /** Tests only: a known token. Default: 128 random bits. */
  token?: string
  upstreamTimeoutMs?: number
}

export interface MonitorServer {
  /** The page's URL, token included. */
  url: string
  port: number
  token: string
  close(): Promise<void>
}

/** A new token: 128 random bits, URL-safe. */
export const newToken = () => randomBytes(16).toString('base64url')

/** Same length and same bytes, in constant time. */
export function tokenMatches(given: string, token: string): boolean {
  const a = Buffer.from(given)
  const b = Buffer.from(token)
  return a.length === b.length && timingSafeEqual(a, b)
}

const SECURITY_HEADERS = {
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  // Scripts and styles of this server only; uPlot sets element styles from script, which CSP allows.
  'Content-Security-Policy': "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, {...SECURITY_HEADERS, 'Content-Type': type, 'Content-Length': Buffer.byteLength(body)})
  res.end(body)
}

const apiError = (res: ServerResponse, status: number, errorType: string, error: string) =>
  send(res, status, 'application/json', JSON.stringify({status: 'error', errorType, error}))

/**
 * Which request this is, from its path alone: 'forbidden' without the right token. Pure (the token
 * check is the first thing, and the same for every path).
 */
export function route(rawUrl: string, token: string): {kind: 'forbidden'} | {kind: 'redirect'} | {kind: 'asset' | 'api'; path: string; search: string} {
  const url = new URL(rawUrl, 'http://localhost')
  const [, first = '', ...rest] = url.pathname.split('/')
  if (!tokenMatches(first, token)) return {kind: 'forbidden'}
  // `/<token>` without its slash: the page's relative links need the slash.
  if (rest.length === 0) return {kind: 'redirect'}
  const path = rest.join('/')
  return {kind: PROXIED.has(path) ? 'api' : 'asset', path, search: url.search}
}

export async function startMonitorServer(o: MonitorServerOptions): Promise<MonitorServer> {
  const token = o.token ?? newToken()
  const assets = loadAssets()
  const base = o.prometheusUrl.replace(/\/+$/, '')
  const timeoutMs = o.upstreamTimeoutMs ?? UPSTREAM_TIMEOUT_MS

  async function proxy(res: ServerResponse, path: string, search: string): Promise<void> {
    let upstream: Response
    let body: Buffer
    try {
      upstream = await fetch(`${base}/${path}${search}`, {signal: AbortSignal.timeout(timeoutMs)})
      body = Buffer.from(await upstream.arrayBuffer())
    } catch (error) {
      const e = error as Error & {cause?: {code?: string}}
      const why = e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (e.cause?.code ?? e.message)
      apiError(res, 502, 'unavailable', `Prometheus does not answer (${why})`)
      return
    }
    send(res, upstream.status, upstream.headers.get('content-type') ?? 'application/json', body)
  }

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const r = route(req.url ?? '/', token)
    if (r.kind === 'forbidden') return send(res, 403, 'text/plain; charset=utf-8', 'Forbidden\n')
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'Method not allowed\n')
    if (r.kind === 'redirect') {
      res.writeHead(302, {...SECURITY_HEADERS, Location: `/${token}/`})
      res.end()
      return
    }
    if (r.kind === 'api') {
      proxy(res, r.path, r.search).catch(() => res.destroy())
      return
    }
    const asset = assets.get(r.path)
    if (!asset) return send(res, 404, 'text/plain; charset=utf-8', 'Not found\n')
    send(res, 200, asset.type, asset.body)
  }

  const server = createServer(handle)
  // A slow or idle client cannot hold the server: requests are small GETs.
  server.requestTimeout = 30_000
  server.headersTimeout = 10_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new CitcError('usage', `cannot serve the monitor page on 127.0.0.1:${o.port ?? 0}: ${error.code === 'EADDRINUSE' ? 'the port is in use' : error.message}`, {
          hint: 'choose another --port, or leave it out for a free one',
        }),
      ),
    )
    server.listen(o.port ?? 0, '127.0.0.1', () => resolve())
  })
  const port = (server.address() as {port: number}).port
  return {
    url: `http://127.0.0.1:${port}/${token}/`,
    port,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
