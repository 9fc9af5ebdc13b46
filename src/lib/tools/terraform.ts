// Terraform (or OpenTofu) as citc uses it: init, plan to a file, a summary of that plan, apply of
// exactly that plan, outputs, destroy. Runs the binary through exec.ts (never a shell), in the
// cluster's terraform directory, with every line appended to a log file, cancellable by an
// AbortSignal. A failure becomes one CitcError('remote') whose message says what went wrong in one
// line and whose hint says what to do (credentials, quota, capacity, a shape the region lacks, …);
// anything unrecognised keeps Terraform's own error and the last lines of its output.
//
// The pure parts (version, plan JSON, progress lines, outputs, error explanation) are exported on their
// own and unit-tested; the adapter is tested against test/doubles/bin/terraform.
// The wording of a hint for a cloud's own errors (credentials, quota, capacity) is its provider
// module's (CloudPart.errorHints): the callers hand it in (tools sit below providers).
import {CitcError, remoteError, type Hint} from '../errors.js'
import {run, which, type ExecOptions, type ExecResult} from './exec.js'

export type TerraformBinary = 'terraform' | 'tofu'

export interface TerraformTool {
  binary: TerraformBinary
  /** Absolute path of the executable. */
  path: string
  /** e.g. "1.9.8" */
  version: string
}

/** Oldest Terraform citc accepts (any OpenTofu release is accepted: they all descend from 1.6). */
const MIN_TERRAFORM_VERSION = '1.5.0'

export const INSTALL_HINT =
  'install Terraform >= 1.5 (https://developer.hashicorp.com/terraform/install) or OpenTofu (https://opentofu.org/docs/intro/install/), ' +
  'or point CITC_TERRAFORM at the binary'

/** Settled environment for every run: no prompts, no update check (no network call of its own). */
const TERRAFORM_ENV: Readonly<Record<string, string>> = {
  TF_IN_AUTOMATION: '1',
  TF_INPUT: '0',
  CHECKPOINT_DISABLE: '1',
}

// ---------------------------------------------------------------------------------------------
// Versions

/** "1.9.8" from `version -json` ({"terraform_version": …}, also OpenTofu's) or from the text form
 *  ("Terraform v1.9.8", "OpenTofu v1.8.0"). Undefined if neither. */
export function parseVersionOutput(stdout: string): {version: string; flavor?: TerraformBinary} | undefined {
  const text = stdout.trim()
  if (text.startsWith('{')) {
    try {
      const json = JSON.parse(text) as {terraform_version?: unknown}
      if (typeof json.terraform_version === 'string' && /^\d+\.\d+\.\d+/.test(json.terraform_version)) {
        return {version: json.terraform_version}
      }
    } catch {
      // fall through to the text form
    }
  }
  const m = /^(Terraform|OpenTofu) v(\d+\.\d+\.\d+\S*)/m.exec(text)
  if (!m) return undefined
  return {version: m[2], flavor: m[1] === 'OpenTofu' ? 'tofu' : 'terraform'}
}

/** Compare dotted versions numerically ("1.10.0" > "1.9.8"); pre-release suffixes are ignored. */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) => v.replace(/^v/, '').split(/[-+]/)[0].split('.').map((p) => Number.parseInt(p, 10) || 0)
  const pa = parts(a)
  const pb = parts(b)
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0)
    if (d !== 0) return Math.sign(d)
  }
  return 0
}

export interface DetectOptions {
  /** PATH to search (default: this process's). */
  path?: string
  /** A binary name or path that overrides the search (default: $CITC_TERRAFORM). */
  override?: string
  /** Which one to take when both are installed (default terraform). */
  prefer?: TerraformBinary
  signal?: AbortSignal
}

/**
 * Find Terraform >= 1.5 or OpenTofu: $CITC_TERRAFORM if set, else `terraform` then `tofu` on PATH
 * (or the other way round with prefer: 'tofu'). Throws a CitcError('remote') naming what was found
 * and how to install a usable one.
 */
export async function detectTerraform(opts: DetectOptions = {}): Promise<TerraformTool> {
  const override = opts.override ?? process.env.CITC_TERRAFORM
  const names: string[] = override ? [override] : opts.prefer === 'tofu' ? ['tofu', 'terraform'] : ['terraform', 'tofu']
  const rejected: string[] = []
  for (const name of names) {
    const path = await which(name, opts.path)
    if (!path) continue
    let result: ExecResult
    try {
      result = await run(path, ['version', '-json'], {env: TERRAFORM_ENV, timeoutMs: 30_000, signal: opts.signal})
      // Very old releases have no -json: ask again in plain text so the message can say which version.
      if (result.exitCode !== 0 || !parseVersionOutput(result.stdout)) {
        result = await run(path, ['version'], {env: TERRAFORM_ENV, timeoutMs: 30_000, signal: opts.signal})
      }
    } catch (error) {
      if (error instanceof CitcError && error.kind === 'cancelled') throw error
      rejected.push(`${path}: cannot run it (${error instanceof Error ? error.message : String(error)})`)
      continue
    }
    const parsed = parseVersionOutput(result.stdout)
    if (!parsed) {
      rejected.push(`${path}: unrecognised version output "${result.stdout.trim().split('\n')[0] ?? ''}"`)
      continue
    }
    const base = path.split('/').pop() ?? ''
    const binary: TerraformBinary = parsed.flavor ?? (base.startsWith('tofu') ? 'tofu' : 'terraform')
    if (binary === 'terraform' && compareVersions(parsed.version, MIN_TERRAFORM_VERSION) < 0) {
      rejected.push(`${path}: Terraform ${parsed.version} is older than ${MIN_TERRAFORM_VERSION}`)
      continue
    }
    return {binary, path, version: parsed.version}
  }
  if (rejected.length === 0) {
    throw remoteError(`neither terraform nor tofu was found${override ? ` (CITC_TERRAFORM=${override})` : ' on PATH'}`, {hint: INSTALL_HINT})
  }
  throw remoteError(`no usable Terraform: ${rejected.join('; ')}`, {hint: INSTALL_HINT, details: {rejected}})
}

// ---------------------------------------------------------------------------------------------
// Plans

export type PlanAction = 'create' | 'update' | 'delete' | 'replace'

export interface PlanChange {
  /** e.g. "aws_instance.mgmt" */
  address: string
  /** e.g. "aws_instance" */
  type: string
  action: PlanAction
}

export interface PlanSummary {
  terraformVersion?: string
  counts: Record<PlanAction, number> & {unchanged: number}
  /** Resources that change, by type: {aws_instance: ["aws_instance.mgmt"], …} (addresses sorted). */
  byType: Record<string, string[]>
  /** Every managed resource that changes, in address order. */
  changes: PlanChange[]
  /** True when applying the plan would change nothing. */
  empty: boolean
}

interface RawResourceChange {
  address?: unknown
  mode?: unknown
  type?: unknown
  change?: {actions?: unknown}
}

function actionOf(actions: string[]): PlanAction | 'no-op' | 'read' {
  if (actions.includes('create') && actions.includes('delete')) return 'replace'
  if (actions.includes('create')) return 'create'
  if (actions.includes('delete')) return 'delete'
  if (actions.includes('update')) return 'update'
  if (actions.includes('read')) return 'read'
  return 'no-op'
}

/** The summary of `terraform show -json <planfile>`. Data sources (reads) are left out. */
export function summarizePlan(plan: unknown): PlanSummary {
  if (typeof plan !== 'object' || plan === null) throw remoteError('terraform show -json printed no plan object')
  const raw = plan as {terraform_version?: unknown; resource_changes?: unknown}
  const list = Array.isArray(raw.resource_changes) ? (raw.resource_changes as RawResourceChange[]) : []
  const counts = {create: 0, update: 0, delete: 0, replace: 0, unchanged: 0}
  const changes: PlanChange[] = []
  for (const rc of list) {
    if (rc.mode !== undefined && rc.mode !== 'managed') continue
    if (typeof rc.address !== 'string') continue
    const actions = Array.isArray(rc.change?.actions) ? (rc.change.actions as unknown[]).filter((a): a is string => typeof a === 'string') : []
    const action = actionOf(actions)
    if (action === 'read') continue
    if (action === 'no-op') {
      counts.unchanged++
      continue
    }
    counts[action]++
    const type = typeof rc.type === 'string' ? rc.type : typeFromAddress(rc.address)
    changes.push({address: rc.address, type, action})
  }
  changes.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0))
  const byType: Record<string, string[]> = {}
  for (const c of changes) (byType[c.type] ??= []).push(c.address)
  return {
    terraformVersion: typeof raw.terraform_version === 'string' ? raw.terraform_version : undefined,
    counts,
    byType,
    changes,
    empty: changes.length === 0,
  }
}

/** "module.a.aws_instance.x[0]" → "aws_instance"; "data.aws_ami.base" → "aws_ami". */
export function typeFromAddress(address: string): string {
  const parts = address.replace(/\[[^\]]*\]/g, '').split('.')
  let i = 0
  while (parts[i] === 'module') i += 2
  if (parts[i] === 'data') i++
  return parts[i] ?? address
}

/** One line for people: "12 to create, 1 to replace, 0 to update, 0 to delete". */
export function describePlan(s: PlanSummary): string {
  if (s.empty) return 'no changes'
  const bits = [`${s.counts.create} to create`]
  if (s.counts.replace) bits.push(`${s.counts.replace} to replace`)
  bits.push(`${s.counts.update} to update`, `${s.counts.delete} to delete`)
  return bits.join(', ')
}

// ---------------------------------------------------------------------------------------------
// Progress of apply and destroy

export interface ResourceEvent {
  /** e.g. "aws_instance.mgmt" */
  address: string
  type: string
  action: 'create' | 'update' | 'delete' | 'read'
  /** start: "Creating..."; progress: "Still creating... [10s elapsed]"; complete; error. */
  phase: 'start' | 'progress' | 'complete' | 'error'
  elapsedS?: number
  /** The cloud's id, when Terraform prints it. */
  id?: string
  /** The line as Terraform printed it. */
  line: string
}

const ADDRESS = String.raw`((?:module\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?\.)*(?:data\.)?[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+(?:\[[^\]]*\])?)`
const PROGRESS = new RegExp(`^${ADDRESS}: (.*)$`)
const VERBS: Array<[RegExp, ResourceEvent['action'], ResourceEvent['phase']]> = [
  [/^Creating\.\.\./, 'create', 'start'],
  [/^Still creating\.\.\./, 'create', 'progress'],
  [/^Creation complete after/, 'create', 'complete'],
  [/^Creation errored after/, 'create', 'error'],
  [/^Modifying\.\.\./, 'update', 'start'],
  [/^Still modifying\.\.\./, 'update', 'progress'],
  [/^Modifications complete after/, 'update', 'complete'],
  [/^Modifications errored after/, 'update', 'error'],
  [/^Destroying\.\.\./, 'delete', 'start'],
  [/^Still destroying\.\.\./, 'delete', 'progress'],
  [/^Destruction complete after/, 'delete', 'complete'],
  [/^Destruction errored after/, 'delete', 'error'],
  [/^Reading\.\.\./, 'read', 'start'],
  [/^Still reading\.\.\./, 'read', 'progress'],
  [/^Read complete after/, 'read', 'complete'],
]

/** "1m10s", "00m05s", "2s", "1h2m3s" → seconds. */
export function parseDuration(text: string): number | undefined {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text)
  if (!m || text === '') return undefined
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0)
}

/** A resource progress line of apply/destroy ("aws_vpc.cluster: Creating..."), or undefined. */
export function parseProgressLine(line: string): ResourceEvent | undefined {
  const clean = stripDecorations(line).trim()
  const m = PROGRESS.exec(clean)
  if (!m) return undefined
  const [, address, rest] = m
  const verb = VERBS.find(([re]) => re.test(rest))
  if (!verb) return undefined
  const event: ResourceEvent = {address, type: typeFromAddress(address), action: verb[1], phase: verb[2], line: clean}
  const elapsed = /\[([0-9hms]+) elapsed\]/.exec(rest)?.[1] ?? /(?:complete|errored) after ([0-9hms]+)/.exec(rest)?.[1]
  if (elapsed !== undefined) event.elapsedS = parseDuration(elapsed)
  const id = /\[id=([^\]]*)\]/.exec(rest)?.[1]
  if (id) event.id = id
  return event
}

export interface ApplySummary {
  added: number
  changed: number
  destroyed: number
}

/** "Apply complete! Resources: 3 added, 0 changed, 0 destroyed." / "Destroy complete! Resources: 5 destroyed." */
export function parseApplySummary(output: string): ApplySummary | undefined {
  const apply = /Apply complete! Resources: (\d+) added, (\d+) changed, (\d+) destroyed/.exec(output)
  if (apply) return {added: Number(apply[1]), changed: Number(apply[2]), destroyed: Number(apply[3])}
  const destroy = /Destroy complete! Resources: (\d+) destroyed/.exec(output)
  if (destroy) return {added: 0, changed: 0, destroyed: Number(destroy[1])}
  return undefined
}

// ---------------------------------------------------------------------------------------------
// Outputs

export interface TerraformOutput {
  value: unknown
  sensitive: boolean
}

export type TerraformOutputs = Record<string, TerraformOutput>

/** `terraform output -json` → {name: {value, sensitive}}. */
export function parseOutputs(stdout: string): TerraformOutputs {
  let json: unknown
  try {
    json = JSON.parse(stdout.trim() === '' ? '{}' : stdout)
  } catch {
    throw remoteError('terraform output -json did not print JSON', {details: {firstLine: stdout.split('\n')[0]}})
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw remoteError('terraform output -json did not print an object')
  const out: TerraformOutputs = {}
  for (const [name, raw] of Object.entries(json as Record<string, unknown>)) {
    const o = (raw ?? {}) as {value?: unknown; sensitive?: unknown}
    out[name] = {value: o.value, sensitive: o.sensitive === true}
  }
  return out
}

/** Plain values of the outputs that are not sensitive (what citc keeps in cluster.yaml). */
export function outputValues(outputs: TerraformOutputs): Record<string, unknown> {
  return Object.fromEntries(Object.entries(outputs).filter(([, o]) => !o.sensitive).map(([k, o]) => [k, o.value]))
}

// ---------------------------------------------------------------------------------------------
// Errors

export type TerraformStep = 'init' | 'plan' | 'show' | 'apply' | 'output' | 'destroy'

export type FailureReason =
  | 'credentials'
  | 'permission'
  | 'quota'
  | 'capacity'
  | 'shape-unavailable'
  | 'image-not-found'
  | 'throttled'
  | 'api-disabled'
  | 'state-locked'
  | 'not-initialized'
  | 'network'
  | 'invalid-input'
  | 'unknown'

/** Hints for the cloud's own errors, by what went wrong (Terraform's today; images and drivers meet the same). */
export interface CloudErrorHints {
  /** Renew or fix the credentials (without the "then …" part). */
  credentials: string
  /** Raise the quota or change the request. */
  quota: string
  /** What to change when the cloud has no capacity: "zone (--zone)". */
  capacityPlace: string
  /** Where else to look for a shape: "region or zone". */
  shapePlace: string
  /** Turn on what the cloud's API needs for the account (Terraform said the API is disabled); undefined: no such step. */
  apiDisabled?: string
}

export interface TerraformFailure {
  reason: FailureReason
  /** One line: what went wrong. */
  message: string
  /** One line: what to do (and, apart, how to retry). */
  hint: Hint
  /** The cloud's error code or the key phrase that was recognised, e.g. "InsufficientInstanceCapacity". */
  code?: string
  /** The resource being worked on, from Terraform's "with aws_instance.mgmt," line. */
  resource?: string
  /** Terraform's first error summary ("Error: …") and its first detail line. */
  terraformError?: string
  /** The last lines of the output (no secrets: Terraform prints sensitive values as "(sensitive value)"). */
  lastLines: string[]
}

/** Box-drawing frame of Terraform's coloured diagnostics ("│ ", "╷", "╵") and ANSI colours, removed. */
function stripDecorations(line: string): string {
  // eslint-disable-next-line no-control-regex
  return line.replace(/\u001b\[[0-9;]*m/g, '').replace(/^[│╷╵]\s?/, '')
}

interface Rule {
  reason: FailureReason
  /** The first capture group (if any) or the whole match becomes `code`. */
  pattern: RegExp
}

// Order matters: throttling before quota ("RequestLimitExceeded"), capacity and quota before
// permission (Google's quota errors are HTTP 403).
const RULES: Rule[] = [
  {reason: 'state-locked', pattern: /(Error acquiring the state lock)/},
  {reason: 'not-initialized', pattern: /(Inconsistent dependency lock file|Backend initialization required|Required plugins are not installed|Module not installed)/},
  {reason: 'capacity', pattern: /(InsufficientInstanceCapacity|InsufficientHostCapacity|InsufficientCapacity|ZONE_RESOURCE_POOL_EXHAUSTED(?:_WITH_DETAILS)?|Out of host capacity|does not have enough resources available to fulfill the request)/i},
  {reason: 'throttled', pattern: /(RequestLimitExceeded|ThrottlingException|Throttling: Rate exceeded|TooManyRequests|rateLimitExceeded|429-TooManyRequests|Error 429)/},
  {reason: 'quota', pattern: /(VcpuLimitExceeded|InstanceLimitExceeded|VpcLimitExceeded|AddressLimitExceeded|FileSystemLimitExceeded|QUOTA_EXCEEDED|quotaExceeded|Quota '[^']+' exceeded|LimitExceeded|service limits? (?:were|was|is) exceeded|QuotaExceeded)/},
  {reason: 'shape-unavailable', pattern: /(Your requested instance type \([^)]*\) is not supported in your requested Availability Zone|InvalidInstanceType|Unsupported: The requested configuration is currently not supported|Invalid value for field 'resource\.machineType'|machineTypes\/[A-Za-z0-9_-]+'? was not found|[Ss]hape [A-Za-z0-9._-]+ (?:is )?not (?:found|valid|supported|available)|no Canonical Ubuntu [0-9.]+ image for shape)/},
  {reason: 'image-not-found', pattern: /(Your query returned no results\. Please change your search criteria|The resource '[^']*\/images\/family\/[^']*' was not found)/},
  {reason: 'api-disabled', pattern: /(SERVICE_DISABLED|has not been used in project [^ ]+ before or it is disabled|accessNotConfigured)/},
  {
    reason: 'credentials',
    pattern:
      /(No valid credential sources found|ExpiredToken(?:Exception)?|RequestExpired|InvalidClientTokenId|UnrecognizedClientException|SignatureDoesNotMatch|AuthFailure|failed to refresh cached credentials|SSO session[^\n]*(?:expired|invalid)|Error loading SSO Token|failed to get shared config profile|could not find default credentials|invalid_grant|oauth2: cannot fetch token|Reauthentication failed|invalid authentication credentials|UNAUTHENTICATED|401-NotAuthenticated|NotAuthenticated|can not create client, bad configuration|did not find a proper configuration for [a-z ]+|can not read private key)/i,
  },
  {reason: 'permission', pattern: /(UnauthorizedOperation|AccessDenied(?:Exception)?|is not authorized to perform|PERMISSION_DENIED|Permission '[^']+' denied|Required '[^']+' permission|404-NotAuthorizedOrNotFound|403-Forbidden)/},
  {reason: 'network', pattern: /(Failed to query available provider packages|Failed to install provider|could not connect to registry\.[a-z.]+|dial tcp[^\n]*(?:no such host|i\/o timeout|connection refused)|TLS handshake timeout)/},
  {reason: 'invalid-input', pattern: /(Invalid value for variable|No value for required variable|Invalid value for input variable)/},
]

const REASON_TEXT: Record<FailureReason, string> = {
  credentials: 'the cloud credentials are missing, expired or invalid',
  permission: 'the cloud credentials lack a permission',
  quota: 'a quota or service limit of the account is exhausted',
  capacity: 'the cloud has no capacity for this shape in this zone right now',
  'shape-unavailable': 'the shape is not offered in this region or zone',
  'image-not-found': 'the base image was not found in this region',
  throttled: 'the cloud API is throttling requests',
  'api-disabled': 'a cloud API is not enabled for the project',
  'state-locked': 'another Terraform run holds the state lock',
  'not-initialized': 'the working directory is not initialised (terraform init did not run or did not finish)',
  network: 'Terraform could not reach the network',
  'invalid-input': 'a value given to Terraform is invalid',
  unknown: 'Terraform reported an error',
}

function hintFor(reason: FailureReason, step: TerraformStep, hints: CloudErrorHints | undefined, output: string): Hint {
  const retry = step === 'destroy' ? 'then run `citc destroy` again' : 'then run `citc create --resume`'
  switch (reason) {
    case 'credentials':
      return {fix: hints?.credentials ?? 'refresh the cloud credentials', retry}
    case 'permission': {
      const permission = permissionIn(output)
      return {fix: `give the credentials ${permission ? `the permission ${permission}` : 'the missing permission'} (or use an account that has it)`, retry}
    }
    case 'quota':
      return {fix: hints?.quota ?? 'raise the limit or choose a smaller shape', retry}
    case 'capacity':
      return {fix: `try another ${hints?.capacityPlace ?? 'zone (--zone)'} or shape (--mgmt-shape)`, retry: 'or wait and run `citc create --resume`'}
    case 'shape-unavailable':
      return {fix: `choose a shape this region offers (--mgmt-shape) or another ${hints?.shapePlace ?? 'region or zone'}`, retry}
    case 'image-not-found':
      return {fix: 'choose another region or a shape of another architecture', retry}
    case 'throttled':
      return {fix: 'wait a minute and run the same command again (with --resume for create)'}
    case 'api-disabled':
      return {fix: hints?.apiDisabled ?? 'enable the cloud API the error names for the account', retry}
    case 'state-locked': {
      const id = /ID:\s+([0-9a-fA-F-]{8,})/.exec(output)?.[1]
      return {fix: `wait for the other run to finish; if none is running, unlock it in the cluster's terraform directory with \`terraform force-unlock ${id ?? '<lock id>'}\``}
    }
    case 'not-initialized':
      return {retry: step === 'destroy' ? 'run `citc destroy` again (it runs terraform init first)' : 'run `citc create --resume` (it runs terraform init first)'}
    case 'network':
      return step === 'init'
        ? {fix: 'check the internet connection (and HTTPS_PROXY if a proxy is needed): `terraform init` downloads the cloud providers'}
        : {fix: 'check the internet connection', retry}
    case 'invalid-input':
      return {fix: 'correct the value named above (a flag or the cluster config) and run the command again'}
    case 'unknown':
      return {fix: "read Terraform's error above and the log; fix the cause", retry}
  }
}

/** The permission a "denied" error names ("iam:CreateRole", "iam.serviceAccounts.create"), if any. */
function permissionIn(output: string): string | undefined {
  return (
    /not authorized to perform: ([A-Za-z0-9-]+:[A-Za-z0-9*]+)/.exec(output)?.[1] ??
    /Permission '([^']+)' denied/.exec(output)?.[1] ??
    /Required '([^']+)' permission/.exec(output)?.[1]
  )
}

/** Terraform's error blocks: the "Error: <summary>" line and the detail lines under it. */
export function terraformErrors(output: string): Array<{summary: string; detail: string[]; resource?: string}> {
  const lines = output.split('\n').map((l) => stripDecorations(l).replace(/\s+$/, ''))
  const errors: Array<{summary: string; detail: string[]; resource?: string}> = []
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*Error: (.*)$/.exec(lines[i])
    if (!m) continue
    const detail: string[] = []
    let resource: string | undefined
    for (let j = i + 1; j < lines.length && !/^\s*(Error|Warning): /.test(lines[j]); j++) {
      const l = lines[j].trim()
      const w = /^with ([^,]+),$/.exec(l)
      if (w) {
        resource = w[1]
        continue
      }
      // Location lines and the quoted source ("on mgmt.tf line 20, in resource …", "20: resource …").
      if (l === '' || /^on .* line \d+/.test(l) || /^\d+: /.test(l) || /^[├│─╷╵]/.test(l)) continue
      detail.push(l)
    }
    errors.push({summary: m[1].trim(), detail, resource})
  }
  return errors
}

function oneLine(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/**
 * Explain a failed Terraform run in one line with a fix. `output` is what it printed (stderr, or
 * stderr and stdout); `hints` is the cloud's wording of the hints (plain ones when absent).
 */
export function explainTerraformError(output: string, step: TerraformStep, hints?: CloudErrorHints): TerraformFailure {
  const errors = terraformErrors(output)
  const first = errors[0]
  const terraformError = first ? oneLine([first.summary, first.detail[0]].filter(Boolean).join(': ')) : undefined
  // "with aws_instance.mgmt," names a resource; "with provider[…]," (a credentials error) does not.
  const resource = errors.find((e) => e.resource && !e.resource.startsWith('provider['))?.resource
  const lastLines = output
    .split('\n')
    .map((l) => stripDecorations(l).replace(/\s+$/, ''))
    .filter((l) => l.trim() !== '')
    .slice(-20)

  for (const rule of RULES) {
    const m = rule.pattern.exec(output)
    if (!m) continue
    const code = oneLine(m[1] ?? m[0], 120)
    const on = resource ? ` (${resource})` : ''
    let detail = code
    // For invalid input, the validation's own message is the useful part; for a denial, the permission.
    if (rule.reason === 'invalid-input' && first) detail = oneLine(first.detail.filter((d) => !/^This was checked by/.test(d)).slice(-1)[0] ?? first.summary, 200)
    if (rule.reason === 'permission') detail = permissionIn(output) ?? detail
    return {
      reason: rule.reason,
      message: `terraform ${step} failed${on}: ${REASON_TEXT[rule.reason]} (${detail})`,
      hint: hintFor(rule.reason, step, hints, output),
      code,
      resource,
      terraformError,
      lastLines,
    }
  }
  const fallback = terraformError ?? lastLines.slice(-1)[0] ?? 'no output'
  return {
    reason: 'unknown',
    message: `terraform ${step} failed${resource ? ` (${resource})` : ''}: ${oneLine(fallback)}`,
    hint: hintFor('unknown', step, hints, output),
    resource,
    terraformError,
    lastLines,
  }
}

// ---------------------------------------------------------------------------------------------
// The adapter

export interface TerraformOptions {
  /** The cluster's terraform working directory (templates, tfvars, state, plan files). */
  dir: string
  /** Every command line and all output is appended here, timestamped (mode 0600). */
  logFile?: string
  /** Extra environment, e.g. {AWS_PROFILE: "research"}; undefined removes a variable. */
  env?: Record<string, string | undefined>
  /** Cancels whatever runs (Terraform gets SIGTERM and stops gracefully, then SIGKILL after killGraceMs). */
  signal?: AbortSignal
  /** The cloud's wording of the hints for its own errors (its provider module's errorHints). */
  hints?: CloudErrorHints
  /** Grace between SIGTERM and SIGKILL for apply and destroy (Terraform writes its state). Default 60 s. */
  killGraceMs?: number
}

export interface StepOptions {
  signal?: AbortSignal
  /** Every line of output as it arrives (stdout and stderr), for task output. */
  onLine?: (line: string) => void
  timeoutMs?: number
}

export class Terraform {
  constructor(
    readonly tool: TerraformTool,
    readonly opts: TerraformOptions,
  ) {}

  /** `init`: downloads the providers the templates need (network), sets up the local backend. */
  async init(step: StepOptions = {}): Promise<void> {
    await this.exec('init', ['init', '-input=false', '-no-color'], step)
  }

  /**
   * `plan -out=<outFile>` then `show -json <outFile>`: the plan is saved (apply runs exactly it) and
   * summarised. With destroy: true, a plan that deletes everything in the state.
   */
  async plan(outFile: string, step: StepOptions & {destroy?: boolean} = {}): Promise<PlanSummary> {
    const args = ['plan', '-input=false', '-no-color', '-lock-timeout=60s', `-out=${outFile}`]
    if (step.destroy) args.push('-destroy')
    await this.exec('plan', args, step)
    return this.show(outFile, step)
  }

  /** The summary of a saved plan (`show -json <planFile>`). */
  async show(planFile: string, step: StepOptions = {}): Promise<PlanSummary> {
    const r = await this.exec('show', ['show', '-json', '-no-color', planFile], {...step, onLine: undefined}, {logStdout: false})
    let json: unknown
    try {
      json = JSON.parse(r.stdout)
    } catch {
      throw remoteError(`terraform show -json ${planFile} did not print JSON`, {hint: 'is the plan file from this directory and this Terraform version?'})
    }
    return summarizePlan(json)
  }

  /**
   * `apply <planFile>`: exactly the saved plan. Each resource progress line ("aws_instance.mgmt:
   * Creating...") goes to onResource as it is printed.
   */
  async apply(planFile: string, onResource?: (event: ResourceEvent) => void, step: StepOptions = {}): Promise<ApplySummary> {
    const r = await this.exec('apply', ['apply', '-input=false', '-no-color', '-lock-timeout=60s', planFile], step, {onResource, long: true})
    return parseApplySummary(r.stdout) ?? {added: 0, changed: 0, destroyed: 0}
  }

  /** `output -json`: every output with its value and whether it is sensitive. */
  async output(step: StepOptions = {}): Promise<TerraformOutputs> {
    const r = await this.exec('output', ['output', '-json', '-no-color'], {...step, onLine: undefined}, {logStdout: false})
    return parseOutputs(r.stdout)
  }

  /** `destroy -auto-approve`: deletes everything in the state, streaming progress like apply. */
  async destroy(onResource?: (event: ResourceEvent) => void, step: StepOptions = {}): Promise<ApplySummary> {
    const r = await this.exec('destroy', ['destroy', '-input=false', '-no-color', '-lock-timeout=60s', '-auto-approve'], step, {onResource, long: true})
    return parseApplySummary(r.stdout) ?? {added: 0, changed: 0, destroyed: 0}
  }

  private async exec(
    step: TerraformStep,
    args: string[],
    stepOpts: StepOptions,
    how: {onResource?: (event: ResourceEvent) => void; long?: boolean; logStdout?: boolean} = {},
  ): Promise<ExecResult> {
    const partial = {stdout: '', stderr: ''}
    const onLine = stepOpts.onLine
    const onResource = how.onResource
    const lineHandler =
      onLine || onResource
        ? (chunk: string, stream: 'stdout' | 'stderr') => {
            const lines = (partial[stream] + chunk).split('\n')
            partial[stream] = lines.pop()!
            for (const line of lines) deliver(line)
          }
        : undefined
    const deliver = (line: string) => {
      onLine?.(line)
      if (onResource) {
        const event = parseProgressLine(line)
        if (event) onResource(event)
      }
    }
    const execOpts: ExecOptions = {
      cwd: this.opts.dir,
      env: {...TERRAFORM_ENV, ...this.opts.env},
      signal: stepOpts.signal ?? this.opts.signal,
      timeoutMs: stepOpts.timeoutMs,
      // show -json and output -json are data (plans carry every value): they stay out of the log.
      logFile: how.logStdout === false ? undefined : this.opts.logFile,
      onOutput: lineHandler,
      killGraceMs: how.long ? (this.opts.killGraceMs ?? 60_000) : undefined,
      // Terraform of a killed citc still gets its grace to save its state, then stops.
      stopIfCitcDies: true,
    }
    const result = await run(this.tool.path, args, execOpts)
    for (const stream of ['stdout', 'stderr'] as const) if (partial[stream]) deliver(partial[stream])
    if (result.exitCode !== 0) {
      const failure = explainTerraformError(`${result.stderr}\n${result.stdout}`.trim(), step, this.opts.hints)
      throw remoteError(failure.message, {
        hint: execOpts.logFile ? {...failure.hint, log: execOpts.logFile} : failure.hint,
        details: {
          step,
          reason: failure.reason,
          code: failure.code,
          resource: failure.resource,
          exitCode: result.exitCode,
          terraformError: failure.terraformError,
          lastLines: failure.lastLines,
        },
      })
    }
    return result
  }
}
