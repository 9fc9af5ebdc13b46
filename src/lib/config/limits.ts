// limits.yaml → Limits: which shapes, how many nodes at most, in which partitions, plus the user's own
// slurm.conf settings. Pure: text in, Limits out, or one InvalidInputError listing every problem found,
// each as `file:line:col path: message` with what to do about it.
//
// Two forms are accepted:
// - CitC's, verbatim: `shape: count` (aws, google, local) or `shape: {AD: count}` (oracle).
// - The extended form, recognised by a top-level `shapes:` (or `partitions:` / `slurm:` / `static:`) key:
//   shapes (short `shape: count` or `{count, partitions, weight, features, gpu}`), partitions, slurm,
//   and static: the machines that joined the cluster (limits-static.ts).
import {isMap, isScalar, isSeq, type Node as YamlNode} from 'yaml'
import {z} from 'zod'

import {InvalidInputError, type InputProblem} from '../errors.js'
import {PROVIDER_MODULES, providerModule, type Provider} from '../providers/registry.js'
import type {Gpu, ShapeCatalogue} from '../shapes/types.js'
import {isManagedKey} from '../slurm/managed-keys.js'
import type {Limits, LimitsEntry, PartitionSpec} from '../slurm/limits-types.js'
import {readStaticNodes} from './limits-static.js'
import {byPosition, didYouMean, keyText, parseYamlDocument, showValue as show, type YamlFile, type YamlPath, zodProblems} from './yaml.js'
import {DEFAULT_PARTITION, MAX_COUNT, MAX_WEIGHT} from '../slurm/nodes.js'

export interface ParseLimitsOptions {
  /** Label used in messages, e.g. "limits.yaml". */
  file: string
  provider: Provider
  catalogue: ShapeCatalogue
  /** Shape names close to an unknown one (for "did you mean"). */
  suggest: (name: string) => string[]
  /** Oracle: the management node's shape and AD, subtracted once from the limits. */
  mgmt?: {shape: string; ad?: number}
  /** The cluster's id: a joined machine's name may not look like one of its elastic nodes' (`<clusterId>-…`). */
  clusterId?: string
}

/** The top-level keys of the extended form. */
const EXTENDED_KEYS = ['shapes', 'partitions', 'slurm', 'static'] as const
/** The keys of a shape in the extended form. */
const SHAPE_KEYS = ['count', 'partitions', 'weight', 'features', 'gpu'] as const
const PARTITION_KEYS = ['default', 'maxTime', 'options'] as const
/** Partition line options citc writes itself (PartitionName=… Nodes=… Default=… MaxTime=… State=UP). */
const RESERVED_PARTITION_OPTIONS = ['PartitionName', 'Nodes', 'Default', 'MaxTime', 'State']

/** The partition every node joins when limits.yaml names none (as CitC). */

const SLURM_NAME = /^[A-Za-z0-9_.-]+$/
const SLURM_KEY = /^[A-Za-z][A-Za-z0-9]*$/
const GPU_MODEL = /^[a-z0-9_]+$/

const slurmName = (what: 'partition' | 'feature') =>
  z.string({error: (iss) => `a ${what} name must be text, not ${show(iss.input)}`}).regex(SLURM_NAME, {
    error: (iss) => `${JSON.stringify(iss.input)} is not a valid Slurm ${what} name; use only letters, digits, "_", "." and "-" (no commas, spaces or "=")`,
  })

const WEIGHT_MESSAGE = `weight must be a whole number from 1 to ${MAX_WEIGHT} (Slurm uses lower weights first)`
const weightSchema = z
  .number({error: (iss) => `${WEIGHT_MESSAGE}, not ${show(iss.input)}`})
  .int({error: (iss) => `${WEIGHT_MESSAGE}, not ${show(iss.input)}`})
  .min(1, {error: (iss) => `${WEIGHT_MESSAGE}, not ${show(iss.input)}`})
  .max(MAX_WEIGHT, {error: (iss) => `${WEIGHT_MESSAGE}, not ${show(iss.input)}`})

const gpuSchema = z.strictObject(
  {
    count: z
      .number({error: (iss) => `the GPU count must be a whole number of at least 1, not ${show(iss.input)}`})
      .int({error: (iss) => `the GPU count must be a whole number of at least 1, not ${show(iss.input)}`})
      .min(1, {error: (iss) => `the GPU count must be a whole number of at least 1, not ${show(iss.input)}`}),
    model: z
      .string({error: (iss) => `the GPU model must be text such as t4 or a100, not ${show(iss.input)}`})
      .regex(GPU_MODEL, {error: (iss) => `the GPU model ${JSON.stringify(iss.input)} must be lower-case letters, digits and "_" (as Slurm's Gres type, e.g. t4, a100)`}),
  },
  {error: (iss) => `gpu must be a map such as {count: 1, model: t4}, not ${show(iss.input)}`},
)

const shapeSpecSchema = z.strictObject({
  count: z.unknown().optional(),
  partitions: z.array(slurmName('partition'), {error: (iss) => `partitions must be a list such as [gpu], not ${show(iss.input)}`}).optional(),
  weight: weightSchema.optional(),
  features: z.array(slurmName('feature'), {error: (iss) => `features must be a list such as [fastdisk], not ${show(iss.input)}`}).optional(),
  gpu: gpuSchema.optional(),
})

const partitionSchema = z.strictObject({
  default: z.boolean({error: (iss) => `default must be true or false, not ${show(iss.input)}`}).optional(),
  maxTime: z.unknown().optional(),
  options: z.unknown().optional(),
})

const keysAt = (path: YamlPath): readonly string[] | undefined => {
  if (path.length === 3 && path[0] === 'shapes' && path[2] === 'gpu') return ['count', 'model']
  if (path.length === 2 && path[0] === 'shapes') return SHAPE_KEYS
  if (path.length === 2 && path[0] === 'partitions') return PARTITION_KEYS
  return undefined
}

/**
 * Parse and validate limits.yaml. Throws InvalidInputError (exit 3) listing every problem, sorted by
 * position. Entries come out in the order written; one per shape and AD where the provider has ADs.
 */
export function parseLimits(text: string, opts: ParseLimitsOptions): Limits {
  const yaml = parseYamlDocument(text, opts.file)
  const problems: InputProblem[] = []
  const limits = readLimits(yaml, opts, problems)
  if (problems.length > 0) {
    throw new InvalidInputError(byPosition(problems), `fix ${opts.file} at the lines shown and run again; nothing was changed`)
  }
  if (opts.mgmt && providerModule(opts.provider).availabilityDomains) subtractManagementNode(limits, opts.mgmt)
  return limits
}

/** Oracle: the management node uses one unit of its shape's limit in its AD. Once; only when known. */
function subtractManagementNode(limits: Limits, mgmt: {shape: string; ad?: number}): void {
  if (mgmt.ad === undefined) return
  const i = limits.entries.findIndex((e) => e.shape === mgmt.shape && e.ad === mgmt.ad)
  if (i < 0) return
  const entry = limits.entries[i]
  if (entry.count <= 1) limits.entries.splice(i, 1)
  else limits.entries[i] = {...entry, count: entry.count - 1}
}

interface PartitionRef {
  name: string
  path: YamlPath
}

/** The devices of one machine's GPUs (Gpu.devices) a shape's nodes would use, to find two shapes sharing one. */
interface DeviceUse {
  name: string
  path: YamlPath
  /** Every device of the shape (its GPU type on this machine). */
  devices: readonly string[]
  model: string
  used: readonly string[]
}

function readLimits(yaml: YamlFile, opts: ParseLimitsOptions, problems: InputProblem[]): Limits {
  const limits: Limits = {entries: [], staticNodes: [], partitions: [], settings: {}}
  const root = yaml.node([])
  if (root === undefined || (isScalar(root) && root.value === null)) return limits // empty or comments only
  if (!isMap(root)) {
    problems.push(
      yaml.problem([], `${opts.file} must be a map of shapes to node counts, e.g. "c5.xlarge: 4" (or the extended form with shapes:), not ${show(yaml.value)}`),
    )
    return limits
  }

  const topKeys = root.items.map((p) => keyText(p.key) ?? '')
  const extended = topKeys.some((k) => (EXTENDED_KEYS as readonly string[]).includes(k))
  const refs: PartitionRef[] = []
  const uses: DeviceUse[] = []

  if (!extended) {
    for (const name of topKeys) readShape(yaml, opts, [name], false, limits.entries, refs, uses, problems)
    checkSharedDevices(yaml, uses, problems)
    return limits
  }

  for (const key of topKeys) {
    if ((EXTENDED_KEYS as readonly string[]).includes(key)) continue
    if (opts.catalogue.get(key)) {
      problems.push(yaml.problem([key], `with a shapes: section, every shape goes under it; move "${key}" into shapes:`))
      continue
    }
    const guess = didYouMean(key, EXTENDED_KEYS)
    problems.push(
      yaml.problem(
        [key],
        `unknown top-level key ${JSON.stringify(key)}; ` +
          (guess.length > 0 ? `did you mean ${guess.map((g) => JSON.stringify(g)).join(' or ')}?` : 'in the extended form the top level has only shapes, partitions, slurm and static'),
      ),
    )
  }

  const shapes = yaml.node(['shapes'])
  if (isMap(shapes)) {
    for (const p of shapes.items) readShape(yaml, opts, ['shapes', keyText(p.key) ?? ''], true, limits.entries, refs, uses, problems)
    checkSharedDevices(yaml, uses, problems)
  } else if (shapes !== undefined && !isNull(shapes)) {
    problems.push(yaml.problem(['shapes'], `shapes must be a map of shape names to counts, e.g. "c5.xlarge: 4", not ${show(toPlain(yaml, ['shapes']))}`))
  }

  // Joined machines: their partitions are checked with the shapes' below.
  limits.staticNodes = readStaticNodes(yaml, {clusterId: opts.clusterId}, refs, problems)

  const partitionsNode = yaml.node(['partitions'])
  // An empty `partitions:` counts as no section.
  const section = partitionsNode !== undefined && !isNull(partitionsNode)
  if (section) limits.partitions = readPartitions(yaml, partitionsNode, problems)

  if (section) {
    const defined = new Set(limits.partitions.map((p) => p.name))
    for (const ref of refs) {
      if (defined.has(ref.name)) continue
      const guess = didYouMean(ref.name, [...defined])
      problems.push(
        yaml.problem(
          ref.path,
          `partition ${JSON.stringify(ref.name)} is not defined under partitions:; ` +
            (guess.length > 0 ? `did you mean ${guess.map((g) => JSON.stringify(g)).join(' or ')}? ` : '') +
            `define it there or remove it from this list`,
        ),
      )
    }
  } else if (refs.length > 0) {
    // No partitions section, but shapes name partitions: "compute" (default, as CitC) and each named one.
    const names = [DEFAULT_PARTITION, ...refs.map((r) => r.name)].filter((n, i, all) => all.indexOf(n) === i)
    limits.partitions = names.map((name) => ({name, default: name === DEFAULT_PARTITION, options: {}}))
  }

  const slurm = yaml.node(['slurm'])
  if (slurm !== undefined && !isNull(slurm)) {
    const prolog: {value?: string} = {}
    limits.settings = readSettings(yaml, slurm, problems, prolog)
    if (prolog.value) limits.prologSlurmctld = prolog.value
  }
  return limits
}

const isNull = (n: YamlNode | undefined): boolean => isScalar(n) && n.value === null

/** One shape (and its ADs, where the provider has them): entries appended in the order written. */
function readShape(
  yaml: YamlFile,
  opts: ParseLimitsOptions,
  path: YamlPath,
  extended: boolean,
  entries: LimitsEntry[],
  refs: PartitionRef[],
  uses: DeviceUse[],
  problems: InputProblem[],
): void {
  const name = String(path.at(-1))
  const where = yaml.where(path)
  const shape = opts.catalogue.get(name)
  if (!shape) {
    const guesses = opts.suggest(name)
    problems.push(
      yaml.problem(
        path,
        `unknown shape ${JSON.stringify(name)} for provider ${opts.provider}; ` +
          (guesses.length > 0 ? `did you mean ${guesses.join(', ')}?` : `check the name against the ${opts.provider} shapes citc knows`),
      ),
    )
  }

  const node = yaml.node(path)
  let countPath: YamlPath = path
  let spec: z.output<typeof shapeSpecSchema> | undefined
  if (isMap(node) && isSpecMap(node, extended)) {
    if (!extended) {
      problems.push(
        yaml.problem(path, `per-shape settings (${SHAPE_KEYS.join(', ')}) need the extended form: put this shape under a top-level shapes: key`),
      )
      return
    }
    const value = toPlain(yaml, path) as Record<string, unknown>
    // Partition references are checked even when another field of this shape is wrong.
    const listed: unknown = value.partitions
    if (Array.isArray(listed)) {
      listed.forEach((p: unknown, i) => {
        if (typeof p === 'string' && SLURM_NAME.test(p) && listed.indexOf(p) === i) refs.push({name: p, path: [...path, 'partitions', i]})
      })
    }
    const result = shapeSpecSchema.safeParse(value, {reportInput: true})
    if (!result.success) problems.push(...zodProblems(result.error.issues, yaml, {prefix: path, keysAt}))
    else spec = result.data
    if (!('count' in value)) {
      problems.push(
        yaml.problem(path, providerModule(opts.provider).availabilityDomains ? 'count is required; add count: {AD: nodes}, e.g. count: {1: 2}' : 'count is required; add count: N, the maximum number of nodes'),
      )
      return
    }
    countPath = [...path, 'count']
  }

  const counts = readCounts(yaml, opts.provider, countPath, name, problems)
  const machineGpu = shape?.gpu?.devices ? {...shape.gpu, devices: shape.gpu.devices} : undefined
  if (machineGpu) {
    if (spec?.gpu) {
      problems.push(
        yaml.problem(
          [...path, 'gpu'],
          `${name}'s GPUs are this machine's own (${machineGpu.count} ${machineGpu.model}, from ${machineGpu.devices.join(', ')}); remove gpu: — pick another local.${machineGpu.model}x… shape to change the GPUs per node`,
        ),
      )
    }
    const nodes = counts.reduce((sum, c) => sum + c.count, 0)
    if (counts.length > 0) {
      const max = Math.floor(machineGpu.devices.length / machineGpu.count)
      if (nodes > max) {
        problems.push(
          yaml.problem(
            countPath,
            `this machine has ${machineGpu.devices.length} ${machineGpu.model} GPU(s): at most ${max} node(s) of ${name} (${machineGpu.count} GPU(s) each); lower the count to ${max}`,
          ),
        )
      } else {
        uses.push({name, path, devices: machineGpu.devices, model: machineGpu.model, used: machineGpu.devices.slice(0, nodes * machineGpu.count)})
      }
    }
  }
  if (spec) {
    for (const key of ['partitions', 'features'] as const) {
      const list = spec[key]
      if (!list) continue
      list.forEach((item, i) => {
        if (list.indexOf(item) !== i) problems.push(yaml.problem([...path, key, i], `${JSON.stringify(item)} is listed twice; remove one`))
      })
    }
  }
  for (const c of counts) {
    // Keys in one order, optional ones only when given: the same file always gives the same JSON.
    const entry: LimitsEntry = {
      shape: name,
      ...(c.ad === undefined ? {} : {ad: c.ad}),
      count: c.count,
      ...(spec?.partitions ? {partitions: [...new Set(spec.partitions)]} : {}),
      ...(spec?.weight === undefined ? {} : {weight: spec.weight}),
      ...(spec?.features ? {features: [...new Set(spec.features)]} : {}),
      ...(spec?.gpu ? {gpu: {count: spec.gpu.count, model: spec.gpu.model} satisfies Gpu} : {}),
      where,
    }
    entries.push(entry)
  }
}

/**
 * Shapes whose nodes would use the same GPU of this machine (Gpu.devices): each shape's nodes take the devices
 * from the first, so two shapes of one GPU type always collide; the later one is reported, naming the first.
 */
function checkSharedDevices(yaml: YamlFile, uses: readonly DeviceUse[], problems: InputProblem[]): void {
  uses.forEach((use, i) => {
    const earlier = uses.slice(0, i).find((u) => u.used.some((d) => use.used.includes(d)))
    if (!earlier) return
    const shared = use.used.filter((d) => earlier.used.includes(d))
    problems.push(
      yaml.problem(
        use.path,
        `${use.name} and ${earlier.name} (${yaml.where(earlier.path)}) would both use ${shared.join(', ')}: ` +
          `this machine has ${use.devices.length} ${use.model} GPU(s), and a GPU belongs to one node; keep one of the two shapes`,
      ),
    )
  })
}

/**
 * A map of shape settings rather than an AD map ({1: 2}). In the extended form: any key that starts
 * with a letter (so a typo such as "cont" is reported as an unknown setting). In CitC's form: a key
 * that is a shape setting (count, partitions, …), to say that it needs the extended form.
 */
function isSpecMap(node: YamlNode, extended: boolean): boolean {
  if (!isMap(node)) return false
  const keys = node.items.map((p) => keyText(p.key) ?? '')
  return extended ? keys.some((k) => /^[A-Za-z]/.test(k)) : keys.some((k) => (SHAPE_KEYS as readonly string[]).includes(k))
}

function toPlain(yaml: YamlFile, path: YamlPath): unknown {
  let v: unknown = yaml.value
  for (const seg of path) v = v !== null && typeof v === 'object' ? (v as Record<string | number, unknown>)[seg] : undefined
  return v
}

/** The count(s) of one shape: one without an AD, or one per AD where the provider has availability domains. */
function readCounts(yaml: YamlFile, provider: Provider, path: YamlPath, shape: string, problems: InputProblem[]): {ad?: number; count: number}[] {
  const node = yaml.node(path)
  const ads = providerModule(provider).availabilityDomains
  if (!ads) {
    if (isMap(node)) {
      const withAds = PROVIDER_MODULES.filter((m) => m.availabilityDomains).map((m) => m.name)
      problems.push(
        yaml.problem(path, `AD maps ({AD: count}) are for ${withAds.join(', ')} only; on ${provider} give the number of nodes, e.g. "${shape}: 4"`),
      )
      return []
    }
    const count = readCount(yaml, path, node, undefined, problems)
    return count === undefined ? [] : [{count}]
  }

  if (!isMap(node)) {
    const v = isScalar(node) ? node.value : toPlain(yaml, path)
    problems.push(
      yaml.problem(path, `on ${provider} give the nodes per availability domain, e.g. "${shape}: {1: ${typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 2}}", not ${show(v)}`),
    )
    return []
  }
  if (node.items.length === 0) {
    problems.push(yaml.problem(path, `no availability domains given; write e.g. {1: 2}, or remove the shape`))
    return []
  }
  const out: {ad: number; count: number}[] = []
  const seen = new Map<number, string>()
  for (const pair of node.items) {
    const key = isScalar(pair.key) ? pair.key.value : pair.key
    const text = keyText(pair.key) ?? ''
    const adPath = [...path, text]
    let ad: number | undefined
    if (typeof key === 'number' && Number.isInteger(key)) ad = key
    else if (typeof key === 'string' && /^\d+$/.test(key)) ad = Number(key)
    if (ad === undefined || !ads.includes(ad)) {
      problems.push(
        yaml.problem(adPath, `${show(key)} is not an availability domain; AD keys are the numbers ${ads.join(', ')}, e.g. {1: 2, 2: 1}`),
      )
      readCount(yaml, adPath, yaml.node(adPath), undefined, problems)
      continue
    }
    if (seen.has(ad)) {
      problems.push(yaml.problem(adPath, `AD ${ad} is given twice (also at ${seen.get(ad)}); keep one`))
      continue
    }
    seen.set(ad, yaml.where(adPath))
    const count = readCount(yaml, adPath, yaml.node(adPath), ad, problems)
    if (count !== undefined) out.push({ad, count})
  }
  return out
}

function readCount(yaml: YamlFile, path: YamlPath, node: YamlNode | undefined, ad: number | undefined, problems: InputProblem[]): number | undefined {
  const v: unknown = isScalar(node) ? node.value : node === undefined ? null : isSeq(node) ? [] : {}
  if (typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= MAX_COUNT) return v
  let message: string
  if (v === 0) {
    message = ad === undefined ? '0 nodes: remove this line instead of writing 0' : `0 nodes in AD ${ad}: remove "${ad}: 0" instead of writing 0`
  } else if (typeof v === 'number' && Number.isInteger(v) && v > MAX_COUNT) {
    message = `${v} is too many: at most ${MAX_COUNT} nodes per shape${ad === undefined ? '' : ' and AD'} (node names have four digits)`
  } else {
    message = `a node count must be a whole number from 1 to ${MAX_COUNT}, not ${show(v)}; write the maximum number of nodes, e.g. 4`
  }
  problems.push(yaml.problem(path, message))
  return undefined
}

function readPartitions(yaml: YamlFile, node: YamlNode | undefined, problems: InputProblem[]): PartitionSpec[] {
  if (!isMap(node)) {
    problems.push(yaml.problem(['partitions'], `partitions must be a map of partition names to settings, e.g. "compute: {default: true}"`))
    return []
  }
  const out: PartitionSpec[] = []
  const defaults: {name: string; where: string}[] = []
  for (const pair of node.items) {
    const name = keyText(pair.key) ?? ''
    const path: YamlPath = ['partitions', name]
    if (!SLURM_NAME.test(name)) {
      problems.push(yaml.problem(path, `${JSON.stringify(name)} is not a valid Slurm partition name; use only letters, digits, "_", "." and "-" (no commas, spaces or "=")`))
    } else if (name.toUpperCase() === 'DEFAULT') {
      problems.push(yaml.problem(path, `"${name}" is Slurm's keyword for default partition settings; choose another name`))
    }
    const value = yaml.node(path)
    const spec: PartitionSpec = {name, default: false, options: {}}
    out.push(spec)
    if (value === undefined || isNull(value)) continue
    if (!isMap(value)) {
      problems.push(yaml.problem(path, `partition settings must be a map, e.g. {maxTime: "12:00:00"}, not ${show(toPlain(yaml, path))}`))
      continue
    }
    const plain = toPlain(yaml, path) as Record<string, unknown>
    const result = partitionSchema.safeParse(plain, {reportInput: true})
    if (!result.success) problems.push(...zodProblems(result.error.issues, yaml, {prefix: path, keysAt}))
    if (plain.default === true) {
      const at = yaml.where([...path, 'default'])
      const first = defaults[0]
      if (first) {
        problems.push(
          yaml.problem(
            [...path, 'default'],
            `partition "${name}" is marked default, and so is "${first.name}" (${first.where}); Slurm has one default partition: keep default: true on only one`,
          ),
        )
      }
      defaults.push({name, where: at})
      spec.default = true
    }
    if ('maxTime' in plain) {
      const t = slurmTime(plain.maxTime)
      if (typeof t === 'string') spec.maxTime = t
      else problems.push(yaml.problem([...path, 'maxTime'], t.error))
    }
    if ('options' in plain) spec.options = readOptions(yaml, [...path, 'options'], problems)
  }
  if (out.length > 0 && defaults.length === 0) out[0].default = true
  // One key order for every spec (the JSON output is compared byte for byte).
  return out.map((p) => ({name: p.name, default: p.default, ...(p.maxTime === undefined ? {} : {maxTime: p.maxTime}), options: p.options}))
}

/**
 * A Slurm time limit as written in slurm.conf: UNLIMITED (or INFINITE), MM, MM:SS, HH:MM:SS, D-HH,
 * D-HH:MM or D-HH:MM:SS. A YAML integer is minutes.
 */
export function slurmTime(v: unknown): string | {error: string} {
  const help = 'write a Slurm time: UNLIMITED, minutes (MM), MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, e.g. "1-00:00:00"'
  let s: string
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) s = String(v)
  else if (typeof v === 'string') s = v.trim()
  else return {error: `maxTime ${show(v)} is not a time; ${help}`}
  if (/^(unlimited|infinite)$/i.test(s)) return s.toUpperCase()
  const m = /^(?:(\d+)-)?(\d+)(?::(\d+))?(?::(\d+))?$/.exec(s)
  if (!m) return {error: `maxTime ${JSON.stringify(s)} is not a Slurm time; ${help}`}
  const [, d, a, b, c] = m
  const fields = [a, b, c].filter((x): x is string => x !== undefined)
  // Without days: MM, MM:SS, HH:MM:SS. With days: D-HH, D-HH:MM, D-HH:MM:SS.
  // The leading field is unbounded (MM, HH); every later one has at most two digits and a range.
  const bounded = d === undefined ? fields.slice(1) : fields
  const ranges = d === undefined ? [60, 60] : [24, 60, 60]
  const bad = bounded.some((f, i) => f.length > 2 || Number(f) >= ranges[i])
  if (bad) return {error: `maxTime ${JSON.stringify(s)} has a field out of range (hours < 24 after a day count, minutes and seconds < 60); ${help}`}
  if ([d, ...fields].every((f) => f === undefined || Number(f) === 0)) {
    return {error: `maxTime ${JSON.stringify(s)} would let no job run; give a positive time or UNLIMITED`}
  }
  return s
}

/** A scalar setting value as slurm.conf text: booleans as YES/NO. */
function settingValue(v: unknown): string | undefined {
  if (typeof v === 'string') return v
  if (typeof v === 'number' && Number.isFinite(v)) return String(v)
  if (typeof v === 'boolean') return v ? 'YES' : 'NO'
  return undefined
}

const valueAdvice = (key: string, raw: unknown) =>
  raw === null || raw === undefined || raw === '' ? `give ${key} a value, or remove it` : `the value of ${key} must be text or a number, not ${show(raw)}; write it as in slurm.conf`

function readOptions(yaml: YamlFile, path: YamlPath, problems: InputProblem[]): Record<string, string> {
  const node = yaml.node(path)
  const out: Record<string, string> = {}
  if (node === undefined || isNull(node)) return out
  if (!isMap(node)) {
    problems.push(yaml.problem(path, `options must be a map of Slurm partition options, e.g. {OverSubscribe: "NO"}`))
    return out
  }
  const seen = new Map<string, string>()
  for (const pair of node.items) {
    const key = keyText(pair.key) ?? ''
    const keyPath = [...path, key]
    if (!SLURM_KEY.test(key)) {
      problems.push(yaml.problem(keyPath, `${JSON.stringify(key)} is not a Slurm partition option; write it as Slurm spells it, e.g. OverSubscribe`))
      continue
    }
    const reserved = RESERVED_PARTITION_OPTIONS.find((r) => r.toLowerCase() === key.toLowerCase())
    if (reserved) {
      const instead = reserved === 'MaxTime' ? 'use maxTime: on the partition instead' : reserved === 'Default' ? 'use default: true on the partition instead' : 'remove it'
      problems.push(yaml.problem(keyPath, `citc writes ${reserved}= on the partition line itself; ${instead}`))
      continue
    }
    if (seen.has(key.toLowerCase())) {
      problems.push(yaml.problem(keyPath, `${key} is already set (${seen.get(key.toLowerCase())}; Slurm ignores case in option names); keep one`))
      continue
    }
    seen.set(key.toLowerCase(), yaml.where(keyPath))
    const raw = toPlain(yaml, keyPath)
    const v = settingValue(raw)
    if (v === undefined || v.trim() === '') {
      problems.push(yaml.problem(keyPath, valueAdvice(key, raw)))
    } else if (/\s/.test(v)) {
      problems.push(yaml.problem(keyPath, `the value of ${key} cannot contain spaces or line breaks (it goes on the one partition line); remove them`))
    } else {
      out[key] = v
    }
  }
  return out
}

function managedKeyAdvice(key: string): string {
  const k = key.toLowerCase()
  const is = (...names: string[]) => names.some((n) => n.toLowerCase() === k)
  if (is('ResumeProgram', 'SuspendProgram', 'ResumeFailProgram')) return `citc sets ${key} itself (it runs citc's node programs); remove it`
  if (is('SuspendTime', 'ResumeTimeout', 'SuspendTimeout', 'ResumeRate', 'SuspendRate')) {
    return `citc sets ${key} itself from its elastic power-saving settings; remove it here and change citc's setting for the cluster instead`
  }
  if (is('NodeName', 'NodeSet', 'PartitionName')) {
    return `citc writes the node and partition lines itself; remove ${key} and describe nodes under shapes: and partitions under partitions: instead`
  }
  if (is('GresTypes')) return 'citc sets GresTypes itself when a shape has GPUs; remove it and use gpu: {count, model} on the shape instead'
  if (is('Include')) return 'citc sets the file layout itself; remove Include and put each setting under slurm: as Key: value'
  if (is('SrunPortRange')) {
    return 'citc sets SrunPortRange itself when machines join the cluster (the ports srun listens on, for their firewalls); remove it'
  }
  if (is('SuspendExcNodes')) return 'citc sets SuspendExcNodes itself: joined machines (static:) are never powered down; remove it'
  if (is('SuspendExcParts', 'CommunicationParameters', 'PrivateData', 'SlurmctldParameters', 'ReturnToService', 'TreeWidth')) {
    return `citc sets ${key} itself (elastic cloud nodes depend on its value); remove it`
  }
  return `citc sets ${key} itself when it sets up the cluster; remove it`
}

function readSettings(yaml: YamlFile, node: YamlNode, problems: InputProblem[], prolog: {value?: string}): Record<string, string> {
  const out: Record<string, string> = {}
  if (!isMap(node)) {
    problems.push(yaml.problem(['slurm'], `slurm must be a map of slurm.conf settings, e.g. "MaxJobCount: 20000"`))
    return out
  }
  const seen = new Map<string, string>()
  for (const pair of node.items) {
    const key = keyText(pair.key) ?? ''
    const path: YamlPath = ['slurm', key]
    if (!SLURM_KEY.test(key)) {
      problems.push(yaml.problem(path, `${JSON.stringify(key)} is not a slurm.conf key; write it as Slurm spells it (letters and digits, e.g. MaxJobCount)`))
      continue
    }
    if (key.toLowerCase() === 'prologslurmctld') {
      // citc owns the key (its prolog starts batch jobs as soon as their nodes are up) and runs the
      // site's own program from there: kept, not refused.
      const v = toPlain(yaml, path)
      if (typeof v !== 'string' || !/^\/[^\s,"#]+(,\/[^\s,"#]+)*$/.test(v)) {
        problems.push(yaml.problem(path, `PrologSlurmctld must be the absolute path of a program (or several, separated by commas; no spaces or quotes), e.g. /etc/slurm/prolog-ctld.sh; citc runs it from its own PrologSlurmctld`))
      } else {
        prolog.value = v
      }
      continue
    }
    if (isManagedKey(key)) {
      problems.push(yaml.problem(path, managedKeyAdvice(key)))
      continue
    }
    if (seen.has(key.toLowerCase())) {
      problems.push(yaml.problem(path, `${key} is already set (${seen.get(key.toLowerCase())}; Slurm ignores case in keys); keep one`))
      continue
    }
    seen.set(key.toLowerCase(), yaml.where(path))
    const raw = toPlain(yaml, path)
    const v = settingValue(raw)
    if (v === undefined || v.trim() === '') {
      problems.push(yaml.problem(path, valueAdvice(key, raw)))
    } else if (/[\r\n]/.test(v)) {
      problems.push(yaml.problem(path, `the value of ${key} cannot span lines (slurm.conf settings are one line); put it on one line`))
    } else {
      out[key] = v
    }
  }
  return out
}
