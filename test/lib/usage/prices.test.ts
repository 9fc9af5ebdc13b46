import {readFileSync} from 'node:fs'

import {describe, expect, it} from 'vitest'

import {InvalidInputError, type InputProblem} from '../../../src/lib/errors.js'
import {parsePrices} from '../../../src/lib/usage/prices.js'

/** Fixtures as lines, so that line N of the file is the N-th argument. */
const lines = (...l: string[]) => l.join('\n') + '\n'

function problems(text: string): string[] {
  try {
    parsePrices(text, 'prices.yaml')
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).exitCode).toBe(3)
    return (error as InvalidInputError).problems.map((p: InputProblem) => (p.path ? `${p.where} ${p.path}: ${p.message}` : `${p.where}: ${p.message}`))
  }
  throw new Error('expected an InvalidInputError')
}

describe('parsePrices', () => {
  it('reads the example file', () => {
    const text = readFileSync(new URL('../../../examples/prices.yaml', import.meta.url), 'utf8')
    const prices = parsePrices(text, 'examples/prices.yaml')
    expect(prices.currency).toBe('USD')
    expect([...prices.shapes]).toEqual([
      ['t3a.medium', 0.0376],
      ['c5.xlarge', 0.17],
      ['g4dn.xlarge', 0.526],
    ])
  })

  it('accepts integer and zero prices, and shapes of every provider', () => {
    const prices = parsePrices(lines('currency: EUR', 'shapes:', '  VM.Standard2.1: 0', '  n1-standard-2: 1', '  local_small: 0.01'), 'p.yaml')
    expect([...prices.shapes]).toEqual([
      ['VM.Standard2.1', 0],
      ['n1-standard-2', 1],
      ['local_small', 0.01],
    ])
  })

  it('reports every problem at its line, sorted', () => {
    expect(
      problems(
        lines(
          'currency: usd', //
          'shapes:',
          '  c5.xlarge: "0.17"',
          '  g4dn.xlarge: -1',
          '  "bad name": 1',
          '  m5.large: 2500000',
          '  r5.large: cheap',
          '  t3.nano:',
          'shape: {}',
        ),
      ),
    ).toEqual([
      'prices.yaml:1:1 currency: currency "usd" is not an ISO 4217 code; write three capital letters such as USD, EUR or GBP',
      'prices.yaml:3:3 shapes["c5.xlarge"]: the price "0.17" is quoted text; write the price of one node-hour as a number, e.g. 0.17 without quotes',
      'prices.yaml:4:3 shapes["g4dn.xlarge"]: the price -1 is negative; write the price of one node-hour as a number, e.g. 0.17',
      'prices.yaml:5:3 shapes["bad name"]: "bad name" is not a shape name; use the name as limits.yaml writes it (letters, digits, "_", "." and "-")',
      'prices.yaml:6:3 shapes["m5.large"]: the price 2500000 is more than 10000 per node-hour; is it in cents, or per month? write the price of one node-hour as a number, e.g. 0.17',
      'prices.yaml:7:3 shapes["r5.large"]: the price must be a number, not "cheap"; write the price of one node-hour as a number, e.g. 0.17',
      'prices.yaml:8:3 shapes["t3.nano"]: the price must be a number, not nothing; write the price of one node-hour as a number, e.g. 0.17',
      'prices.yaml:9:1 shape: unknown key "shape"; did you mean "shapes"?',
    ])
  })

  it('asks for what is missing', () => {
    expect(problems(lines('shapes:', '  c5.xlarge: 0.17'))).toEqual(['prices.yaml:1:1 currency: is required; add it'])
    expect(problems(lines('currency: USD'))).toEqual([
      'prices.yaml:1:1 shapes: is required; add shapes: with a price per node-hour of each shape, e.g. "c5.xlarge: 0.17"',
    ])
    expect(problems('# nothing yet\n')).toEqual([
      'prices.yaml:1:1: prices.yaml is empty; write "currency: USD" and a price per shape under shapes:, e.g. "c5.xlarge: 0.17"',
    ])
  })

  it('refuses a document or shapes of the wrong kind', () => {
    expect(problems('- USD\n')[0]).toMatch(/^prices\.yaml:1:1: a prices file must be a map with currency: and shapes:/)
    expect(problems(lines('currency: USD', 'shapes: [c5.xlarge]'))).toEqual([
      'prices.yaml:2:1 shapes: shapes must be a map of shape names to prices per node-hour, e.g. "c5.xlarge: 0.17", not a list',
    ])
  })

  it('refuses YAML errors and duplicate shapes with their place', () => {
    expect(problems(lines('currency: USD', 'shapes:', '  c5.xlarge: 0.17', '  c5.xlarge: 0.18'))).toEqual([
      'prices.yaml:4:3: duplicate key "c5.xlarge" (first at line 3); keep only one of them',
    ])
  })
})
