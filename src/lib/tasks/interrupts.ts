// Ctrl-C / SIGTERM as an AbortSignal. Apart from listr.ts so that the read-only commands (status,
// nodes: management-session.ts) do not load listr2 just for this.
import {cancelled} from '../errors.js'

/** Runs `fn` with an AbortSignal that fires on Ctrl-C / SIGTERM; the handlers are removed afterwards. */
export async function withInterrupts<T>(fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController()
  const onSignal = (sig: NodeJS.Signals) => controller.abort(cancelled(`interrupted (${sig})`))
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    return await fn(controller.signal)
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}
