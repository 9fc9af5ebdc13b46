// The JSON document of `citc usage --json`: the stable schema a portal agent reads (what a
// Cloudrock-style agent would push as usage). Versioned: a field is only ever added within a
// version; renaming, removing or changing the meaning of one makes a new version.
//
// Version 1:
//   version     1
//   cluster     the cluster's name in citc
//   since       start of the window, inclusive, ISO 8601 UTC ("2026-11-01T00:00:00Z")
//   until       end of the window, exclusive, same form
//   by          "account" | "user" | "shape" | "day": what each row's key is
//   currency    ISO 4217 code of every cost, or null when no prices were given
//   rows        sorted by key (code-point order; days are YYYY-MM-DD in UTC, so chronological)
//   totals      the same fields over every job once; key "total"
//   unpricedShapes  shapes with node-hours in the window but no price (all of them without prices)
// A row:
//   key                account, user, shape name, or day; "(none)" for an empty account or user,
//                      "(unknown)" for nodes whose shape citc does not know
//   jobs               jobs with time in the row (a job may be in several rows with --by shape/day)
//   running            of those, jobs still running: counted up to the time of the report
//   cpuSeconds         allocated CPUs × seconds, rounded to the second
//   cpuHours, gpuHours allocated CPUs/GPUs × hours (6 decimals)
//   memGBHours         allocated memory in GiB (1,024 MiB) × hours
//   nodeHours          allocated nodes × hours; `shapes` splits them per shape
//   cost               node-hours × price per node-hour, over the shapes that have a price; null
//                      when none of the row's shapes has one
//   unpricedNodeHours  node-hours of shapes without a price (not in `cost`)
// Only time inside [since, until) counts; see aggregate.ts for how jobs are split.
import {z} from 'zod'

import {USAGE_BY} from './aggregate.js'

export const USAGE_SCHEMA_VERSION = 1

const hours = z.number().nonnegative()

export const usageRowSchema = z.strictObject({
  key: z.string(),
  jobs: z.number().int().nonnegative(),
  running: z.number().int().nonnegative(),
  cpuSeconds: z.number().int().nonnegative(),
  cpuHours: hours,
  gpuHours: hours,
  memGBHours: hours,
  nodeHours: hours,
  shapes: z.record(z.string(), hours),
  cost: z.number().nonnegative().nullable(),
  unpricedNodeHours: hours,
})

export const usageDocumentSchema = z.strictObject({
  version: z.literal(USAGE_SCHEMA_VERSION),
  cluster: z.string(),
  since: z.iso.datetime(),
  until: z.iso.datetime(),
  by: z.enum(USAGE_BY),
  currency: z.string().regex(/^[A-Z]{3}$/).nullable(),
  rows: z.array(usageRowSchema),
  totals: usageRowSchema,
  unpricedShapes: z.array(z.string()),
})

export type UsageDocument = z.infer<typeof usageDocumentSchema>
