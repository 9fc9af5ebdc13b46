// The one definition of "a command failed" for every Transport: throws a remote error (exit 4)
// with the command and the last lines of its output.
import {remoteError} from '../errors.js'
import {shellQuote} from '../shell-quote.js'
import type {RunResult} from './types.js'

export function checkResult(argv: string[], r: RunResult, where: string): RunResult {
  if (r.exitCode === 0) return r
  const output = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-10).join('\n')
  throw remoteError(`command failed on ${where} (exit ${r.exitCode}): ${shellQuote(argv)}${output ? `\n${output}` : ''}`, {
    details: {exitCode: r.exitCode},
  })
}
