// Reading citc's Terraform templates in tests: every .tf file through @cdktf/hcl2json (HashiCorp's
// HCL parser compiled to WASM), merged into one module, and a small evaluator for the expressions the
// tests need to compute (names and labels derived from the cluster id). The evaluator knows a handful
// of Terraform functions and throws on anything else, so a test can never pass by skipping a part it
// did not understand.
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {getExpressionAst, parse} from '@cdktf/hcl2json'

// hcl2json's JSON: blocks are arrays of bodies; attributes keep expressions as "${…}" strings.
/* eslint-disable @typescript-eslint/no-explicit-any */
export type Body = Record<string, any>

export interface Resource {
  type: string
  name: string
  address: string
  body: Body
  file: string
}

export interface TfModule {
  dir: string
  /** Parsed file by file. */
  files: Record<string, Body>
  variables: Record<string, Body>
  outputs: Record<string, Body>
  locals: Record<string, unknown>
  resources: Resource[]
  data: Resource[]
  providers: Record<string, Body>
  terraform: Body[]
}

export async function parseFile(file: string): Promise<Body> {
  return parse(file, readFileSync(file, 'utf8'))
}

function blocks(kind: 'resource' | 'data', parsed: Body, file: string): Resource[] {
  const out: Resource[] = []
  for (const [type, byName] of Object.entries((parsed[kind] ?? {}) as Record<string, Record<string, Body[]>>)) {
    for (const [name, bodies] of Object.entries(byName)) {
      out.push({type, name, address: kind === 'data' ? `data.${type}.${name}` : `${type}.${name}`, body: bodies[0], file})
    }
  }
  return out
}

export async function loadModule(dir: string): Promise<TfModule> {
  const mod: TfModule = {dir, files: {}, variables: {}, outputs: {}, locals: {}, resources: [], data: [], providers: {}, terraform: []}
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.tf')).sort()) {
    const parsed = await parseFile(join(dir, f))
    mod.files[f] = parsed
    for (const [name, bodies] of Object.entries((parsed.variable ?? {}) as Record<string, Body[]>)) mod.variables[name] = bodies[0]
    for (const [name, bodies] of Object.entries((parsed.output ?? {}) as Record<string, Body[]>)) mod.outputs[name] = bodies[0]
    for (const l of (parsed.locals ?? []) as Body[]) Object.assign(mod.locals, l)
    for (const [name, bodies] of Object.entries((parsed.provider ?? {}) as Record<string, Body[]>)) mod.providers[name] = bodies[0]
    mod.terraform.push(...((parsed.terraform ?? []) as Body[]))
    mod.resources.push(...blocks('resource', parsed, f))
    mod.data.push(...blocks('data', parsed, f))
  }
  return mod
}

// ---------------------------------------------------------------------------------------------
// A small evaluator

interface AstNode {
  type: string
  meta?: any
  children?: AstNode[]
}

export interface Scope {
  var: Record<string, unknown>
  /** The module's raw locals (evaluated on demand). */
  locals: Record<string, unknown>
  /** The variables of the for expressions being evaluated. */
  iteration?: Record<string, unknown>
  /** Values a test gives for resource attributes known only after apply, by reference text. */
  known?: Record<string, unknown>
}

// IPv4 addresses as unsigned 32-bit numbers, for cidrhost() and cidrsubnet().
function ipToNumber(ip: string): number {
  const octets = ip.split('.').map(Number)
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) throw new Error(`not an IPv4 address: ${ip}`)
  return octets.reduce((n, o) => n * 256 + o, 0)
}

const numberToIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.')

function parseCidr(cidr: string): {base: number; prefix: number} {
  const [ip, bits] = cidr.split('/')
  const prefix = Number(bits)
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > 32) throw new Error(`not an IPv4 CIDR block: ${cidr}`)
  const size = 2 ** (32 - prefix)
  return {base: ipToNumber(ip) - (ipToNumber(ip) % size), prefix}
}

const FUNCTIONS: Record<string, (...args: any[]) => unknown> = {
  substr: (s: string, offset: number, length: number) => (length < 0 ? s.slice(offset) : s.slice(offset, offset + length)),
  replace: (s: string, sub: string, rep: string) => {
    if (sub.length > 1 && sub.startsWith('/') && sub.endsWith('/')) return s.replace(new RegExp(sub.slice(1, -1), 'g'), rep)
    return s.split(sub).join(rep)
  },
  lower: (s: string) => s.toLowerCase(),
  upper: (s: string) => s.toUpperCase(),
  trimsuffix: (s: string, suffix: string) => (s.endsWith(suffix) ? s.slice(0, -suffix.length) : s),
  startswith: (s: string, p: string) => s.startsWith(p),
  endswith: (s: string, p: string) => s.endsWith(p),
  length: (v: unknown) => (typeof v === 'string' ? [...v].length : Array.isArray(v) ? v.length : Object.keys(v as object).length),
  merge: (...objects: Array<Record<string, unknown>>) => Object.assign({}, ...objects),
  split: (sep: string, s: string) => s.split(sep),
  element: (list: unknown[], i: number) => list[i % list.length],
  tonumber: (v: unknown) => {
    const n = Number(v)
    if (Number.isNaN(n)) throw new Error(`tonumber(${JSON.stringify(v)}): not a number`)
    return n
  },
  floor: (n: number) => Math.floor(n),
  pow: (a: number, b: number) => a ** b,
  range: (start: number, end: number) => Array.from({length: Math.max(0, end - start)}, (_, i) => start + i),
  cidrhost: (cidr: string, host: number) => {
    const {base, prefix} = parseCidr(cidr)
    if (host < 0 || host >= 2 ** (32 - prefix)) throw new Error(`cidrhost(${cidr}, ${host}): no such host`)
    return numberToIp(base + host)
  },
  cidrsubnet: (cidr: string, newbits: number, netnum: number) => {
    const {base, prefix} = parseCidr(cidr)
    const p = prefix + newbits
    if (p > 32 || netnum < 0 || netnum >= 2 ** newbits) throw new Error(`cidrsubnet(${cidr}, ${newbits}, ${netnum}): out of range`)
    return `${numberToIp(base + netnum * 2 ** (32 - p))}/${p}`
  },
}

const BINARY: Record<string, (a: any, b: any) => unknown> = {
  add: (a, b) => a + b,
  subtract: (a, b) => a - b,
  multiply: (a, b) => a * b,
  divide: (a, b) => a / b,
  modulo: (a, b) => a % b,
  equal: (a, b) => a === b,
  notEqual: (a, b) => a !== b,
  lessThan: (a, b) => a < b,
  lessThanOrEqual: (a, b) => a <= b,
  greaterThan: (a, b) => a > b,
  greaterThanOrEqual: (a, b) => a >= b,
}

async function evalNode(node: AstNode, scope: Scope): Promise<unknown> {
  switch (node.type) {
    case 'literalValue': {
      const {type, value} = node.meta as {type: string; value: string}
      if (type === 'number') return Number(value)
      if (type === 'bool') return value === 'true'
      return value
    }
    case 'templateWrap': // "${x}": the value of x itself
      return evalNode(node.children![0], scope)
    case 'template': {
      const parts = await Promise.all((node.children ?? []).map((c) => evalNode(c, scope)))
      if (parts.length === 1 && node.children![0].type !== 'literalValue') return parts[0]
      return parts.map(String).join('')
    }
    case 'scopeTraversal': {
      const path = String(node.meta.value).split('.')
      if (path.length === 1 && scope.iteration && path[0] in scope.iteration) return scope.iteration[path[0]]
      if (scope.known && String(node.meta.value) in scope.known) return scope.known[String(node.meta.value)]
      if (path.length !== 2) throw new Error(`unsupported reference ${node.meta.value}`)
      const [root, name] = path
      if (root === 'var') {
        if (!(name in scope.var)) throw new Error(`no value for var.${name}`)
        return scope.var[name]
      }
      if (root === 'local') {
        if (!(name in scope.locals)) throw new Error(`no local ${name}`)
        return evaluateValue(scope.locals[name], scope)
      }
      throw new Error(`unsupported reference ${node.meta.value}`)
    }
    case 'function': {
      const fn = FUNCTIONS[node.meta.name as string]
      if (!fn) throw new Error(`the test evaluator does not know ${node.meta.name}()`)
      const args = await Promise.all((node.children ?? []).map((c) => evalNode(c, scope)))
      return fn(...args)
    }
    case '': // parentheses: hcl2json gives them no type name
      if (node.children?.length !== 1) throw new Error('the test evaluator met an unnamed node that is not parentheses')
      return evalNode(node.children[0], scope)
    case 'binaryOp': {
      const op = BINARY[node.meta.operator as string]
      if (!op) throw new Error(`the test evaluator does not handle the operator ${node.meta.operator}`)
      const [a, b] = await Promise.all(node.children!.map((c) => evalNode(c, scope)))
      return op(a, b)
    }
    case 'conditional': {
      const [condition, yes, no] = node.children!
      return (await evalNode(condition, scope)) ? evalNode(yes, scope) : evalNode(no, scope)
    }
    case 'for': {
      // [for x in list : value] only: a key, a filter ("if") or an object result would be skipped here.
      const {keyVar, valVar, groupedValue, conditionExpression, keyExpression} = node.meta as Record<string, unknown>
      if (keyVar || groupedValue || conditionExpression || keyExpression || node.children!.length !== 2 || !String(node.meta.value).startsWith('[')) {
        throw new Error(`the test evaluator handles only [for x in list : value], not ${node.meta.value}`)
      }
      const list = await evalNode(node.children![0], scope)
      if (!Array.isArray(list)) throw new Error(`for over a non-list in ${node.meta.value}`)
      const out: unknown[] = []
      for (const item of list) out.push(await evalNode(node.children![1], {...scope, iteration: {...scope.iteration, [String(valVar)]: item}}))
      return out
    }
    case 'object': {
      // Keys are not in the AST: parse the object's text as an attribute, then evaluate its members.
      const parsed = await parse('object.tf', `x = ${node.meta.value as string}\n`)
      return evaluateValue(parsed.x, scope)
    }
    default:
      throw new Error(`the test evaluator does not handle ${node.type}: ${JSON.stringify(node.meta?.value ?? '')}`)
  }
}

/** Evaluate an attribute's value as hcl2json gives it: a "${…}"/template string, a literal, an object. */
export async function evaluateValue(value: unknown, scope: Scope): Promise<unknown> {
  if (typeof value === 'string') {
    if (!value.includes('${')) return value
    const ast = (await getExpressionAst('value.tf', `"${value}"`)) as AstNode | null
    if (!ast) throw new Error(`cannot parse ${value}`)
    return evalNode(ast, scope)
  }
  if (Array.isArray(value)) return Promise.all(value.map((v) => evaluateValue(v, scope)))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = await evaluateValue(v, scope)
    return out
  }
  return value
}

/** Is the value (or any string inside it) a reference to `what`, e.g. "var.ssh_cidr"? */
export function mentions(value: unknown, what: string): boolean {
  return JSON.stringify(value ?? null).includes(what)
}

// ---------------------------------------------------------------------------------------------
// The cloud-init template, rendered the way Terraform's templatefile() would for the constructs it
// uses: ${jsonencode(…)}, ${trimspace(…)}, ${name}, and %{ if name ~} … %{ endif ~}.

export function templateVariables(template: string): Set<string> {
  const names = new Set<string>()
  for (const m of template.matchAll(/\$\{([^}]*)\}/g)) for (const id of m[1].match(/[a-z_][a-z0-9_]*/g) ?? []) names.add(id)
  for (const m of template.matchAll(/%\{\s*if\s+([a-z_][a-z0-9_]*)\s*~?\}/g)) names.add(m[1])
  for (const fn of ['jsonencode', 'trimspace']) names.delete(fn)
  return names
}

function evalTemplateExpr(expr: string, vars: Record<string, unknown>): string {
  const e = expr.trim()
  const call = /^([a-z]+)\(([\s\S]*)\)$/.exec(e)
  if (call) {
    const inner = evalTemplateExpr(call[2], vars)
    if (call[1] === 'jsonencode') return JSON.stringify(inner)
    if (call[1] === 'trimspace') return inner.trim()
    throw new Error(`the test renderer does not know ${call[1]}()`)
  }
  if (!/^[a-z_][a-z0-9_]*$/.test(e)) throw new Error(`the test renderer does not handle \${${e}}`)
  if (!(e in vars)) throw new Error(`no value for ${e}`)
  return String(vars[e])
}

export function renderTemplate(template: string, vars: Record<string, unknown>): string {
  let out = template.replace(/%\{ if ([a-z_][a-z0-9_]*) ~\}\s*([\s\S]*?)%\{ endif ~\}\s*/g, (_, name: string, body: string) => {
    if (!(name in vars)) throw new Error(`no value for ${name}`)
    return vars[name] ? body : ''
  })
  if (out.includes('%{')) throw new Error('the test renderer left a template directive')
  out = out.replace(/\$\{([^}]*)\}/g, (_, expr: string) => evalTemplateExpr(expr, vars))
  return out
}
