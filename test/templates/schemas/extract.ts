// Extracts trimmed Terraform provider schemas (argument and block names, which are required, nested
// blocks) from published provider packages into test/fixtures/terraform-schemas/*.json.gz, for
// test/templates/schema.test.ts to check citc's Terraform templates offline (`terraform validate`
// would need to download the providers; this machine cannot).
//
// Inputs: the unpacked npm packages, in a scratch directory OUTSIDE the repository (together ~800 MB;
// never dependencies of citc):
//
//   mkdir -p /tmp/tfschema && cd /tmp/tfschema
//   for p in @cdktf/provider-aws@21.22.1 @cdktf/provider-google@16.12.1 @cdktf/provider-random@12.0.1 @pulumi/oci@4.20.0
//   do npm pack "$p"; done
//   for f in *.tgz; do mkdir -p "${f%.tgz}" && tar -xzf "$f" -C "${f%.tgz}"; done
//
// Run (from the repository root; the AWS manifest is a 130 MB JSON document, hence the heap size):
//
//   NODE_OPTIONS=--max-old-space-size=6144 npx tsx test/templates/schemas/extract.ts /tmp/tfschema
//
// Outputs: aws.json.gz, google.json.gz, random.json.gz, oci.json.gz (see SchemaFile in
// test/templates/schema-check.ts for the format). Re-run it when a provider is upgraded: change the
// versions in PACKAGES and in the commands above. The output is deterministic (sorted keys, gzip
// without a timestamp), so an unchanged input gives a byte-identical fixture.
//
// Where the names come from:
// - cdktf providers (aws, google, random): the .jsii manifest. Each resource, data source and
//   provider class's summary links its Terraform Registry page ("Represents a {@link …/docs/resources/
//   iam_role aws_iam_role}"); its constructor's config struct lists the settable arguments, each
//   documented with its Terraform name ("{@link …#assume_role_policy IamRole#assume_role_policy}"), so
//   no camelCase → snake_case guessing is needed. A property is required when it is not optional; a
//   nested block is a property whose summary is "<name> block." and whose type is a struct. A struct
//   without that summary is an attribute of object type (`objects`): either a nested attribute of the
//   plugin framework (`x = {…}`) or an SDKv2 attribute that also accepts block syntax
//   (aws_security_group's `ingress { … }`, "attributes as blocks"); the manifest does not say which,
//   so both spellings pass. Computed-only attributes are not in the config struct: setting one is a
//   mistake Terraform reports too.
// - Oracle (oracle/oci): no cdktf package is published for it, so @pulumi/oci's TypeScript
//   declarations stand in, APPROXIMATELY. Resource `XArgs` interfaces and data source `GetXArgs`
//   interfaces give the arguments (camelCase of Terraform's names: converted back by putting "_"
//   before each capital); the Pulumi type token ('oci:Core/instance:Instance', 'oci:Core/getImages:
//   getImages') gives the Terraform type (oci_core_instance, oci_core_images). Known gaps, all
//   recorded in the fixture's `approximate` note:
//     · Pulumi pluralizes list fields (Terraform's `filter` block is Pulumi's `filters`): for a list
//       field ending in "s" the singular is accepted as an alias, so either spelling passes.
//     · A Terraform name whose camelCase does not round-trip (a digit after "_", e.g. `x_1`) comes
//       back wrong; Pulumi modules whose name is not the Terraform prefix (objectstorage is
//       ObjectStorage → oci_object_storage_*) give wrong type names. None is used by the templates.
//     · `id` is not in Pulumi's Args; Pulumi may give a default to a Terraform-required argument
//       (then it is optional here): `name` above all, which Pulumi auto-names — oci_identity_
//       dynamic_group's `name` is Required in the provider's source, optional here. Nested objects
//       are taken as blocks (the OCI provider is SDKv2, which has no nested attributes).
import {readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {gzipSync} from 'node:zlib'

import ts from 'typescript'

import type {Block, SchemaFile} from '../schema-check.js'

const PACKAGES = {
  aws: 'cdktf-provider-aws-21.22.1',
  google: 'cdktf-provider-google-16.12.1',
  random: 'cdktf-provider-random-12.0.1',
  oci: 'pulumi-oci-4.20.0',
} as const

const OUT_DIR = 'test/fixtures/terraform-schemas'

// ---------------------------------------------------------------------------------------------
// cdktf .jsii manifests

interface JsiiType {
  kind: string
  base?: string
  datatype?: boolean
  docs?: {summary?: string; remarks?: string}
  properties?: JsiiProperty[]
  initializer?: {parameters?: Array<{name: string; type: {fqn?: string}}>}
}
interface JsiiProperty {
  name: string
  optional?: boolean
  docs: {summary?: string; remarks?: string; custom?: Record<string, string>}
  type: unknown
}

const BASES: Record<string, 'resource' | 'data' | 'provider'> = {
  'cdktf.TerraformResource': 'resource',
  'cdktf.TerraformDataSource': 'data',
  'cdktf.TerraformProvider': 'provider',
}

/** "Represents a {@link https://registry.terraform.io/providers/hashicorp/aws/6.25.0/docs/resources/iam_role aws_iam_role}." */
const CLASS_LINK = /\{@link https:\/\/registry\.terraform\.io\/providers\/([^/]+\/[^/]+)\/([^/]+)\/docs\S* ([a-z0-9_]+)\}/
/** "{@link …#assume_role_policy IamRole#assume_role_policy}" */
const PROPERTY_LINK = /#([a-z0-9_]+) [A-Za-z0-9]+#([a-z0-9_]+)\}/

function jsiiBlock(types: Record<string, JsiiType>, assembly: string, fqn: string, path: string[]): Block {
  const struct = types[fqn]
  if (!struct?.datatype) throw new Error(`${fqn} is not a struct in the manifest`)
  if (path.includes(fqn)) throw new Error(`struct cycle at ${path.join(' → ')}`)
  const block: Block = {}
  for (const p of struct.properties ?? []) {
    // The link is in the summary or the remarks; jsii moves it into a custom tag when the provider's
    // description has a line that looks like one ("pattern: …").
    const docs = [p.docs.summary, p.docs.remarks, ...Object.values(p.docs.custom ?? {})].join(' ')
    // Two google properties' docs are cut short by a "*/" inside the provider's own description: their
    // names (`code`) are the same in both spellings.
    const link = PROPERTY_LINK.exec(docs)
    if (!link && snake(p.name) !== p.name) throw new Error(`${fqn}.${p.name}: no Terraform name in its docs`)
    const name = link ? link[1] : p.name
    const nested = [...JSON.stringify(p.type).matchAll(/"fqn":"([^"]+)"/g)].map((m) => m[1]).filter((f) => f.startsWith(`${assembly}.`))
    const isBlock = nested.length > 0 && / block\.$/.test(p.docs.summary ?? '')
    if (nested.length > 1) throw new Error(`${fqn}.${p.name}: ${nested.length} struct types`)
    if (isBlock) {
      ;(block.blocks ??= {})[name] = jsiiBlock(types, assembly, nested[0], [...path, fqn])
    } else if (nested.length === 1) {
      ;(block.objects ??= {})[name] = jsiiBlock(types, assembly, nested[0], [...path, fqn])
    } else {
      ;(block.args ??= []).push(name)
    }
    if (!p.optional) (block.required ??= []).push(name)
  }
  return block
}

function fromJsii(dir: string, source: string): SchemaFile {
  const manifest = JSON.parse(readFileSync(join(dir, 'package', '.jsii'), 'utf8')) as {name: string; version: string; types: Record<string, JsiiType>}
  const file: SchemaFile = {provider: '', version: '', source: `${manifest.name} ${manifest.version} (.jsii manifest)`, providerConfig: {}, resource: {}, data: {}}
  for (const [fqn, type] of Object.entries(manifest.types)) {
    const kind = type.kind === 'class' ? BASES[type.base ?? ''] : undefined
    if (!kind) continue
    const link = CLASS_LINK.exec(type.docs?.summary ?? '')
    if (!link) throw new Error(`${fqn}: no Terraform Registry link in its summary`)
    const [, provider, version, tfName] = link
    if (file.provider && (file.provider !== provider || file.version !== version)) throw new Error(`${fqn}: ${provider} ${version}, not ${file.provider} ${file.version}`)
    file.provider = provider
    file.version = version
    const config = type.initializer?.parameters?.find((p) => p.name === 'config')?.type.fqn
    if (!config) throw new Error(`${fqn}: no config parameter`)
    const block = jsiiBlock(manifest.types, manifest.name, config, [])
    if (kind === 'provider') file.providerConfig = block
    else if (file[kind][tfName]) throw new Error(`${tfName}: two ${kind} classes`)
    else file[kind][tfName] = block
  }
  if (source !== manifest.name) throw new Error(`${dir}: ${manifest.name}, expected ${source}`)
  return file
}

// ---------------------------------------------------------------------------------------------
// @pulumi/oci TypeScript declarations (approximate)

/** camelCase → snake_case: "_" before each capital (Pulumi's names are camelCase of Terraform's). */
export function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/^_/, '')
}

/** Singular spellings Pulumi's pluralization may have come from ("filters" ← "filter", "policies" ← "policy"). */
function singulars(name: string): string[] {
  if (name.endsWith('ies')) return [`${name.slice(0, -3)}y`]
  if (/(s|x|z|ch|sh)es$/.test(name)) return [name.slice(0, -2)]
  if (name.endsWith('s') && !name.endsWith('ss')) return [name.slice(0, -1)]
  return []
}

interface TsField {
  name: string
  optional: boolean
  type: string
}

function interfaces(file: string): Map<string, TsField[]> {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false)
  const out = new Map<string, TsField[]>()
  const visit = (node: ts.Node, prefix: string): void => {
    if (ts.isModuleDeclaration(node) && node.body && ts.isModuleBlock(node.body)) {
      for (const s of node.body.statements) visit(s, `${prefix}${node.name.getText(source)}.`)
    } else if (ts.isInterfaceDeclaration(node)) {
      const fields: TsField[] = []
      for (const m of node.members) {
        if (!ts.isPropertySignature(m) || !m.type) continue
        fields.push({name: m.name.getText(source), optional: Boolean(m.questionToken), type: m.type.getText(source)})
      }
      out.set(`${prefix}${node.name.text}`, fields)
    }
  }
  source.statements.forEach((s) => visit(s, ''))
  return out
}

function pulumiBlock(fields: TsField[], nested: Map<string, TsField[]>, where: string, path: string[]): Block {
  const block: Block = {}
  for (const f of fields) {
    const name = snake(f.name)
    const ref = /inputs\.(\w+)\.(\w+)/.exec(f.type)
    if (ref) {
      const key = `${ref[1]}.${ref[2]}`
      const inner = nested.get(key)
      if (!inner) throw new Error(`${where}.${f.name}: no interface ${key}`)
      if (path.includes(key)) throw new Error(`cycle at ${[...path, key].join(' → ')}`)
      ;(block.blocks ??= {})[name] = pulumiBlock(inner, nested, `${where}.${f.name}`, [...path, key])
    } else {
      ;(block.args ??= []).push(name)
    }
    if (f.type.includes('[]')) for (const s of singulars(name)) (block.aliases ??= {})[s] = name
    if (!f.optional) (block.required ??= []).push(name)
  }
  return block
}

function fromPulumi(dir: string): SchemaFile {
  const root = join(dir, 'package')
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {name: string; version: string}
  const nested = interfaces(join(root, 'types', 'input.d.ts'))
  const file: SchemaFile = {
    provider: 'oracle/oci',
    version: `≈ ${pkg.name} ${pkg.version}`,
    source: `${pkg.name} ${pkg.version} (TypeScript declarations)`,
    approximate:
      'Pulumi names converted back to Terraform: list fields ending in "s" also accept the singular; ' +
      'no `id`; Pulumi defaults and auto-naming may make a Terraform-required argument optional (`name` of ' +
      'oci_identity_dynamic_group); modules whose Pulumi name ' +
      'differs from the Terraform prefix (ObjectStorage vs objectstorage) get wrong type names.',
    providerConfig: pulumiBlock(interfaces(join(root, 'provider.d.ts')).get('ProviderArgs') ?? [], nested, 'ProviderArgs', []),
    resource: {},
    data: {},
  }
  const dirs = readdirSync(root, {withFileTypes: true}).filter((d) => d.isDirectory() && !['types', 'config', 'node_modules'].includes(d.name))
  for (const d of dirs) {
    for (const js of readdirSync(join(root, d.name)).filter((n) => n.endsWith('.js') && n !== 'index.js')) {
      const code = readFileSync(join(root, d.name, js), 'utf8')
      // Resources: `static __pulumiType = 'oci:Core/instance:Instance'` (compiled: X.__pulumiType = '…').
      // Data sources: `invoke("oci:Core/getImages:getImages", …)`. Each file has one or both
      // (getX and getXOutput share the token).
      // (Other tokens in the file, 'oci:oci/…' aliases and import examples, are old or foreign names.)
      const tokens = new Set([
        ...[...code.matchAll(/__pulumiType = '(oci:\w+\/\w+:\w+)'/g)].map((m) => m[1]),
        ...[...code.matchAll(/invoke\("(oci:\w+\/\w+:\w+)"/g)].map((m) => m[1]),
      ])
      const decls = interfaces(join(root, d.name, js.replace(/\.js$/, '.d.ts')))
      for (const token of tokens) {
        const [, module, , member] = /^oci:(\w+)\/(\w+):(\w+)$/.exec(token)!
        const isData = member.startsWith('get')
        const base = isData ? member.slice(3) : member
        const tfName = `oci_${snake(module[0].toLowerCase() + module.slice(1))}_${snake(base[0].toLowerCase() + base.slice(1))}`
        const argsName = isData ? `${member[0].toUpperCase()}${member.slice(1)}Args` : `${member}Args`
        let fields = decls.get(argsName)
        if (!fields) {
          // A data source without arguments: `getX(opts?: pulumi.InvokeOptions)`.
          const dts = readFileSync(join(root, d.name, js.replace(/\.js$/, '.d.ts')), 'utf8')
          if (!isData || !dts.includes(`function ${member}(opts?: pulumi.InvokeOptions)`)) throw new Error(`${d.name}/${js}: ${token} has no ${argsName}`)
          fields = []
        }
        const block = pulumiBlock(fields, nested, argsName, [])
        const kind = isData ? 'data' : 'resource'
        if (file[kind][tfName]) throw new Error(`${tfName}: two ${kind} types`)
        file[kind][tfName] = block
      }
    }
  }
  return file
}

// ---------------------------------------------------------------------------------------------

/** JSON with object keys sorted (arrays too: argument order carries no meaning). */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return [...value].sort()
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) out[k] = canonical((value as Record<string, unknown>)[k])
    return out
  }
  return value
}

function write(name: string, file: SchemaFile): void {
  const json = JSON.stringify(canonical(file))
  const gz = gzipSync(json, {level: 9})
  writeFileSync(join(OUT_DIR, `${name}.json.gz`), gz)
  console.log(`${name}: ${file.provider} ${file.version}: ${Object.keys(file.resource).length} resources, ` +
    `${Object.keys(file.data).length} data sources; ${(json.length / 1024).toFixed(0)} kB JSON, ${(gz.length / 1024).toFixed(0)} kB gzipped`)
}

function main(): void {
  const scratch = process.argv[2]
  if (!scratch) throw new Error('usage: npx tsx test/templates/schemas/extract.ts <dir with the unpacked packages>')
  write('random', fromJsii(join(scratch, PACKAGES.random), '@cdktf/provider-random'))
  write('oci', fromPulumi(join(scratch, PACKAGES.oci)))
  write('google', fromJsii(join(scratch, PACKAGES.google), '@cdktf/provider-google'))
  write('aws', fromJsii(join(scratch, PACKAGES.aws), '@cdktf/provider-aws'))
}

main()
