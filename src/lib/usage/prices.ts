// prices.yaml → what one node of each shape costs per hour, for the estimated cost in `citc usage`.
// Pure: text in, Prices out, or one InvalidInputError (exit 3) listing every problem at file:line:col.
//
//   currency: USD          # ISO 4217 code, shown next to every cost
//   shapes:
//     c5.xlarge: 0.17      # price of one node-hour of the shape
//     g4dn.xlarge: 0.526
//
// A file may name shapes the cluster does not have (one file for several clusters): they are not
// errors. Shapes with usage but no price are reported by the usage report itself (unpriced node-hours).
import {isMap, isScalar} from 'yaml'
import {z} from 'zod'

import {InvalidInputError, type InputProblem} from '../errors.js'
import {byPosition, keyText, parseYamlDocument, showValue as show, type YamlPath, zodProblems} from '../config/yaml.js'

export interface Prices {
  /** ISO 4217 code, e.g. USD. */
  currency: string
  /** Shape → price of one node-hour, in the order written. */
  shapes: Map<string, number>
}

const TOP_KEYS = ['currency', 'shapes'] as const
/** As limits.yaml's shape names: Slurm feature values (shape=…) cannot hold anything else. */
const SHAPE_NAME = /^[A-Za-z0-9_.-]+$/
const CURRENCY = /^[A-Z]{3}$/
/** More than any machine costs per hour: a price above it is a typo (cents, or a monthly price). */
export const MAX_PRICE = 10_000

const topSchema = z.strictObject(
  {
    currency: z
      .string({error: (iss) => `currency must be an ISO 4217 code such as USD, EUR or GBP, not ${show(iss.input)}`})
      .regex(CURRENCY, {error: (iss) => `currency ${show(iss.input)} is not an ISO 4217 code; write three capital letters such as USD, EUR or GBP`}),
    shapes: z.unknown().optional(), // read below, entry by entry
  },
  {error: (iss) => `a prices file must be a map with currency: and shapes:, e.g. "currency: USD", not ${show(iss.input)}`},
)

/**
 * Parse and validate a prices file. `file` is the label used in messages ("prices.yaml"). Throws
 * InvalidInputError listing every problem, sorted by position.
 */
export function parsePrices(text: string, file: string): Prices {
  const yaml = parseYamlDocument(text, file)
  const problems: InputProblem[] = []
  const prices: Prices = {currency: '', shapes: new Map()}
  const fail = () => new InvalidInputError(byPosition(problems), `fix ${file} at the lines shown and run again`)

  if (yaml.value === null || yaml.value === undefined) {
    problems.push(yaml.problem([], `${file} is empty; write "currency: USD" and a price per shape under shapes:, e.g. "c5.xlarge: 0.17"`))
    throw fail()
  }
  const top = topSchema.safeParse(yaml.value, {reportInput: true})
  if (!top.success) {
    problems.push(...zodProblems(top.error.issues, yaml, {keysAt: (p) => (p.length === 0 ? TOP_KEYS : undefined)}))
  } else {
    prices.currency = top.data.currency
  }

  const path: YamlPath = ['shapes']
  const node = yaml.node(path)
  if (isMap(yaml.node([]))) {
    if (node === undefined) {
      problems.push(yaml.problem(path, `is required; add shapes: with a price per node-hour of each shape, e.g. "c5.xlarge: 0.17"`))
    } else if (!isMap(node)) {
      problems.push(yaml.problem(path, `shapes must be a map of shape names to prices per node-hour, e.g. "c5.xlarge: 0.17", not ${show(toJs(node))}`))
    } else {
      for (const pair of node.items) {
        const name = keyText(pair.key) ?? ''
        const at: YamlPath = ['shapes', name]
        if (!SHAPE_NAME.test(name)) {
          problems.push(yaml.problem(at, `${JSON.stringify(name)} is not a shape name; use the name as limits.yaml writes it (letters, digits, "_", "." and "-")`))
          continue
        }
        const price = priceProblem(toJs(yaml.node(at)))
        if (typeof price === 'string') problems.push(yaml.problem(at, price))
        else prices.shapes.set(name, price.value)
      }
    }
  }
  if (problems.length > 0) throw fail()
  return prices
}

/** The plain value of a scalar node (prices are scalars; anything else reads as a list or a map). */
function toJs(node: unknown): unknown {
  if (node === undefined || node === null) return null
  if (isScalar(node)) return node.value
  return isMap(node) ? {} : []
}

function priceProblem(v: unknown): {value: number} | string {
  const help = `write the price of one node-hour as a number, e.g. 0.17`
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return `the price ${JSON.stringify(v)} is quoted text; ${help} without quotes`
  if (typeof v !== 'number' || !Number.isFinite(v)) return `the price must be a number, not ${show(v)}; ${help}`
  if (v < 0) return `the price ${v} is negative; ${help}`
  if (v > MAX_PRICE) return `the price ${v} is more than ${MAX_PRICE} per node-hour; is it in cents, or per month? ${help}`
  return {value: v}
}
