// cluster.yaml (cluster/schema.ts parseClusterYaml: citc writes it, people may edit it) and create's
// --config file (tasks/create/config-file.ts loadClusterConfig) under any input: a record or a located
// InvalidInputError (exit 3), never a crash or a hang; and the record citc writes reads back as written.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'
import {stringify} from 'yaml'

import {parseClusterYaml} from '../../src/lib/cluster/schema.js'
import {loadClusterConfig} from '../../src/lib/tasks/create/config-file.js'
import {FP, ORACLE_CLUSTER_YAML} from '../fixtures/cluster-yaml.js'
import {anyText, mutated, parsesOrLocates, RUNS, yamlDocument} from './fuzz.js'

const FILE = 'cluster.yaml'
const VALID = [ORACLE_CLUSTER_YAML]
const WORDS = ['name', 'provider', 'createdAt', 'origin', 'mgmt', 'host', 'user', 'keyPath', 'hostKeyFingerprint', 'shape', 'ad', 'port', 'settings', 'suspendTime', 'region', 'terraform', 'outputs', 'slurm', 'oracle', 'local', 'aws', 'created', FP]

const CONFIGS = [
  'provider: aws\nname: demo\nregion: eu-west-2\nmgmt-shape: t3a.medium\nlimits: limits.yaml\nsuspend-time: 300\nmonitoring: true\n',
  'provider: local\nname: lab\ngpu-nodes: none\n',
]
const CONFIG_WORDS = ['provider', 'name', 'region', 'zone', 'mgmt-shape', 'image-os', 'ssh-cidr', 'limits', 'suspend-time', 'monitoring', 'gpu-nodes', 'aws', 'local', 'google', 'oracle', 'demo']

describe('cluster.yaml: any input gives a record or a located error', () => {
  const parse = (text: string) => parseClusterYaml(text, FILE)

  it('the valid seed parses', () => {
    expect(parse(VALID[0]).name).toBe('cheerful-macaw')
  })

  it('any text, any YAML document of its words, the valid file damaged', () => {
    fc.assert(fc.property(fc.oneof(anyText, yamlDocument(WORDS), mutated(VALID)), (text) => void parsesOrLocates(text, FILE, parse)), {
      numRuns: RUNS * 2,
      examples: [['a: *x\n'], [VALID[0].replace('user: opc', 'user: "op\\ud800c"')], ['a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n']],
    })
  })

  it('the record citc writes (the yaml library, lineWidth 0) reads back as the same record', () => {
    fc.assert(
      fc.property(fc.oneof(mutated(VALID), fc.constant(VALID[0])), (text) => {
        // Not tags: "!!omap [a, b]" under terraform.outputs (free-form) reads as a Map and is written back
        // as a plain map — a hand edit citc does not keep as written (reported with #23, not fixed).
        fc.pre(!text.includes('!!'))
        let record
        try {
          record = parse(text)
        } catch {
          return
        }
        expect(parse(stringify(record, {lineWidth: 0}))).toEqual(record)
      }),
      {numRuns: RUNS},
    )
  })
})

describe('create --config: any file gives settings or a located error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'citc-config-property-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))
  const file = join(dir, 'cluster.yaml')
  const load = (text: string) => {
    writeFileSync(file, text)
    return loadClusterConfig(file)
  }

  it('the valid seeds load', () => {
    for (const text of CONFIGS) expect(() => load(text)).not.toThrow()
  })

  it('any text, any YAML document of its words, a valid file damaged', () => {
    fc.assert(fc.property(fc.oneof(anyText, yamlDocument(CONFIG_WORDS), mutated(CONFIGS)), (text) => void parsesOrLocates(text, file, load)), {numRuns: RUNS})
  })
})
