// `citc monitor`: reach the cluster's Prometheus (reach.ts), then either one instant query
// (--query) or the page server (server.ts) until Ctrl-C. The command is a thin shell over these two.
import type {Io} from '../io.js'
import {run, which} from '../tools/exec.js'
import {clusterRecord, reachPrometheus, type ReachOptions} from './reach.js'
import {instantQuery, resultTable, type QueryData} from './prometheus.js'
import {startMonitorServer} from './server.js'

export interface QueryDocument {
  cluster: string
  query: string
  /** Prometheus's `data`, as its API returned it. */
  data: QueryData
}

/** `citc monitor --query`: one instant query; the table is printed unless --json. */
export async function monitorQuery(io: Io, o: {dataDir: string; cluster?: string; query: string; reach?: ReachOptions}): Promise<QueryDocument> {
  const record = clusterRecord(o.dataDir, o.cluster)
  const reach = await reachPrometheus(record, o.reach)
  try {
    const data = await instantQuery(reach.baseUrl, o.query, {cluster: record.name, where: reach.description})
    if (!io.json) io.log(resultTable(data))
    return {cluster: record.name, query: o.query, data}
  } finally {
    await reach.close()
  }
}

/** Whether to start a browser: asked for, a display to show it on, not CI. */
export function shouldOpenBrowser(o: {open: boolean; env: NodeJS.ProcessEnv}): boolean {
  const ci = Boolean(o.env.CI) && o.env.CI !== 'false' && o.env.CI !== '0'
  return o.open && !ci && Boolean(o.env.DISPLAY || o.env.WAYLAND_DISPLAY)
}

/** xdg-open the URL; any failure is ignored (the URL is printed anyway). */
async function openBrowser(url: string): Promise<void> {
  const opener = await which('xdg-open')
  if (!opener) return
  await run(opener, [url], {timeoutMs: 15_000}).catch(() => {})
}

/** Resolves on the first SIGINT/SIGTERM (or when `signal` aborts). */
function interrupted(signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done)
      process.off('SIGTERM', done)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
    signal?.addEventListener('abort', done, {once: true})
    if (signal?.aborted) done()
  })
}

/** `citc monitor`: serve the page until Ctrl-C; then close the server and the tunnel. */
export async function monitorServe(io: Io, o: {dataDir: string; cluster?: string; port?: number; open: boolean; reach?: ReachOptions; signal?: AbortSignal}): Promise<{cluster: string; url: string}> {
  const record = clusterRecord(o.dataDir, o.cluster)
  const reach = await reachPrometheus(record, o.reach)
  try {
    // Say at once when Prometheus does not answer, rather than serve a page of errors.
    await instantQuery(reach.baseUrl, 'vector(1)', {cluster: record.name, where: reach.description, timeoutMs: 10_000})
    const server = await startMonitorServer({prometheusUrl: reach.baseUrl, port: o.port})
    try {
      io.note(`Prometheus: ${reach.description}`)
      io.log(`Cluster ${record.name}'s monitor page (this machine only; the token in the URL is the key):\n\n  ${server.url}\n`)
      io.note('Press Ctrl-C to stop.')
      if (shouldOpenBrowser({open: o.open, env: process.env})) void openBrowser(server.url)
      await interrupted(o.signal)
      return {cluster: record.name, url: server.url}
    } finally {
      await server.close()
    }
  } finally {
    await reach.close()
  }
}
