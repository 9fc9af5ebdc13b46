// prices.yaml (usage/prices.ts parsePrices) under any input: prices or a located InvalidInputError,
// never a crash or a hang; no write while parsing; prices written from a model read back exactly.
import fc from 'fast-check'
import {describe, expect, it} from 'vitest'
import {stringify} from 'yaml'

import {MAX_PRICE, parsePrices} from '../../src/lib/usage/prices.js'
import {anyText, fsWritesDuring, mutated, parsesOrLocates, RUNS, yamlDocument} from './fuzz.js'

const lines = (...l: string[]) => l.join('\n') + '\n'
const VALID = [
  lines('currency: USD', 'shapes:', '  c5.xlarge: 0.17      # one node-hour', '  g4dn.xlarge: 0.526'),
  lines('# prices of this cluster', 'currency: EUR', 'shapes:', '  VM.Standard2.1: 0', '  n1-standard-2: 1', '  local_small: 0.01'),
  lines('currency: GBP', 'shapes: {local.small: 0.5, local.h100x1: 2.75}'),
]
const WORDS = ['currency', 'shapes', 'USD', 'EUR', 'usd', 'c5.xlarge', 'local.small', '0.17', 'a b', '__proto__', 'constructor']
const parse = (text: string) => parsePrices(text, 'prices.yaml')

describe('prices.yaml: any input gives prices or a located error', () => {
  it('the valid seeds parse', () => {
    for (const text of VALID) expect(() => parse(text)).not.toThrow()
  })

  it('any text', () => {
    fc.assert(fc.property(anyText, (text) => void parsesOrLocates(text, 'prices.yaml', parse)), {numRuns: RUNS})
  })

  it('any YAML document made of the format\'s words', () => {
    fc.assert(fc.property(yamlDocument(WORDS), (text) => void parsesOrLocates(text, 'prices.yaml', parse)), {numRuns: RUNS})
  })

  it('a valid file with lines deleted, duplicated or swapped, or characters changed', () => {
    fc.assert(fc.property(mutated(VALID), (text) => void parsesOrLocates(text, 'prices.yaml', parse)), {numRuns: RUNS})
  })

  it('writes nothing while parsing', () => {
    fc.assert(fc.property(fc.oneof(mutated(VALID), yamlDocument(WORDS)), (text) => {
      expect(fsWritesDuring(() => parse(text))).toEqual([])
    }), {numRuns: Math.ceil(RUNS / 3)})
  })
})

describe('prices.yaml: a file written from a model reads back as the model', () => {
  it('currency and every shape\'s price, in the order written', () => {
    const shape = fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/)
    const price = fc.double({min: 0, max: MAX_PRICE, noNaN: true}).map((p) => (Object.is(p, -0) ? 0 : p))
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Z]{3}$/), fc.uniqueArray(fc.tuple(shape, price), {selector: ([s]) => s, maxLength: 8}), fc.boolean(), (currency, shapes, flow) => {
        const prices = parse(stringify({currency, shapes: Object.fromEntries(shapes)}, {collectionStyle: flow ? 'flow' : 'block'}))
        expect(prices.currency).toBe(currency)
        // Number-like names ("12") are listed first by a plain object; the file's order is kept otherwise.
        expect(new Map([...prices.shapes].sort())).toEqual(new Map([...new Map(shapes)].sort()))
      }),
      {numRuns: RUNS},
    )
  })
})
