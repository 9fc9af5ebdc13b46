// Checks a Terraform file against provider schemas (test/fixtures/terraform-schemas, extracted by
// test/templates/schemas/extract.ts): every resource, data source and provider block, recursively
// into nested blocks — unknown type, unknown argument or block name, an argument written as a block
// or a block as an argument, a missing required argument or block. `terraform validate` does these
// checks (and more) but needs the providers downloaded; this is the part that can run offline.
//
// Two readings of the file: HashiCorp's parser (@cdktf/hcl2json, the caller passes its result) is the
// authority on what the file says, but it keeps no positions and writes `x { … }` and `x = [{ … }]`
// alike. So a small structural scanner reads the same text for where each block and argument is and
// which of the two forms it has, and the checker first compares the two readings: if they differ,
// that is reported as a mistake too (the scanner misread the file) — never silently skipped.
//
// Pure: text and parsed JSON in, mistakes out.

/** One block's schema: its argument names, nested blocks, required names (arguments or blocks). */
export interface Block {
  args?: string[]
  blocks?: Record<string, Block>
  /**
   * Arguments of object type (or list of objects) that also accept block syntax, whose contents are
   * checked when written as a block: SDKv2's "attributes as blocks" (aws_security_group's ingress) or
   * a plugin-framework nested attribute (the provider packages do not tell which).
   */
  objects?: Record<string, Block>
  required?: string[]
  /** Approximate schemas only: another accepted spelling → the schema's name. */
  aliases?: Record<string, string>
}

export interface SchemaFile {
  /** "hashicorp/aws" */
  provider: string
  version: string
  /** Where the schema was extracted from. */
  source: string
  /** Set when the schema is an approximation (what it may get wrong). */
  approximate?: string
  providerConfig: Block
  resource: Record<string, Block>
  data: Record<string, Block>
}

/** Schemas by the provider's local name ("aws", "google", "oci", "random"). */
export type Schemas = Record<string, SchemaFile>

export interface Mistake {
  file: string
  line: number
  column: number
  message: string
}

export function formatMistake(m: Mistake): string {
  return `${m.file}:${m.line}:${m.column}: ${m.message}`
}

// ---------------------------------------------------------------------------------------------
// The structural scanner

export interface ScanNode {
  kind: 'attr' | 'block'
  name: string
  labels: string[]
  line: number
  column: number
  children: ScanNode[]
}

class ScanError extends Error {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly what: string,
  ) {
    super(`${line}:${column}: ${what}`)
  }
}

const IDENT = /[A-Za-z_][A-Za-z0-9_-]*/y
const HEREDOC = /<<(-?)([A-Za-z_][A-Za-z0-9_-]*)[ \t]*\r?\n/y

/** Reads the blocks and arguments of HCL native syntax, skipping over every expression. */
export function scan(text: string): ScanNode[] {
  let pos = 0
  const lineStarts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1)
  const where = (at: number): {line: number; column: number} => {
    let lo = 0
    let hi = lineStarts.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (lineStarts[mid] <= at) lo = mid
      else hi = mid - 1
    }
    return {line: lo + 1, column: at - lineStarts[lo] + 1}
  }
  const fail = (what: string): never => {
    const {line, column} = where(pos)
    throw new ScanError(line, column, what)
  }

  /** Skips a comment at pos, if any; a line comment stops before its newline. */
  const skipComment = (): boolean => {
    if (text[pos] === '#' || text.startsWith('//', pos)) {
      while (pos < text.length && text[pos] !== '\n') pos++
      return true
    }
    if (text.startsWith('/*', pos)) {
      const end = text.indexOf('*/', pos + 2)
      if (end < 0) fail('unterminated comment')
      pos = end + 2
      return true
    }
    return false
  }

  const skipBlank = (newlines: boolean): void => {
    for (;;) {
      const c = text[pos]
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) pos++
      else if (!skipComment()) return
    }
  }

  const skipString = (): void => {
    pos++ // the opening quote
    while (pos < text.length) {
      const c = text[pos]
      if (c === '\\') pos += 2
      else if (c === '"') {
        pos++
        return
      } else if (c === '\n') fail('newline in a string')
      else if ((c === '$' || c === '%') && text[pos + 1] === c && text[pos + 2] === '{') pos += 3 // $${ is a literal
      else if ((c === '$' || c === '%') && text[pos + 1] === '{') {
        pos += 2
        skipExpression(true)
        pos++ // the closing brace
      } else pos++
    }
    fail('unterminated string')
  }

  const skipHeredoc = (marker: string): void => {
    const lineEnd = text.indexOf('\n', pos)
    pos = lineEnd < 0 ? text.length : lineEnd + 1
    while (pos < text.length) {
      const end = text.indexOf('\n', pos)
      const line = text.slice(pos, end < 0 ? text.length : end)
      if (line.trim() === marker) {
        pos += line.length // stop before the newline: it ends the attribute
        return
      }
      pos = end < 0 ? text.length : end + 1
    }
    fail(`heredoc ${marker} not terminated`)
  }

  /**
   * Skips an expression. At depth 0 a newline ends it, and so does a "}" (the end of a one-line block
   * `x { a = 1 }`); inside an interpolation (`inTemplate`) only the "}" that closes it does.
   */
  const skipExpression = (inTemplate: boolean): void => {
    let depth = 0
    while (pos < text.length) {
      const c = text[pos]
      if (c === '"') {
        skipString()
        continue
      }
      if (c === '<' && text[pos + 1] === '<') {
        HEREDOC.lastIndex = pos
        const m = HEREDOC.exec(text)
        if (m) {
          skipHeredoc(m[2])
          continue
        }
      }
      if (skipComment()) continue
      if (c === '(' || c === '[' || c === '{') depth++
      else if (c === ')' || c === ']' || c === '}') {
        if (depth === 0) {
          if (c === '}') return
          fail(`unbalanced ${c}`)
        }
        depth--
      } else if (c === '\n' && depth === 0 && !inTemplate) return
      pos++
    }
    if (inTemplate || depth > 0) fail('unterminated expression')
  }

  const body = (nested: boolean): ScanNode[] => {
    const items: ScanNode[] = []
    for (;;) {
      skipBlank(true)
      if (pos >= text.length) {
        if (nested) fail('missing }')
        return items
      }
      if (text[pos] === '}') {
        if (!nested) fail('unexpected }')
        pos++
        return items
      }
      const start = pos
      IDENT.lastIndex = pos
      const id = IDENT.exec(text)
      if (!id) fail(`unexpected ${JSON.stringify(text[pos])}`)
      pos += id![0].length
      const node: ScanNode = {kind: 'attr', name: id![0], labels: [], ...where(start), children: []}
      skipBlank(false)
      if (text[pos] === '=' && text[pos + 1] !== '=') {
        pos++
        skipExpression(false)
      } else {
        node.kind = 'block'
        for (;;) {
          if (text[pos] === '"') {
            const from = pos
            skipString()
            node.labels.push(JSON.parse(text.slice(from, pos)) as string)
          } else {
            IDENT.lastIndex = pos
            const label = IDENT.exec(text)
            if (!label) break
            node.labels.push(label[0])
            pos += label[0].length
          }
          skipBlank(false)
        }
        if (text[pos] !== '{') fail(`expected "=" or "{" after ${id![0]}`)
        pos++
        node.children = body(true)
      }
      items.push(node)
    }
  }

  return body(false)
}

// ---------------------------------------------------------------------------------------------
// Comparing the scanner's reading with hcl2json's

/* eslint-disable @typescript-eslint/no-explicit-any */
type Json = Record<string, any>

/** The differences between the scanner's nodes and hcl2json's body (empty when they agree). */
function compare(nodes: ScanNode[], json: Json, path: string): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  const blockGroups = new Map<string, ScanNode[]>() // by name and labels, in order
  for (const n of nodes) {
    seen.add(n.name)
    if (n.kind === 'attr') {
      if (!(n.name in json)) out.push(`${path}${n.name}: an argument hcl2json does not have`)
      continue
    }
    const key = [n.name, ...n.labels].join('\u0000')
    blockGroups.set(key, [...(blockGroups.get(key) ?? []), n])
  }
  for (const [key, group] of blockGroups) {
    const [name, ...labels] = key.split('\u0000')
    let bodies: any = json[name]
    for (const l of labels) bodies = bodies?.[l]
    if (!Array.isArray(bodies) || bodies.length !== group.length) {
      out.push(`${path}${[name, ...labels].join(' ')}: ${group.length} block(s), hcl2json has ${Array.isArray(bodies) ? bodies.length : 'none'}`)
      continue
    }
    group.forEach((n, i) => out.push(...compare(n.children, bodies[i] as Json, `${path}${[name, ...labels].join(' ')}.`)))
  }
  for (const k of Object.keys(json)) if (!seen.has(k)) out.push(`${path}${k}: in hcl2json, not found by the scanner`)
  return out
}

// ---------------------------------------------------------------------------------------------
// The checks

/** Terraform's meta-arguments (https://developer.hashicorp.com/terraform/language/meta-arguments). */
const META = {
  resource: {args: ['count', 'for_each', 'depends_on', 'provider'], blocks: ['lifecycle', 'provisioner', 'connection']},
  data: {args: ['count', 'for_each', 'depends_on', 'provider'], blocks: ['lifecycle']},
  provider: {args: ['alias', 'version'], blocks: []},
  nested: {args: [], blocks: []},
} as const

type Where = keyof typeof META

function checkBody(nodes: ScanNode[], schema: Block, where: Where, subject: string, header: ScanNode, report: (at: {line: number; column: number}, message: string) => void): void {
  const args = new Set([...(schema.args ?? []), ...Object.keys(schema.objects ?? {})])
  const blocks = {...schema.blocks, ...schema.objects}
  const canonical = (name: string): string => schema.aliases?.[name] ?? name
  const present = new Set<string>()
  // "aws_instance "i": " at the top, "aws_instance "i": ebs_block_device: " inside a block.
  const inside = `${subject}${subject.endsWith(':') ? ' ' : ': '}`
  for (const n of nodes) {
    if (n.kind === 'attr' && (META[where].args as readonly string[]).includes(n.name)) continue
    if (n.kind === 'block' && (META[where].blocks as readonly string[]).includes(n.name)) continue
    if (n.kind === 'block' && n.name === 'dynamic') {
      const label = n.labels[0] ?? ''
      const name = canonical(label)
      present.add(name)
      if (!blocks[name]) {
        report(n, `${inside}dynamic "${label}": ${args.has(name) ? `"${label}" is an argument, not a block` : `unknown block type "${label}"`}`)
        continue
      }
      for (const c of n.children) {
        if (c.kind === 'attr' && ['for_each', 'iterator', 'labels'].includes(c.name)) continue
        if (c.kind === 'block' && c.name === 'content') checkBody(c.children, blocks[name], 'nested', `${inside}dynamic "${label}" content:`, c, report)
        else report(c, `${inside}dynamic "${label}": unknown ${c.kind === 'attr' ? 'argument' : 'block type'} "${c.name}"`)
      }
      continue
    }
    const name = canonical(n.name)
    present.add(name)
    if (n.kind === 'attr') {
      if (args.has(name)) continue
      report(n, blocks[name] ? `${inside}"${n.name}" is a block, not an argument (write ${n.name} { … })` : `${inside}unknown argument "${n.name}"`)
    } else if (blocks[name]) {
      checkBody(n.children, blocks[name], 'nested', `${inside}${n.name}:`, n, report)
    } else {
      report(n, args.has(name) ? `${inside}"${n.name}" is an argument, not a block (write ${n.name} = …)` : `${inside}unknown block type "${n.name}"`)
    }
  }
  for (const r of schema.required ?? []) {
    if (present.has(r)) continue
    const what = schema.blocks?.[r] ? 'block' : 'argument'
    report(header, `${inside}missing required ${what} "${r}"`)
  }
}

/** Which provider's schema a resource type belongs to: its prefix, as Terraform infers it. */
function providerOf(type: string): string {
  return type.split('_')[0]
}

/**
 * The mistakes in one file: `file` is the name to report (templates/terraform/aws/iam.tf), `text` its
 * contents, `parsed` what @cdktf/hcl2json's parse() made of it.
 */
export function checkFile(file: string, text: string, parsed: Json, schemas: Schemas): Mistake[] {
  const mistakes: Mistake[] = []
  const report = (at: {line: number; column: number}, message: string): void => {
    mistakes.push({file, line: at.line, column: at.column, message})
  }
  let nodes: ScanNode[]
  try {
    nodes = scan(text)
  } catch (error) {
    if (!(error instanceof ScanError)) throw error
    return [{file, line: error.line, column: error.column, message: `the schema check's scanner cannot read this: ${error.what}`}]
  }
  for (const d of compare(nodes, parsed, '')) report({line: 1, column: 1}, `the schema check's scanner reads this file differently from hcl2json: ${d}`)
  if (mistakes.length > 0) return mistakes

  for (const n of nodes) {
    if (n.kind !== 'block') continue
    if (n.name === 'resource' || n.name === 'data') {
      const [type, name] = n.labels
      const subject = `${n.name === 'data' ? 'data.' : ''}${type} "${name}"`
      const schema = schemas[providerOf(type)]
      if (!schema) {
        report(n, `${subject}: no schema for provider "${providerOf(type)}"`)
        continue
      }
      const block = schema[n.name][type]
      if (!block) {
        report(n, `${subject}: unknown ${n.name === 'data' ? 'data source' : 'resource'} type "${type}" (${schema.provider} ${schema.version})`)
        continue
      }
      checkBody(n.children, block, n.name, subject, n, report)
    } else if (n.name === 'provider') {
      const [local] = n.labels
      const schema = schemas[local]
      if (!schema) report(n, `provider "${local}": no schema for provider "${local}"`)
      else checkBody(n.children, schema.providerConfig, 'provider', `provider "${local}"`, n, report)
    }
  }
  return mistakes.sort((a, b) => a.line - b.line || a.column - b.column)
}
