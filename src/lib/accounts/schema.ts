// The shape of accounts.yaml: which keys exist where (for "unknown key, did you mean …") and the plain
// types of each. Values that need Slurm's rules (names, TRES, durations, numbers) are checked in
// parse.ts, which reports each at its own line.
//
//   accounts:
//     physics:
//       description: Physics department        # optional free text
//       organisation: Faculty of Science        # optional free text
//       parent: root                            # optional; root or another account of this file
//       limits:
//         GrpTRESMins: {cpu: 6000, gres/gpu: 600}   # TRES-minutes for the account and its children
//         GrpTRES: {cpu: 64, node: 4}               # TRES held at once
//         MaxJobs: 10
//         MaxSubmitJobs: 50
//         MaxWall: "2-00:00:00"                     # or "48:00:00", or minutes
//         Fairshare: 10                             # or "parent"
//         QOS: [normal, long]
//       users: [alice, bob]
//   users:                                      # optional
//     bob: {defaultAccount: physics-lab}        # else: the current default if still one of bob's, else the first listing bob
import {z} from 'zod'

import {showValue as show, type YamlPath} from '../config/yaml.js'

export const TOP_KEYS = ['accounts', 'users'] as const
export const ACCOUNT_KEYS = ['description', 'organisation', 'parent', 'limits', 'users'] as const
export const LIMIT_KEYS = ['GrpTRESMins', 'GrpTRES', 'MaxJobs', 'MaxSubmitJobs', 'MaxWall', 'Fairshare', 'QOS'] as const
export const USER_KEYS = ['defaultAccount'] as const

export type LimitKey = (typeof LIMIT_KEYS)[number]

const text = (what: string) => z.string({error: (iss) => `${what} must be text, not ${show(iss.input)}`})
const list = (what: string, example: string) => z.array(z.unknown(), {error: (iss) => `${what} must be a list such as ${example}, not ${show(iss.input)}`})
const map = (what: string, example: string) =>
  z.record(z.string(), z.unknown(), {error: (iss) => `${what} must be a map such as ${example}, not ${show(iss.input)}`})

export const topSchema = z.strictObject({
  accounts: map('accounts', '{physics: {users: [alice]}}'),
  users: map('users', '{bob: {defaultAccount: physics}}').nullish(),
})

export const accountSchema = z.strictObject({
  description: text('description').optional(),
  organisation: text('organisation').optional(),
  parent: text('parent').optional(),
  limits: map('limits', '{MaxJobs: 10}').nullish(),
  users: list('users', '[alice, bob]').nullish(),
})

export const limitsSchema = z.strictObject({
  GrpTRESMins: map('GrpTRESMins', '{cpu: 6000}').optional(),
  GrpTRES: map('GrpTRES', '{cpu: 64}').optional(),
  MaxJobs: z.unknown().optional(),
  MaxSubmitJobs: z.unknown().optional(),
  MaxWall: z.unknown().optional(),
  Fairshare: z.unknown().optional(),
  QOS: list('QOS', '[normal]').optional(),
})

export const userSchema = z.strictObject(
  {defaultAccount: text('defaultAccount').optional()},
  {error: (iss) => `a user's settings must be a map such as {defaultAccount: physics}, not ${show(iss.input)}`},
)

/** The keys allowed at a path (for did-you-mean on unknown keys). */
export function keysAt(path: YamlPath): readonly string[] | undefined {
  if (path.length === 0) return TOP_KEYS
  if (path[0] === 'accounts' && path.length === 2) return ACCOUNT_KEYS
  if (path[0] === 'accounts' && path.length === 3 && path[2] === 'limits') return LIMIT_KEYS
  if (path[0] === 'users' && path.length === 2) return USER_KEYS
  return undefined
}
