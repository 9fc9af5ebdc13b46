// A Transport that writes every command, its exit code and its output to a log file: the full
// remote output lives in the cluster's logs/ directory, the terminal shows only the summary.
// stdin is never logged (it is where secrets travel).
import {appendFileSync, mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import {checkResult} from './check.js'
import {shellQuote} from './quote.js'
import type {RunOptions, Transport} from './types.js'

export function withLog(inner: Transport, logFile: string): Transport {
  mkdirSync(dirname(logFile), {recursive: true, mode: 0o700})
  const write = (text: string) => appendFileSync(logFile, text, {mode: 0o600})
  const ts = () => new Date().toISOString()
  const logged = async (argv: string[], opts: RunOptions | undefined, call: () => ReturnType<Transport['run']>) => {
    write(`[${ts()}] $ ${shellQuote(argv)}${opts?.stdin === undefined ? '' : ' <stdin not logged>'}\n`)
    const r = await call()
    if (r.stdout) write(r.stdout.endsWith('\n') ? r.stdout : r.stdout + '\n')
    if (r.stderr) write(`[stderr] ${r.stderr}${r.stderr.endsWith('\n') ? '' : '\n'}`)
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
