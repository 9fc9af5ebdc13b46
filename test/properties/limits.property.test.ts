// limits.yaml (config/limits.ts parseLimits) under any input: a value or a located InvalidInputError,
// never a crash or a hang; no write to disk while parsing; and the static: section citc writes itself
// (config/limits-static-edit.ts) reads back as what was written.
import fc from 'fast-check'
import {describe, expect, it, vi} from 'vitest'

import {parseLimits, type ParseLimitsOptions} from '../../src/lib/config/limits.js'
import {withStaticNode} from '../../src/lib/config/limits-static-edit.js'
import {InvalidInputError} from '../../src/lib/errors.js'
import type {LocalGpu} from '../../src/lib/providers/local/gpus.js'
import {localCatalogue} from '../../src/lib/providers/local/shapes.js'
import type {Shape, ShapeCatalogue} from '../../src/lib/shapes/types.js'
import type {StaticNodeSpec} from '../../src/lib/slurm/limits-types.js'
import {anyText, fsWritesDuring, HANG_MS, mutated, parsesOrLocates, RUNS, yamlDocument} from './fuzz.js'

const shape = (name: string): Shape => ({name, sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'})
const fixed = (provider: 'aws' | 'oracle', names: string[]): ShapeCatalogue => ({provider, source: 'test', get: (n) => (names.includes(n) ? shape(n) : undefined), names: () => names})
const AWS = ['c5.xlarge', 'g4dn.xlarge', 't3a.medium']
const ORACLE = ['VM.Standard2.1', 'BM.GPU2.2']
const gpu = (type: string, minor: number): LocalGpu => ({modelName: `NVIDIA ${type.toUpperCase()}`, type, minor, device: `/dev/nvidia${minor}`, bus: `0000:${minor}:00.0`})
const LOCAL = localCatalogue({cpus: 16, cores: 8, memoryMiB: 64 * 1024, gpus: [gpu('h100', 0), gpu('h100', 1), gpu('l4', 2)]})

const OPTIONS: Record<'aws' | 'oracle' | 'local', ParseLimitsOptions> = {
  aws: {file: 'limits.yaml', provider: 'aws', catalogue: fixed('aws', AWS), suggest: () => ['c5.xlarge'], clusterId: 'demo'},
  oracle: {file: 'limits.yaml', provider: 'oracle', catalogue: fixed('oracle', ORACLE), suggest: () => [], mgmt: {shape: 'VM.Standard2.1', ad: 1}},
  local: {file: 'limits.yaml', provider: 'local', catalogue: LOCAL, suggest: () => [], clusterId: 'demo'},
}
const provider = fc.constantFrom('aws', 'oracle', 'local') as fc.Arbitrary<keyof typeof OPTIONS>

const lines = (...l: string[]) => l.join('\n') + '\n'
const HOST_KEY = 'SHA256:' + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ+/01234'
/** Valid files of every form (the examples of test/lib/config): the seeds of the damaged ones. */
const VALID = [
  lines('t3a.medium: 3', 'c5.xlarge: 1'),
  lines('VM.Standard2.1: {1: 1, 2: 1, 3: 2}', 'BM.GPU2.2:', '  "2": 1'),
  lines('local.small: 2', 'local.h100x1: 1', 'local.l4x1: 1'),
  lines(
    'shapes:',
    '  c5.xlarge: 4                    # short form as in CitC',
    '  g4dn.xlarge:',
    '    count: 2',
    '    partitions: [gpu]',
    '    weight: 50',
    '    features: [fastdisk]',
    '    gpu: {count: 1, model: t4}',
    'partitions:',
    '  compute: {default: true, maxTime: "1-00:00:00"}',
    '  gpu: {maxTime: "12:00:00", options: {OverSubscribe: "NO"}}',
    'slurm:',
    '  MaxJobCount: 20000',
    '  SchedulerParameters: bf_continue,bf_max_job_test=500',
  ),
  lines(
    'shapes:',
    '  c5.xlarge: 2',
    'static:',
    '  ws1:',
    '    address: 10.250.99.2',
    '    controller: 10.250.99.1',
    `    ssh: {user: root, port: 22, hostKey: "${HOST_KEY}"}`,
    '    hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800}',
    '    slurmVersion: 22.05.8',
    '    shared: none',
    '    partitions: [compute]',
    '    features: [bigmem]',
    '    weight: 3',
  ),
]
const WORDS = [
  ...['shapes', 'partitions', 'slurm', 'static', 'count', 'weight', 'features', 'gpu', 'model', 'default', 'maxTime', 'options'],
  ...['address', 'controller', 'ssh', 'hardware', 'user', 'port', 'hostKey', 'key', 'sockets', 'coresPerSocket', 'threadsPerCore', 'realMemory', 'shared', 'slurmVersion'],
  ...[...AWS, ...ORACLE, 'local.small', 'local.h100x1', 'compute', 'MaxJobCount', 'PrologSlurmctld', 'NodeName', 'ws1', '1', '2'],
]

const parseWith = (p: keyof typeof OPTIONS) => (text: string) => parseLimits(text, OPTIONS[p])

describe('limits.yaml: any input gives limits or a located error', () => {
  it('the valid seeds parse (so the damaged ones start from a real file)', () => {
    for (const text of VALID) {
      const p = text.includes('VM.') ? 'oracle' : text.includes('local.') ? 'local' : 'aws'
      expect(() => parseLimits(text, OPTIONS[p])).not.toThrow()
    }
  })

  it('any text', () => {
    fc.assert(fc.property(anyText, provider, (text, p) => void parsesOrLocates(text, 'limits.yaml', parseWith(p))), {numRuns: RUNS})
  })

  it('any YAML document made of the format\'s words', () => {
    fc.assert(fc.property(yamlDocument(WORDS), provider, (text, p) => void parsesOrLocates(text, 'limits.yaml', parseWith(p))), {numRuns: RUNS})
  })

  it('a valid file with lines deleted, duplicated or swapped, or characters changed', () => {
    fc.assert(fc.property(mutated(VALID), provider, (text, p) => void parsesOrLocates(text, 'limits.yaml', parseWith(p))), {numRuns: RUNS})
  })
})

describe('limits.yaml: parsing writes nothing', () => {
  it('neither for a file it refuses nor for one it accepts', () => {
    fc.assert(
      fc.property(fc.oneof(mutated(VALID), yamlDocument(WORDS)), provider, (text, p) => {
        expect(fsWritesDuring(() => parseLimits(text, OPTIONS[p]))).toEqual([])
      }),
      {numRuns: Math.ceil(RUNS / 3)},
    )
  })
})

describe('limits.yaml: the static: entries citc writes read back as written', () => {
  const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,12}$/).filter((n) => !n.startsWith('demo-'))
  const octet = fc.integer({min: 1, max: 254})
  const spec: fc.Arbitrary<Omit<StaticNodeSpec, 'where'>> = fc.record(
    {
      name,
      address: fc.tuple(octet, octet).map(([a, b]) => `10.250.${a}.${b}`),
      controller: fc.constant('10.250.99.1'),
      ssh: fc.record({user: fc.constantFrom('root', 'citc', 'ops-1'), port: fc.integer({min: 1, max: 65535}), hostKey: fc.constant(HOST_KEY)}),
      hardware: fc.record({
        sockets: fc.integer({min: 1, max: 4}),
        coresPerSocket: fc.integer({min: 1, max: 64}),
        threadsPerCore: fc.integer({min: 1, max: 2}),
        realMemory: fc.integer({min: 1, max: 1_000_000}),
      }),
      slurmVersion: fc.constantFrom('22.05.8', '23.02.1'),
      shared: fc.constantFrom('nfs', 'none'),
      features: fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9_]{0,8}$/).filter((f) => f !== 'static'), {minLength: 1, maxLength: 3}),
      weight: fc.integer({min: 1, max: 1000}),
    },
    {requiredKeys: ['name', 'address', 'controller', 'ssh', 'hardware', 'shared']},
  )
  const base = fc.constantFrom(lines('c5.xlarge: 2'), lines('shapes:', '  c5.xlarge: 1', '# joined machines below'), '')

  it('withStaticNode(text, spec) parses to the same spec, the rest of the file unchanged', () => {
    fc.assert(
      fc.property(base, fc.uniqueArray(spec, {comparator: (a, b) => a.name === b.name || a.address === b.address, minLength: 1, maxLength: 3}), (text, specs) => {
        const written = specs.reduce((t, s) => withStaticNode(t, s), text)
        const limits = parseLimits(written, OPTIONS.aws)
        expect(limits.staticNodes.map(({where: _where, ...s}) => s)).toEqual(specs.map((s) => expect.objectContaining(s)))
        expect(limits.entries.map((e) => [e.shape, e.count])).toEqual(parseLimits(text, OPTIONS.aws).entries.map((e) => [e.shape, e.count]))
      }),
      {numRuns: Math.ceil(RUNS / 3)},
    )
  })
})

describe('the property harness itself', () => {
  it('sees a write made through the module namespaces (what `import {writeFileSync} from \'node:fs\'` reads at each call)', async () => {
    const fsNs = await import('node:fs')
    const promisesNs = await import('node:fs/promises')
    expect(fsWritesDuring(() => fsNs.writeFileSync('/nonexistent/x', 'x'))).toEqual(['writeFileSync("/nonexistent/x")'])
    expect(fsWritesDuring(() => void promisesNs.mkdir('/nonexistent/y'))).toEqual(['promises.mkdir("/nonexistent/y")'])
    expect(fsWritesDuring(() => fsNs.openSync('/nonexistent/z', 'w'))).toEqual(['openSync("/nonexistent/z")'])
  })

  it('fails on a call spending more CPU than HANG_MS', () => {
    const cpu = vi.spyOn(process, 'cpuUsage').mockReturnValueOnce({user: 0, system: 0}).mockReturnValueOnce({user: (HANG_MS + 1) * 1000, system: 0})
    try {
      expect(() => parsesOrLocates('x', 'limits.yaml', () => null)).toThrow(/spent \d+ ms of CPU/)
    } finally {
      cpu.mockRestore()
    }
  })

  it('does not fail on a call that only waited for a core (wall time, no CPU)', () => {
    const now = vi.spyOn(performance, 'now').mockReturnValueOnce(0).mockReturnValueOnce(HANG_MS * 10)
    try {
      expect(parsesOrLocates('x', 'limits.yaml', () => null)).toBeNull()
    } finally {
      now.mockRestore()
    }
  })

  it('fails on an error that is not an InvalidInputError, or one without a place', () => {
    expect(() => parsesOrLocates('x', 'limits.yaml', (t) => (JSON.parse('null') as {length: number}).length + t.length)).toThrow(TypeError)
    expect(() => parsesOrLocates('x', 'limits.yaml', () => {
      throw new InvalidInputError([{where: '--file', message: 'bad'}])
    })).toThrow(/not located/)
    expect(() => parsesOrLocates('x', 'limits.yaml', () => {
      throw new InvalidInputError([{where: 'limits.yaml:9:1', message: 'bad'}])
    })).toThrow(/outside the text/)
  })
})
