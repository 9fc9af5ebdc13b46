// TEST DOUBLE of a cloud API that fails for a while (issue #23, fault 5): an HTTP proxy on 127.0.0.1
// in front of one of the fake clouds (ec2.ts, gce.ts, oci.ts). Outside an outage it passes every
// request through untouched (headers included, so the fakes' signature checks still hold); during one
// it either answers every request with the cloud's own server error (`error`: EC2's 500 InternalError,
// Google's 500 backendError, OCI's 500 InternalServerError, as the caller gives it), or accepts it and
// never answers (`hang`). A hung request is still passed to the cloud, whose answer is then thrown
// away: the cloud may have acted (launched, terminated) while the caller only sees its own timeout —
// the case idempotency tokens and the watchdog exist for.
import {createServer, request, type IncomingMessage, type ServerResponse} from 'node:http'
import type {Socket} from 'node:net'

import {listenOnLoopback} from './listen.js'

export type OutageMode = 'error' | 'hang'

/** The answer a cloud gives when it fails on its side. */
export interface ServerErrorAnswer {
  status: number
  contentType: string
  body: string
}

export interface OutageProxy {
  /** What a stand-in's `endpoints.api` is set to. */
  url: string
  /** From now on, every request fails this way (until end()). */
  start(mode: OutageMode): void
  /** Pass requests through again. Hung requests stay hung: their callers time out on their own. */
  end(): void
  /** The current mode, undefined outside an outage. */
  mode(): OutageMode | undefined
  /** Requests answered with the error, hung, and passed through. */
  counts: {error: number; hang: number; passed: number}
  close(): Promise<void>
}

export async function startOutageProxy(target: string, error: ServerErrorAnswer): Promise<OutageProxy> {
  let mode: OutageMode | undefined
  const counts = {error: 0, hang: 0, passed: 0}
  const sockets = new Set<Socket>()
  const to = new URL(target)

  /** The request sent on to the cloud; `answer` gets its response, or nothing when it is to be lost. */
  function forward(req: IncomingMessage, body: Buffer, answer?: ServerResponse) {
    const out = request({host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers}, (res) => {
      if (!answer) return void res.resume()
      answer.writeHead(res.statusCode ?? 502, res.headers)
      res.pipe(answer)
    })
    out.on('error', (e) => {
      if (answer && !answer.headersSent) {
        answer.writeHead(502, {'content-type': 'text/plain'})
        answer.end(`outage proxy: ${e.message}`)
      }
    })
    out.end(body)
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      if (mode === 'error') {
        counts.error++
        res.writeHead(error.status, {'content-type': error.contentType})
        return void res.end(error.body)
      }
      if (mode === 'hang') {
        counts.hang++
        return forward(req, body)
      }
      counts.passed++
      forward(req, body, res)
    })
  })
  server.on('connection', (s: Socket) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  const url = await listenOnLoopback(server)
  return {
    url,
    start: (m) => void (mode = m),
    end: () => void (mode = undefined),
    mode: () => mode,
    counts,
    async close() {
      for (const s of sockets) s.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** EC2's answer to a failure on its side (Amazon EC2 API Reference, "Error codes": InternalError, 500). */
export const EC2_INTERNAL_ERROR: ServerErrorAnswer = {
  status: 500,
  contentType: 'text/xml;charset=UTF-8',
  body: '<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>InternalError</Code><Message>An internal error has occurred (outage double)</Message></Error></Errors><RequestID>outage</RequestID></Response>',
}
