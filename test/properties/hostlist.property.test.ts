// Slurm hostlists (slurm/hostlist.ts): any expression expands to names or is refused with a HostlistError
// naming the expression (never another error, never a hang: the limit bounds the output); and the two
// directions agree — compressing names and expanding the result gives the names back, sorted and
// without duplicates, in the one order compressHostlist documents, whatever order they came in.
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {compressHostlist, expandHostlist, HostlistError, SLURM_MAX_RANGE} from '../../src/lib/slurm/hostlist.js'
import {anyText, cpuMs, HANG_MS, RUNS} from './fuzz.js'

const LIMIT = 5_000
const clip = (s: string) => (s.length <= 80 ? s : `${s.slice(0, 79)}…`)

/** Expand within LIMIT, answering names or a HostlistError about this very expression. */
function namesOrRefusal(expr: string): string[] | HostlistError {
  const started = cpuMs()
  let r: string[] | HostlistError
  try {
    r = expandHostlist(expr, LIMIT)
  } catch (error) {
    if (!(error instanceof HostlistError)) throw error
    expect(error.expression).toBe(expr)
    expect(error.message).toContain(clip(expr))
    r = error
  }
  expect(cpuMs() - started).toBeLessThan(HANG_MS)
  if (Array.isArray(r)) expect(r.length).toBeLessThanOrEqual(LIMIT)
  return r
}

/** Host names citc and Slurm use: a prefix (digits inside allowed), maybe a number, maybe zero-padded. */
const prefix = fc.oneof(fc.constantFrom('n', 'c', 'demo-c5-xlarge-', 'rack2-n', 'gpu', 'a.b', 'x-', 'login', 'é'), fc.stringMatching(/^[a-z][a-z0-9.-]{0,6}[a-z.-]$/))
const number = fc.oneof(fc.integer({min: 0, max: 120}), fc.integer({min: 0, max: 99_999_999}), fc.constant(65_536), fc.constant(65_537))
const hostName = fc.oneof(
  {weight: 6, arbitrary: fc.tuple(prefix, number, fc.integer({min: 0, max: 5})).map(([p, n, w]) => p + String(n).padStart(w, '0'))},
  {weight: 1, arbitrary: prefix},
  {weight: 1, arbitrary: fc.string({minLength: 1, maxLength: 12}).filter((s) => !/[\s,[\]\u0000-\u0020]/.test(s))},
  {weight: 1, arbitrary: fc.tuple(prefix, fc.bigInt({min: 10n ** 14n, max: 10n ** 20n})).map(([p, n]) => p + n)},
)

/** Expressions: items with 0 to 3 bracket groups of small ranges, plus whatever text fast-check draws. */
const range = fc.tuple(fc.integer({min: 0, max: 120}), fc.integer({min: 0, max: 12}), fc.integer({min: 0, max: 4})).map(([lo, span, w]) => {
  const l = String(lo).padStart(w, '0')
  return span === 0 ? l : `${l}-${String(lo + span).padStart(w, '0')}`
})
const group = fc.array(range, {minLength: 1, maxLength: 3}).map((rs) => `[${rs.join(',')}]`)
const item = fc.tuple(prefix, fc.array(fc.tuple(group, fc.constantFrom('', '-', 'x')), {maxLength: 3})).map(([p, gs]) => p + gs.map(([g, lit], i) => (i === gs.length - 1 ? g : g + lit)).join(''))
const expression = fc.array(item, {minLength: 1, maxLength: 4}).map((items) => items.join(','))
const HOSTLIST_CHARS = [...'[]-,0123456789na ', '\t', '00', '65536', '99999999999999999']
const hostlistish = fc.array(fc.constantFrom(...HOSTLIST_CHARS), {maxLength: 40}).map((a) => a.join(''))

describe('hostlists: any expression gives names or a HostlistError about it', () => {
  it('any text, hostlist-looking text and well-formed expressions', () => {
    fc.assert(fc.property(fc.oneof(anyText, hostlistish, expression), (expr) => void namesOrRefusal(expr)), {
      numRuns: RUNS * 2,
      examples: [['n[1-65537]'], ['n[0-99999999]'], ['a[1-100]b[1-100]'], ['n[9007199254740993]'], ['[]'], ['n[1-3'], ['a]b'], [' , ']],
    })
  })

  it('compressHostlist of any list: an expression, or a HostlistError naming the name it cannot write', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(hostName, fc.string({maxLength: 6})), {maxLength: 8}), (names) => {
        try {
          compressHostlist(names)
        } catch (error) {
          if (!(error instanceof HostlistError)) throw error
          expect(names).toContain(error.expression)
          expect(error.expression === '' || /[\s,[\]\u0000-\u0020]/.test(error.expression)).toBe(true)
        }
      }),
      {numRuns: RUNS},
    )
  })
})

describe('hostlists: compression and expansion agree', () => {
  it('expandHostlist(compressHostlist(names)) is the names, each once, in an order that does not depend on the input\'s', () => {
    fc.assert(
      fc.property(fc.array(hostName, {maxLength: 30}), fc.integer(), (names, seed) => {
        const expr = compressHostlist(names)
        const back = expandHostlist(expr)
        expect(new Set(back).size).toBe(back.length)
        expect([...back].sort()).toEqual([...new Set(names)].sort())
        // The same names in another order, duplicated: the same expression.
        const shuffled = [...names, ...names.slice(0, 3)].sort((a, b) => ((a.length * 31 + seed) % 7) - ((b.length * 31 + seed) % 7))
        expect(compressHostlist(shuffled)).toBe(expr)
        // Compressing the expansion again changes nothing.
        expect(compressHostlist(back)).toBe(expr)
      }),
      {numRuns: RUNS},
    )
  })

  it('compressHostlist(expandHostlist(expr)) expands to the same names, sorted and deduplicated', () => {
    fc.assert(
      fc.property(expression, (expr) => {
        const names = namesOrRefusal(expr)
        if (!Array.isArray(names)) return fc.pre(false) // a few draws exceed LIMIT (products of groups)
        const again = expandHostlist(compressHostlist(names), LIMIT)
        expect([...again].sort()).toEqual([...new Set(names)].sort())
        expect(again).toEqual(expandHostlist(compressHostlist([...new Set(names)].reverse()), LIMIT))
      }),
      {numRuns: RUNS},
    )
  })

  it('no range it writes is larger than Slurm accepts', () => {
    fc.assert(
      fc.property(fc.integer({min: 0, max: 200_000}), fc.integer({min: 1, max: 140_000}), (lo, n) => {
        const names = Array.from({length: n}, (_, i) => `n${lo + i}`)
        const expr = compressHostlist(names)
        for (const m of expr.matchAll(/(\d+)-(\d+)/g)) expect(Number(m[2]) - Number(m[1]) + 1).toBeLessThanOrEqual(SLURM_MAX_RANGE)
        expect(expandHostlist(expr, 200_000)).toHaveLength(n)
      }),
      {numRuns: 20},
    )
  })
})
