// One HTTP(S) exchange on node:http / node:https, for the cloud drivers' own API clients (AWS's
// ec2-query.ts and IMDS, Oracle's oci-http.ts), which replace the SDKs on the node programs' path.
// Bounded as the AWS SDK's request handler bounded it (connectionTimeout, and requestTimeout with
// throwOnRequestTimeout): a connection not made in time and an answer not complete in time both end in
// an error named TimeoutError (code ETIMEDOUT), which each provider's failures.ts classifies as
// transient — the driver core retries it, the call itself never does.
import type {IncomingHttpHeaders} from 'node:http'

export interface HttpAnswer {
  status: number
  /** The status line's words ("Not Found"). */
  statusText: string
  headers: IncomingHttpHeaders
  body: string
}

export interface HttpLimits {
  /** Until the TCP connection is made. */
  connectTimeoutMs: number
  /** From the start until the whole answer is read. */
  requestTimeoutMs: number
}

const timeoutError = (message: string) => Object.assign(new Error(message), {name: 'TimeoutError', code: 'ETIMEDOUT'})

export async function httpExchange(url: URL, o: {method: string; headers: Record<string, string>; body?: string} & HttpLimits): Promise<HttpAnswer> {
  // Only the module the URL needs (node:https brings TLS): the stand-in's endpoints are plain HTTP.
  const {request} = url.protocol === 'https:' ? await import('node:https') : url.protocol === 'http:' ? await import('node:http') : fail(url)
  return new Promise<HttpAnswer>((resolve, reject) => {
    let settled = false
    const finish = (error: Error | undefined, answer?: HttpAnswer) => {
      if (settled) return
      settled = true
      clearTimeout(whole)
      clearTimeout(connecting)
      if (error) reject(error)
      else resolve(answer!)
    }
    const req = request(url, {method: o.method, headers: o.headers}, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => finish(undefined, {status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', headers: res.headers, body: Buffer.concat(chunks).toString('utf8')}))
      res.on('error', (e) => finish(e))
    })
    const whole = setTimeout(() => {
      const e = timeoutError(`${o.method} ${url.origin}${url.pathname}: no complete answer within ${o.requestTimeoutMs} ms (the request's time limit)`)
      req.destroy(e)
      finish(e)
    }, o.requestTimeoutMs)
    let connecting: NodeJS.Timeout | undefined
    req.on('socket', (socket) => {
      if (!socket.connecting) return // a kept-alive connection, already open
      connecting = setTimeout(() => {
        const e = timeoutError(`${url.origin}: no connection within ${o.connectTimeoutMs} ms`)
        req.destroy(e)
        finish(e)
      }, o.connectTimeoutMs)
      socket.once('connect', () => clearTimeout(connecting))
    })
    req.on('error', (e) => finish(e))
    req.end(o.body)
  })
}

function fail(url: URL): never {
  throw new Error(`${url.href}: only http: and https: endpoints can be called`)
}
