// Debian's Prometheus for tests: a temporary data directory, optionally filled with history by
// `promtool tsdb create-blocks-from openmetrics` (blocks Prometheus loads when it starts), no scrape
// targets, listening on a free loopback port. Stopped by PID, never by name.
import {execFileSync, spawn, type ChildProcess} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {sleep} from '../../src/lib/proc.js'
import {freePort} from './net.js'

export const PROMETHEUS = '/usr/bin/prometheus'
export const PROMTOOL = '/usr/bin/promtool'

export interface PrometheusSandbox {
  url: string
  pid: number
  dir: string
  log(): string
  stop(): Promise<void>
}

/** One series' samples for history(): [epoch seconds, value]. */
export interface Series {
  name: string
  labels: Record<string, string>
  points: Array<[number, number]>
}

/**
 * An OpenMetrics text of the series, each family once with its TYPE (counters: the family name
 * without `_total`, as OpenMetrics wants), ending `# EOF`.
 */
export function openMetrics(series: Series[], counters: ReadonlySet<string> = new Set()): string {
  const families = new Map<string, Series[]>()
  for (const s of series) families.set(s.name, [...(families.get(s.name) ?? []), s])
  const lines: string[] = []
  for (const [name, members] of families) {
    const counter = counters.has(name)
    lines.push(`# TYPE ${counter ? name.replace(/_total$/, '') : name} ${counter ? 'counter' : 'gauge'}`)
    for (const s of members) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(',')
      for (const [t, v] of s.points) lines.push(`${s.name}{${labels}} ${v} ${t}`)
    }
  }
  return `${lines.join('\n')}\n# EOF\n`
}

export async function startPrometheus(o: {history?: string} = {}): Promise<PrometheusSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'citc-prometheus-'))
  const data = join(dir, 'data')
  try {
    if (o.history !== undefined) {
      writeFileSync(join(dir, 'history.om'), o.history)
      execFileSync(PROMTOOL, ['tsdb', 'create-blocks-from', 'openmetrics', join(dir, 'history.om'), data], {stdio: 'pipe', timeout: 60_000})
    }
    const config = join(dir, 'prometheus.yml')
    writeFileSync(config, 'global:\n  scrape_interval: 15s\nscrape_configs: []\n')
    for (let attempt = 1; ; attempt++) {
      const port = await freePort()
      const child: ChildProcess = spawn(PROMETHEUS, [`--config.file=${config}`, `--storage.tsdb.path=${data}`, `--web.listen-address=127.0.0.1:${port}`], {stdio: ['ignore', 'ignore', 'pipe']})
      let log = ''
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString()
      })
      const url = `http://127.0.0.1:${port}`
      const gone = () => child.exitCode !== null || child.signalCode !== null
      const deadline = Date.now() + 30_000
      while (!gone() && Date.now() < deadline) {
        const ready = await fetch(`${url}/-/ready`, {signal: AbortSignal.timeout(2000)}).then(
          (r) => r.ok,
          () => false,
        )
        if (ready) {
          return {
            url,
            pid: child.pid!,
            dir,
            log: () => log,
            async stop() {
              if (!gone()) {
                const exited = new Promise<void>((r) => child.once('exit', () => r()))
                child.kill('SIGTERM')
                if ((await Promise.race([exited.then(() => 'ok'), sleep(10_000).then(() => 'timeout')])) === 'timeout') {
                  child.kill('SIGKILL')
                  await Promise.race([exited, sleep(5000)])
                }
              }
              rmSync(dir, {recursive: true, force: true})
            },
          }
        }
        await sleep(200)
      }
      if (!gone()) child.kill('SIGKILL')
      if (attempt >= 3 || !/address already in use/i.test(log)) throw new Error(`prometheus did not become ready on ${url}:\n${log}`)
    }
  } catch (error) {
    rmSync(dir, {recursive: true, force: true})
    throw error
  }
}
