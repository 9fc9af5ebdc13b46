// How `citc node sync` runs: once (what the systemd timer starts every 60 s), or as the
// citc-node-sync service's loop where systemd does not run (--every). The run itself is node-sync.ts.
// Kept free of heavy imports: a node program's start-up time counts.
import type {SyncSettings} from './sync-plan.js'

/** The settings given in seconds (the command's flags), in the milliseconds the planner takes; absent ones left to its defaults. */
export function syncSettings(seconds: {orphanGrace?: number; cooldown?: number; stuck?: number; startLost?: number}): Partial<SyncSettings> {
  const ms = {orphanGraceMs: seconds.orphanGrace, cooldownMs: seconds.cooldown, stuckMs: seconds.stuck, startLostMs: seconds.startLost}
  return Object.fromEntries(Object.entries(ms).flatMap(([k, s]) => (s === undefined ? [] : [[k, s * 1000]])))
}

/** One line for people after a run. */
export function syncSummary(r: {actions: Array<{ok: boolean}>; adminDown: Array<{name: string; reason: string}>; instances: number; nodes: number}): string {
  const failed = r.actions.filter((a) => !a.ok).length
  const quota = r.adminDown.length > 0 ? `; DOWN for an admin (quota, permission or setting): ${r.adminDown.map((q) => q.name).join(', ')}` : ''
  return `node sync: ${r.nodes} node(s), ${r.instances} instance(s), ${r.actions.length} action(s)${failed ? `, ${failed} FAILED` : ''}${quota}`
}

/** How often a waiting loop looks whether it was told to stop. */
const STOP_CHECK_MS = 500

/**
 * Run `once` every `everyMs` (from the start of one run to the start of the next) until `stop` is
 * aborted: a run is never cut short, the wait between runs is. A failing run is not fatal (the run
 * logs its own failures to the elastic log).
 */
export async function syncLoop(everyMs: number, once: () => Promise<unknown>, stop: AbortSignal): Promise<{stopped: true}> {
  while (!stop.aborted) {
    const started = Date.now()
    await once().catch(() => undefined)
    for (let left = everyMs - (Date.now() - started); left > 0 && !stop.aborted; left -= STOP_CHECK_MS) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(STOP_CHECK_MS, left)))
    }
  }
  return {stopped: true}
}

/**
 * The service: `syncLoop` until SIGTERM (systemd's stop) or SIGINT; the handlers are removed afterwards.
 * Each handler is `once`: a second signal takes Node's default and ends a run that is stuck.
 */
export async function syncService(everyMs: number, once: () => Promise<unknown>): Promise<{stopped: true}> {
  const stop = new AbortController()
  const onSignal = () => stop.abort()
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
  try {
    return await syncLoop(everyMs, once, stop.signal)
  } finally {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
  }
}
