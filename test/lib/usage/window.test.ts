import {describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {parseUsageDate, usageWindow} from '../../../src/lib/usage/window.js'

const T = (iso: string) => Date.parse(iso) / 1000
const now = T('2026-11-23T17:38:06Z')

describe('parseUsageDate', () => {
  it('reads dates and times as UTC', () => {
    expect(parseUsageDate('2026-11-01', now)).toBe(T('2026-11-01T00:00:00Z'))
    expect(parseUsageDate('2026-11-01T08:30', now)).toBe(T('2026-11-01T08:30:00Z'))
    expect(parseUsageDate('2026-11-01T08:30:15Z', now)).toBe(T('2026-11-01T08:30:15Z'))
    expect(parseUsageDate(' 2028-02-29 ', now)).toBe(T('2028-02-29T00:00:00Z'))
  })

  it('reads now, today, yesterday and times before now', () => {
    expect(parseUsageDate('now', now)).toBe(now)
    expect(parseUsageDate('TODAY', now)).toBe(T('2026-11-23T00:00:00Z'))
    expect(parseUsageDate('yesterday', now)).toBe(T('2026-11-22T00:00:00Z'))
    expect(parseUsageDate('7d', now)).toBe(now - 7 * 86_400)
    expect(parseUsageDate('12h', now)).toBe(now - 12 * 3600)
    expect(parseUsageDate('2w', now)).toBe(now - 14 * 86_400)
  })

  it('refuses what does not exist or is ambiguous', () => {
    const bad = ['', 'last month', '2026-02-29', '2026-13-01', '2026-11-31', '2026-11-01T24:00', '2026-11-01T12:60', '2026-11-01T10:00+02:00', '11/01/2026', '7m', '-7d', '1.5d']
    for (const text of bad) expect(parseUsageDate(text, now), text).toBeUndefined()
  })
})

describe('usageWindow', () => {
  it('defaults to the current month up to now', () => {
    expect(usageWindow({}, now)).toEqual({since: T('2026-11-01T00:00:00Z'), until: now})
    // At the first second of a month, the month before (never an empty window).
    const first = T('2026-12-01T00:00:00Z')
    expect(usageWindow({}, first)).toEqual({since: T('2026-11-01T00:00:00Z'), until: first})
  })

  it('keeps whole seconds', () => {
    expect(usageWindow({since: '1h'}, now + 0.75)).toEqual({since: now - 3600, until: now})
  })

  it('takes --until as exclusive, as sacct does', () => {
    expect(usageWindow({since: '2026-10-01', until: '2026-11-01'}, now)).toEqual({since: T('2026-10-01T00:00:00Z'), until: T('2026-11-01T00:00:00Z')})
  })

  it('refuses a bad date or an empty window as a usage error naming the flag', () => {
    const cases: [{since?: string; until?: string}, RegExp][] = [
      [{since: 'last week'}, /^--since "last week" is not a date$/],
      [{until: '2026-02-30'}, /^--until "2026-02-30" is not a date$/],
      [{since: 'today', until: 'today'}, /^--since \(2026-11-23T00:00:00Z\) must be before --until \(2026-11-23T00:00:00Z\)$/],
      [{since: '2026-12-01'}, /must be before --until \(2026-11-23T17:38:06Z\)/],
    ]
    for (const [flags, message] of cases) {
      let error: unknown
      try {
        usageWindow(flags, now)
      } catch (e) {
        error = e
      }
      expect(error, JSON.stringify(flags)).toBeInstanceOf(CitcError)
      expect((error as CitcError).exitCode).toBe(2)
      expect((error as CitcError).message).toMatch(message)
    }
  })
})
