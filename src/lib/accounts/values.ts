// Limit values in both directions: what a user may write in accounts.yaml, what sacctmgr prints back,
// and the one canonical text citc passes to sacctmgr and shows in a plan. Observed on slurmdbd 22.05:
// MaxWall is stored in minutes and printed "HH:MM:SS" or "D-HH:MM:SS" (48:00:00 reads back
// 2-00:00:00; 90:30 reads back 01:31:00); TRES memory is printed with a binary unit when it divides
// with a unit while that stays exact to a half (Slurm's convert_num_unit, CONVERT_NUM_UNIT_EXACT:
// 1024 → mem=1G, 2048000 → mem=2000G, 100000 → mem=100000M, 600000000 → mem=585937.50G).
import type {TresAmounts} from './types.js'

/** Slurm's limits are 32-bit counters; -1 (all bits) means "no limit". */
export const MAX_COUNT = 2_147_483_647

const MEM_UNITS: Readonly<Record<string, number>> = {K: 1 / 1024, M: 1, G: 1024, T: 1024 ** 2, P: 1024 ** 3}

const pad = (n: number) => String(n).padStart(2, '0')

/** Minutes as sacctmgr prints MaxWall: "01:30:00", "2-00:00:00". */
export function formatMinutes(minutes: number): string {
  const days = Math.floor(minutes / 1440)
  const hours = Math.floor((minutes % 1440) / 60)
  const clock = `${pad(hours)}:${pad(minutes % 60)}:00`
  return days > 0 ? `${days}-${clock}` : clock
}

export const DURATION_HELP = 'write minutes (90), "HH:MM:SS" ("48:00:00") or "D-HH:MM:SS" ("2-00:00:00")'

/**
 * A Slurm duration as whole minutes: a number of minutes, MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM or
 * D-HH:MM:SS. Seconds must be zero (Slurm would round them to a minute and every run would differ).
 */
export function parseMinutes(v: unknown): number | {error: string} {
  if (typeof v === 'number') {
    if (Number.isInteger(v) && v > 0 && v <= MAX_COUNT) return v
    return {error: `${v} is not a positive whole number of minutes; ${DURATION_HELP}`}
  }
  if (typeof v !== 'string') return {error: `a duration must be minutes or text such as "2-00:00:00"; ${DURATION_HELP}`}
  const s = v.trim()
  const m = /^(?:(\d+)-)?(\d+)(?::(\d{1,2}))?(?::(\d{1,2}))?$/.exec(s)
  if (!m) return {error: `${JSON.stringify(v)} is not a duration; ${DURATION_HELP}`}
  const [, d, a, b, c] = m
  let minutes: number
  let seconds = 0
  if (d !== undefined) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    const [h, mi, se] = [Number(a), Number(b ?? 0), Number(c ?? 0)]
    if (a.length > 2 || h >= 24 || mi >= 60 || se >= 60) return {error: `${JSON.stringify(v)} has a field out of range (hours < 24 after the days, minutes and seconds < 60); ${DURATION_HELP}`}
    minutes = Number(d) * 1440 + h * 60 + mi
    seconds = se
  } else if (c !== undefined) {
    // HH:MM:SS
    if (Number(b) >= 60 || Number(c) >= 60) return {error: `${JSON.stringify(v)} has minutes or seconds out of range (< 60); ${DURATION_HELP}`}
    minutes = Number(a) * 60 + Number(b)
    seconds = Number(c)
  } else {
    // MM or MM:SS
    if (b !== undefined && Number(b) >= 60) return {error: `${JSON.stringify(v)} has seconds out of range (< 60); ${DURATION_HELP}`}
    minutes = Number(a)
    seconds = Number(b ?? 0)
  }
  if (seconds !== 0) return {error: `${JSON.stringify(v)} has seconds; Slurm keeps MaxWall in whole minutes, so write ${JSON.stringify(formatMinutes(minutes + 1))} or ${JSON.stringify(formatMinutes(minutes))}`}
  if (minutes === 0) return {error: `${JSON.stringify(v)} would let no job run; give a positive duration, or remove MaxWall for no limit`}
  if (minutes > MAX_COUNT) return {error: `${JSON.stringify(v)} is too long`}
  return minutes
}

/** A TRES amount as sacctmgr prints it: digits, or memory with a unit (mem=16G, mem=585937.50G). Memory → MB. */
export function parseTresAmount(tres: string, text: string): number | undefined {
  const m = /^(\d+)(\.\d+)?([KMGTP])?$/.exec(text)
  if (!m) return undefined
  if (m[3] === undefined) return m[2] === undefined ? Number(m[1]) : undefined
  if (tres !== 'mem') return undefined
  const mb = Number(`${m[1]}${m[2] ?? ''}`) * MEM_UNITS[m[3]]
  // Slurm's halves (".50") times a power of 1024 are whole MB; anything else is not an amount.
  return Math.abs(mb - Math.round(mb)) < 1e-6 ? Math.round(mb) : undefined
}

/** "billing=7,cpu=6000,mem=100000M" → {billing: 7, cpu: 6000, mem: 100000}; undefined for text that is not one. */
export function parseTresList(text: string): Record<string, number> | undefined {
  const out: Record<string, number> = {}
  if (text === '') return out
  for (const item of text.split(',')) {
    const eq = item.indexOf('=')
    if (eq <= 0) return undefined
    const name = item.slice(0, eq)
    const amount = parseTresAmount(name, item.slice(eq + 1))
    if (amount === undefined) return undefined
    out[name] = amount
  }
  return out
}

/** {cpu: 6000, mem: 100} → "cpu=6000,mem=100" (sorted by name, memory in MB: what sacctmgr reads). */
export function formatTresList(amounts: TresAmounts): string {
  return Object.keys(amounts)
    .sort()
    .map((k) => `${k}=${amounts[k]}`)
    .join(',')
}
