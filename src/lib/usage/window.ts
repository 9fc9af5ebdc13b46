// `citc usage --since DATE --until DATE` → the window [since, until) in Unix seconds. Pure: the clock
// is `now`. All times are UTC, as the report's days are.
//
// A DATE is one of:
//   2026-11-01                   midnight UTC at the start of that day
//   2026-11-01T08:30[:15][Z]     that time, UTC (no other offset: the report has one time zone)
//   now, today, yesterday        now; midnight UTC today; midnight UTC yesterday
//   7d, 12h, 2w                  that long before now (days, hours, weeks)
// --until is exclusive, as sacct's --endtime: `--since 2026-11-01 --until 2026-12-01` is November.
// Defaults: since the first day of the current month (a billing period), until now.
import {usageError} from '../errors.js'

export interface UsageWindow {
  since: number
  until: number
}

const DAY = 86_400
const UNIT_SECONDS: Record<string, number> = {h: 3600, d: DAY, w: 7 * DAY}
const HELP = 'write YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (UTC), now, today, yesterday, or a time before now such as 7d, 12h or 2w'

/** One DATE → Unix seconds, or undefined when it is not one of the forms above. */
export function parseUsageDate(text: string, now: number): number | undefined {
  const s = text.trim().toLowerCase()
  const midnight = Math.floor(now / DAY) * DAY
  if (s === 'now') return now
  if (s === 'today') return midnight
  if (s === 'yesterday') return midnight - DAY
  const ago = /^(\d{1,5})([hdw])$/.exec(s)
  if (ago) return now - Number(ago[1]) * UNIT_SECONDS[ago[2]]
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:t(\d{2}):(\d{2})(?::(\d{2}))?z?)?$/.exec(s)
  if (!m) return undefined
  const [y, mo, d, h = '0', mi = '0', sec = '0'] = m.slice(1)
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(sec))
  const back = new Date(ms)
  // Date.UTC rolls 2026-02-30 over into March, and 24:00 into the next day: refuse what does not exist.
  const exists =
    back.getUTCFullYear() === Number(y) &&
    back.getUTCMonth() === Number(mo) - 1 &&
    back.getUTCDate() === Number(d) &&
    back.getUTCHours() === Number(h) &&
    back.getUTCMinutes() === Number(mi) &&
    back.getUTCSeconds() === Number(sec)
  return exists ? ms / 1000 : undefined
}

/**
 * The window from the flags, in whole seconds (sacct's resolution; `now` may have a fraction). A bad
 * DATE or since ≥ until is a usage error (exit 2).
 */
export function usageWindow(flags: {since?: string; until?: string}, nowSeconds: number): UsageWindow {
  const now = Math.floor(nowSeconds)
  const read = (flag: 'since' | 'until', fallback: number) => {
    const text = flags[flag]
    if (text === undefined) return fallback
    const t = parseUsageDate(text, now)
    if (t === undefined) throw usageError(`--${flag} "${text.slice(0, 40)}" is not a date`, HELP)
    return t
  }
  // The first second of a month would make an empty window: then the month before.
  const d = new Date((now - 1) * 1000)
  const monthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) / 1000
  const since = read('since', monthStart)
  const until = read('until', now)
  if (since >= until) {
    const show = (t: number) => new Date(t * 1000).toISOString().replace(/\.000Z$/, 'Z')
    throw usageError(`--since (${show(since)}) must be before --until (${show(until)})`, 'give a window that ends after it starts; --until is exclusive and defaults to now')
  }
  return {since, until}
}
