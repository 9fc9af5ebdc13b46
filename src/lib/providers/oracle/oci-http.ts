// One signed request to an OCI API (sent by ../http-exchange.ts; the Core API is https, the fake OCI of the
// tests, a TEST DOUBLE, is http on loopback), and its answer or error as oci-common 2.139.1's
// GenericRetrier.makeServiceCall gives them — what failures.ts classifies:
//   2xx        the status, headers and body text.
//   HTTP error an OciError {statusCode, serviceCode, message, opcRequestId}: OCI's JSON {code, message};
//              else serviceCode "None" and the body text, else the status text, else "unknown reason.".
//   no answer  an Error whose message starts "fetch failed" (what the SDK's fetch said, so it classifies
//              as before: transient), with the socket's code and words added (the SDK dropped them).
//   time limit an Error {code: 'ETIMEDOUT', message: 'Timed out after <ms>ms'} (the SDK's breaker's words):
//              the limit covers the whole exchange, answer body included; the request is then abandoned.
// No retries here (the driver retries, cloud-driver.ts).
import type {IncomingHttpHeaders} from 'node:http'

import {httpExchange, type HttpAnswer} from '../http-exchange.js'

export interface SignedRequest {
  method: string
  url: string
  headers: Record<string, string>
  body?: string
}

export interface OciAnswer {
  status: number
  headers: IncomingHttpHeaders
  text: string
}

/** An OCI service error, with the fields oci-common's OciError has that citc reads (failures.ts). */
export class OciError extends Error {
  constructor(
    readonly statusCode: number,
    readonly serviceCode: string,
    message: string,
    readonly opcRequestId: string | undefined,
    readonly operationName: string,
    readonly requestEndpoint: string,
  ) {
    super(message)
  }
}

const header = (h: IncomingHttpHeaders, name: string) => {
  const v = h[name]
  return Array.isArray(v) ? v[0] : v
}

/** The OciError for a non-2xx answer, as oci-common's handleErrorResponse makes it. */
export function ociError(a: OciAnswer & {statusText?: string}, operationName: string, requestEndpoint: string): OciError {
  let body: unknown = a.text
  try {
    body = JSON.parse(a.text)
  } catch {
    // not JSON: the text is the message
  }
  const id = header(a.headers, 'opc-request-id')
  const b = body as {code?: unknown; message?: unknown} | null
  if (b && typeof b === 'object' && b.code && b.message) return new OciError(a.status, String(b.code), String(b.message), id, operationName, requestEndpoint)
  if (typeof body === 'string' && body.length > 0) return new OciError(a.status, 'None', body, id, operationName, requestEndpoint)
  if (a.statusText) return new OciError(a.status, 'None', a.statusText, id, operationName, requestEndpoint)
  return new OciError(a.status, 'None', 'unknown reason.', id, operationName, requestEndpoint)
}

/** Send r; a 2xx answer, or throw as the header says. */
export async function sendOci(r: SignedRequest, operationName: string, timeoutMs: number): Promise<OciAnswer> {
  const endpoint = `${r.method} ${r.url}`
  let a: HttpAnswer
  try {
    // One limit for the whole exchange, as the SDK's breaker had (the connection's is the same).
    a = await httpExchange(new URL(r.url), {method: r.method, headers: r.headers, body: r.body, connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs})
  } catch (error) {
    const e = error as Error & {code?: string}
    if (e.name === 'TimeoutError') throw Object.assign(new Error(`Timed out after ${timeoutMs}ms`), {code: 'ETIMEDOUT', requestEndpoint: endpoint})
    // A request that got no answer: "fetch failed", as the SDK said, and what the socket said.
    throw Object.assign(new Error(`fetch failed (${e.message})`, {cause: e}), {code: e.code, requestEndpoint: endpoint})
  }
  const answer: OciAnswer = {status: a.status, headers: a.headers, text: a.body}
  if (a.status >= 200 && a.status <= 299) return answer
  throw ociError({...answer, statusText: a.statusText}, operationName, endpoint)
}
