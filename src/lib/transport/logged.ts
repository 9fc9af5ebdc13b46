// A Transport that writes every command, its exit code and its output to a log file: the full
// remote output lives in the cluster's logs/ directory, the terminal shows only the summary.
// stdin is never logged (it is where secrets travel).
import {appendFileSync, mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import {checkResult} from './check.js'
import {shellQuote} from '../shell-quote.js'
import type {RunOptions, Transport} from './types.js'

/**
 * Output above this is data (sacct over a month, a directory of thousands), not a diagnosis: its
 * start and end are logged with its size, so a log stays readable and a report does not leave a
 * 15 MB file per run. Tool output (Ansible, Packer) stays well below it and is logged whole.
 */
export const LOG_OUTPUT_MAX = 1024 * 1024
const LOG_HEAD = 64 * 1024
const LOG_TAIL = 16 * 1024

/** The text logged for one stream: whole, or its head and tail around a note of what was left out. */
export function loggedOutput(text: string): string {
  const whole = text.endsWith('\n') ? text : text + '\n'
  if (text.length <= LOG_OUTPUT_MAX) return whole
  const head = text.slice(0, LOG_HEAD)
  const tail = text.slice(-LOG_TAIL)
  const lines = (t: string) => t.split('\n').length - 1
  return `${head}\n[… ${text.length - LOG_HEAD - LOG_TAIL} characters, about ${lines(text) - lines(head) - lines(tail)} lines, not logged …]\n${tail}${tail.endsWith('\n') ? '' : '\n'}`
}

export function withLog(inner: Transport, logFile: string): Transport {
  mkdirSync(dirname(logFile), {recursive: true, mode: 0o700})
  const write = (text: string) => appendFileSync(logFile, text, {mode: 0o600})
  const ts = () => new Date().toISOString()
  const logged = async (argv: string[], opts: RunOptions | undefined, call: () => ReturnType<Transport['run']>) => {
    write(`[${ts()}] $ ${shellQuote(argv)}${opts?.stdin === undefined ? '' : ' <stdin not logged>'}\n`)
    const r = await call()
    if (r.stdout) write(loggedOutput(r.stdout))
    if (r.stderr) write(`[stderr] ${loggedOutput(r.stderr)}`)
    write(`[${ts()}] exit ${r.exitCode}\n`)
    return r
  }
  return {
    description: inner.description,
    run: (argv, opts) => logged(argv, opts, () => inner.run(argv, opts)),
    check: async (argv, opts) => checkResult(argv, await logged(argv, opts, () => inner.run(argv, opts)), inner.description),
    readFile: async (path) => {
      const data = await inner.readFile(path)
      write(`[${ts()}] read ${path}: ${data === undefined ? 'absent' : `${data.length} bytes`}\n`)
      return data
    },
    writeFile: async (path, data, opts) => {
      await inner.writeFile(path, data, opts)
      write(`[${ts()}] wrote ${path} (${Buffer.byteLength(data)} bytes)\n`)
    },
    close: () => inner.close(),
  }
}
