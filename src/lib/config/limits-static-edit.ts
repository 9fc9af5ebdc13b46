// Editing the `static:` section of a cluster's stored limits.yaml (citc node add/remove, finish keeping
// joined machines). Pure: text in, text out. Comments and every other section are kept; a file in
// CitC's short form (`shape: count` at the top) becomes the extended form (its shapes under `shapes:`)
// when a static section is added, since `static:` makes a file extended (config/limits.ts).
import {Document, isCollection, isMap, isScalar, parseDocument, type Pair, YAMLMap, type Node as YamlNode} from 'yaml'

import {CitcError} from '../errors.js'
import type {StaticNodeSpec} from '../slurm/limits-types.js'
import {keyText} from './yaml.js'

/** No folding of long lines: an entry's ssh: {…} stays on one line, a user's long value as written. */
const TO_STRING = {lineWidth: 0, flowCollectionPadding: false}

/** The top-level keys that make a file the extended form (as config/limits.ts's EXTENDED_KEYS). */
const EXTENDED_KEYS = new Set(['shapes', 'partitions', 'slurm', 'static'])

/** A joined machine as citc writes it under static:, keys in the contract's order, optional ones when set. */
export function staticEntry(spec: Omit<StaticNodeSpec, 'name' | 'where'>): Record<string, unknown> {
  return {
    address: spec.address,
    controller: spec.controller,
    ssh: {user: spec.ssh.user, port: spec.ssh.port, hostKey: spec.ssh.hostKey, ...(spec.ssh.key === undefined ? {} : {key: spec.ssh.key})},
    hardware: {sockets: spec.hardware.sockets, coresPerSocket: spec.hardware.coresPerSocket, threadsPerCore: spec.hardware.threadsPerCore, realMemory: spec.hardware.realMemory},
    ...(spec.slurmVersion === undefined ? {} : {slurmVersion: spec.slurmVersion}),
    shared: spec.shared,
    ...(spec.partitions === undefined ? {} : {partitions: spec.partitions}),
    ...(spec.features === undefined ? {} : {features: spec.features}),
    ...(spec.weight === undefined ? {} : {weight: spec.weight}),
  }
}

/** The text with the machine `spec.name` added under static: (or its entry replaced, in place). */
export function withStaticNode(text: string, spec: Omit<StaticNodeSpec, 'where'>): string {
  const doc = load(text)
  const root = extendedRoot(doc)
  const found = root.get('static', true) as YamlNode | undefined
  const section = isMap(found) ? found : new YAMLMap()
  if (section !== found) root.set('static', section)
  const entry = doc.createNode(staticEntry(spec)) as YAMLMap
  // One line each for ssh, hardware and the lists, as the contract shows them.
  for (const key of ['ssh', 'hardware', 'partitions', 'features']) {
    const n = entry.get(key, true) as YamlNode | undefined
    if (isCollection(n)) n.flow = true
  }
  const existing = findPair(section, spec.name)
  if (existing) existing.value = entry
  else section.set(spec.name, entry)
  return doc.toString(TO_STRING)
}

/** The text without the machine `name` (and without `static:` once it is empty); the text as it is when absent. */
export function withoutStaticNode(text: string, name: string): string {
  const doc = load(text)
  const root = doc.contents
  if (!isMap(root)) return text
  const section = root.get('static', true) as YamlNode | undefined
  if (!isMap(section) || !findPair(section, name)) return text
  section.items = section.items.filter((p) => keyText(p.key) !== name)
  if (section.items.length === 0) root.items = root.items.filter((p) => keyText(p.key) !== 'static')
  return doc.toString(TO_STRING)
}

/** The names under static:, in the order written ([] without a static section). */
export function staticNamesOf(text: string): string[] {
  const section = staticNode(load(text))
  return isMap(section) ? section.items.map((p) => keyText(p.key) ?? '') : []
}

/**
 * The static: section of a limits text as YAML text of its own (`static:\n  ws1: …`), or undefined
 * without one (absent or empty).
 */
export function staticSectionOf(text: string): string | undefined {
  const section = staticNode(load(text))
  if (!isMap(section) || section.items.length === 0) return undefined
  const out = new Document(new YAMLMap())
  ;(out.contents as YAMLMap).set('static', section.clone())
  return out.toString(TO_STRING)
}

/**
 * `text` with its static: section replaced by `section` (staticSectionOf's output; undefined: none).
 * The rest of `text` is kept as written.
 */
export function withStaticSection(text: string, section: string | undefined): string {
  const doc = load(text)
  const incoming = section === undefined ? undefined : staticNode(load(section))
  if (!isMap(incoming) || incoming.items.length === 0) {
    const root = doc.contents
    if (!isMap(root) || !findPair(root, 'static')) return text
    root.items = root.items.filter((p) => keyText(p.key) !== 'static')
    return doc.toString(TO_STRING)
  }
  const root = extendedRoot(doc)
  const existing = findPair(root, 'static')
  if (existing) existing.value = incoming.clone()
  else root.set('static', incoming.clone())
  return doc.toString(TO_STRING)
}

function load(text: string): Document.Parsed {
  const doc = parseDocument(text, {uniqueKeys: false})
  if (doc.errors.length > 0) {
    const e = doc.errors[0]
    throw new CitcError('invalidInput', `the cluster's limits.yaml cannot be read: ${e.message.split('\n')[0]}`, {
      hint: "fix the YAML of the cluster's stored limits.yaml (in its directory under citc's data directory), or run citc finish with a good one",
    })
  }
  return doc
}

function staticNode(doc: Document): YamlNode | undefined {
  return isMap(doc.contents) ? (doc.contents.get('static', true) as YamlNode | undefined) : undefined
}

function findPair(map: YAMLMap, key: string): Pair | undefined {
  return map.items.find((p) => keyText(p.key) === key) as Pair | undefined
}

/** The document's root map in the extended form: an empty file gets one, CitC's short form is moved under shapes:. */
function extendedRoot(doc: Document): YAMLMap {
  const contents = doc.contents
  if (contents === null || (isScalar(contents) && contents.value === null)) {
    const root = new YAMLMap()
    doc.contents = root
    return root
  }
  if (!isMap(contents)) {
    throw new CitcError('invalidInput', "the cluster's limits.yaml is not a map of shapes or sections", {hint: 'run citc finish with a valid limits.yaml first'})
  }
  const extended = contents.items.some((p) => EXTENDED_KEYS.has(keyText(p.key) ?? ''))
  if (extended || contents.items.length === 0) return contents
  const root = new YAMLMap()
  // The comment above the first shape stays at the top of the file.
  root.commentBefore = contents.commentBefore
  contents.commentBefore = undefined
  contents.flow = false
  root.set('shapes', contents)
  doc.contents = root
  return root
}
