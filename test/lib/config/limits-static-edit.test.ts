// Editing a stored limits.yaml's static: section: comments and other sections kept, CitC's short form
// converted, a stable key order — and every result read back by the real parser (parseLimits).
import {describe, expect, it} from 'vitest'

import {parseLimits} from '../../../src/lib/config/limits.js'
import {staticNamesOf, staticSectionOf, withStaticNode, withStaticSection, withoutStaticNode} from '../../../src/lib/config/limits-static-edit.js'
import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'
import type {StaticNodeSpec} from '../../../src/lib/slurm/limits-types.js'

const shape = (name: string): Shape => ({name, sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'})
const NAMES = ['c5.xlarge', 't3a.medium']
const catalogue: ShapeCatalogue = {provider: 'aws', source: 'test', get: (n) => (NAMES.includes(n) ? shape(n) : undefined), names: () => NAMES}
const parse = (text: string) => parseLimits(text, {file: 'limits.yaml', provider: 'aws', catalogue, suggest: () => [], clusterId: 'demo'})

const KEY = 'SHA256:' + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ+/01234'
const WS1: Omit<StaticNodeSpec, 'where'> = {
  name: 'ws1',
  address: '10.250.99.2',
  controller: '10.250.99.1',
  ssh: {user: 'root', port: 22, hostKey: KEY},
  hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800},
  slurmVersion: '22.05.8',
  shared: 'nfs',
  partitions: ['compute'],
  features: ['bigmem'],
  weight: 1,
}
const WS2 = {...WS1, name: 'ws2', address: 'ws2.lab.example', slurmVersion: undefined, partitions: undefined, features: undefined, weight: undefined}
const strip = ({where: _where, ...rest}: StaticNodeSpec) => rest

const SHORT = "# CitC's own format\nt3a.medium: 4 # small ones\n# big ones\nc5.xlarge: 8\n"
const EXTENDED = 'shapes:\n  c5.xlarge: 8 # keep me\npartitions:\n  compute: {default: true, maxTime: "1-00:00:00"}\nslurm:\n  MaxJobCount: 20000\n'

describe('withStaticNode', () => {
  it('converts CitC short form to shapes:, keeps comments, writes the contract keys in order', () => {
    const text = withStaticNode(SHORT, WS1)
    expect(text).toBe(
      [
        'shapes:',
        "  # CitC's own format",
        '  t3a.medium: 4 # small ones',
        '  # big ones',
        '  c5.xlarge: 8',
        'static:',
        '  ws1:',
        '    address: 10.250.99.2',
        '    controller: 10.250.99.1',
        `    ssh: {user: root, port: 22, hostKey: ${KEY}}`,
        '    hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800}',
        '    slurmVersion: 22.05.8',
        '    shared: nfs',
        '    partitions: [compute]',
        '    features: [bigmem]',
        '    weight: 1',
        '',
      ].join('\n'),
    )
    const l = parse(text)
    expect(l.entries.map((e) => [e.shape, e.count])).toEqual([
      ['t3a.medium', 4],
      ['c5.xlarge', 8],
    ])
    expect(l.staticNodes.map(strip)).toEqual([WS1])
  })

  it('adds to an extended file without touching the rest, replaces an entry in place, reads back', () => {
    const one = withStaticNode(EXTENDED, WS1)
    expect(one.startsWith(EXTENDED)).toBe(true)
    const two = withStaticNode(one, WS2)
    const replaced = withStaticNode(two, {...WS1, address: '10.250.99.9'})
    expect(staticNamesOf(replaced)).toEqual(['ws1', 'ws2'])
    const l = parse(replaced)
    expect(l.staticNodes.map((n) => [n.name, n.address])).toEqual([
      ['ws1', '10.250.99.9'],
      ['ws2', 'ws2.lab.example'],
    ])
    expect(l.staticNodes[1]).not.toHaveProperty('weight')
    expect(l.settings).toEqual({MaxJobCount: '20000'})
    // An empty or comment-only file (a cluster made without limits) gets a static: of its own.
    expect(withStaticNode('', WS2).startsWith('static:\n  ws2:\n')).toBe(true)
    const commented = withStaticNode('# nothing yet\n', WS2)
    expect(commented.startsWith('# nothing yet\n')).toBe(true)
    expect(parse(commented).staticNodes).toHaveLength(1)
  })

  it('is deterministic: the same spec gives the same text', () => {
    expect(withStaticNode(withStaticNode(EXTENDED, WS1), WS1)).toBe(withStaticNode(EXTENDED, WS1))
  })
})

describe('withoutStaticNode', () => {
  it('removes one machine, and static: with the last one; absent names change nothing', () => {
    const two = withStaticNode(withStaticNode(EXTENDED, WS1), WS2)
    expect(staticNamesOf(withoutStaticNode(two, 'ws1'))).toEqual(['ws2'])
    expect(withoutStaticNode(withoutStaticNode(two, 'ws1'), 'ws2')).toBe(EXTENDED)
    expect(withoutStaticNode(EXTENDED, 'ws1')).toBe(EXTENDED)
    expect(withoutStaticNode(two, 'nope')).toBe(two)
  })
})

describe('staticSectionOf and withStaticSection', () => {
  it('moves a static section from one file to another, and takes it away', () => {
    const stored = withStaticNode(withStaticNode(SHORT, WS1), WS2)
    const section = staticSectionOf(stored)!
    expect(section.startsWith('static:\n  ws1:\n')).toBe(true)
    const merged = withStaticSection(EXTENDED, section)
    expect(merged.startsWith(EXTENDED)).toBe(true)
    expect(parse(merged).staticNodes.map(strip)).toEqual(parse(stored).staticNodes.map(strip))
    // Into a short-form file: converted.
    expect(parse(withStaticSection('c5.xlarge: 1\n', section)).entries).toHaveLength(1)
    expect(withStaticSection(merged, undefined)).toBe(EXTENDED)
    expect(withStaticSection(EXTENDED, undefined)).toBe(EXTENDED)
    expect(staticSectionOf(EXTENDED)).toBeUndefined()
    expect(staticSectionOf('static:\n')).toBeUndefined()
  })
})
