import {describe, expect, it} from 'vitest'

import {parseLimits, slurmTime, type ParseLimitsOptions} from '../../../src/lib/config/limits.js'
import type {Limits} from '../../../src/lib/slurm/limits-types.js'
import {InvalidInputError, type InputProblem} from '../../../src/lib/errors.js'
import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'
import type {Provider} from '../../../src/lib/providers/registry.js'

// A small fake catalogue (pure data): these tests are about parsing, not about shape data.
const shape = (name: string): Shape => ({name, sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'})
const NAMES: Record<Provider, string[]> = {
  aws: ['c5.xlarge', 'c5.2xlarge', 'g4dn.xlarge', 't3a.medium'],
  google: ['n1-standard-1', 'n1-standard-2'],
  oracle: ['VM.Standard2.1', 'VM.Standard2.2', 'BM.GPU2.2'],
  local: ['small', 'large'],
}
const catalogue = (provider: Provider): ShapeCatalogue => ({
  provider,
  source: 'test',
  get: (n) => (NAMES[provider].includes(n) ? shape(n) : undefined),
  names: () => NAMES[provider],
})
// A fake suggester: names sharing the first three characters, at most two.
const suggestFor = (provider: Provider) => (name: string) => NAMES[provider].filter((n) => n.slice(0, 3) === name.slice(0, 3)).slice(0, 2)

const opts = (provider: Provider = 'aws', more: Partial<ParseLimitsOptions> = {}): ParseLimitsOptions => ({
  file: 'limits.yaml',
  provider,
  catalogue: catalogue(provider),
  suggest: suggestFor(provider),
  ...more,
})

/** Fixtures as lines, so that line N of the file is the N-th argument. */
const lines = (...l: string[]) => l.join('\n') + '\n'

const parse = (text: string, provider: Provider = 'aws', more: Partial<ParseLimitsOptions> = {}): Limits => parseLimits(text, opts(provider, more))

function problems(text: string, provider: Provider = 'aws', more: Partial<ParseLimitsOptions> = {}): InputProblem[] {
  try {
    parse(text, provider, more)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).exitCode).toBe(3)
    // The path is asserted as part of the message text below: "path: message".
    return (error as InvalidInputError).problems.map(({where, path, message}) => ({where, message: path ? `${path}: ${message}` : message}))
  }
  throw new Error('expected an InvalidInputError')
}

/** The one problem of a file: exact where, the message matched. */
function oneProblem(text: string, provider: Provider = 'aws'): InputProblem {
  const p = problems(text, provider)
  expect(p).toHaveLength(1)
  return p[0]
}

describe("CitC's verbatim form", () => {
  it('parses shape: count (aws, google, local) in the order written', () => {
    expect(parse(lines('t3a.medium: 3', 'c5.xlarge: 1'))).toEqual({
      entries: [
        {shape: 't3a.medium', count: 3, where: 'limits.yaml:1:1'},
        {shape: 'c5.xlarge', count: 1, where: 'limits.yaml:2:1'},
      ],
      staticNodes: [],
      partitions: [],
      settings: {},
    })
    expect(parse(lines('n1-standard-1: 3'), 'google').entries).toEqual([{shape: 'n1-standard-1', count: 3, where: 'limits.yaml:1:1'}])
    expect(parse(lines('# local nodes', 'large: 2', 'small: 4'), 'local').entries).toEqual([
      {shape: 'large', count: 2, where: 'limits.yaml:2:1'},
      {shape: 'small', count: 4, where: 'limits.yaml:3:1'},
    ])
  })

  it('parses oracle shape: {AD: count}, AD keys as YAML ints or digit strings, one entry per AD', () => {
    const l = parse(lines('VM.Standard2.1: {1: 1, 2: 1, 3: 2}', 'BM.GPU2.2:', '  "2": 1'), 'oracle')
    expect(l.entries).toEqual([
      {shape: 'VM.Standard2.1', ad: 1, count: 1, where: 'limits.yaml:1:1'},
      {shape: 'VM.Standard2.1', ad: 2, count: 1, where: 'limits.yaml:1:1'},
      {shape: 'VM.Standard2.1', ad: 3, count: 2, where: 'limits.yaml:1:1'},
      {shape: 'BM.GPU2.2', ad: 2, count: 1, where: 'limits.yaml:2:1'},
    ])
  })

  it('keeps the order of ADs as written', () => {
    expect(parse(lines('VM.Standard2.1: {3: 1, 1: 2}'), 'oracle').entries.map((e) => e.ad)).toEqual([3, 1])
  })

  it('accepts an empty file, {} and a comment-only file as no nodes', () => {
    const empty = {entries: [], staticNodes: [], partitions: [], settings: {}}
    expect(parse('')).toEqual(empty)
    expect(parse('{}\n')).toEqual(empty)
    expect(parse(lines('# no nodes yet', '# c5.xlarge: 4'))).toEqual(empty)
    expect(parse('', 'oracle')).toEqual(empty)
  })

  it('is deterministic', () => {
    const text = lines('c5.xlarge: 4', 'g4dn.xlarge: 1')
    expect(JSON.stringify(parse(text))).toBe(JSON.stringify(parse(text)))
  })
})

describe('the extended form', () => {
  const text = lines(
    'shapes:', //                                                 1
    '  c5.xlarge: 4                    # short form as in CitC', // 2
    '  g4dn.xlarge:', //                                          3
    '    count: 2', //                                            4
    '    partitions: [gpu]', //                                   5
    '    weight: 50', //                                          6
    '    features: [fastdisk]', //                                7
    '    gpu: {count: 1, model: t4}', //                          8
    'partitions:', //                                             9
    '  compute: {default: true, maxTime: "1-00:00:00"}', //       10
    '  gpu: {maxTime: "12:00:00", options: {OverSubscribe: "NO"}}', // 11
    'slurm:', //                                                  12
    '  MaxJobCount: 20000', //                                    13
  )

  it('parses shapes, partitions and slurm settings', () => {
    expect(parse(text)).toEqual({
      staticNodes: [],
      entries: [
        {shape: 'c5.xlarge', count: 4, where: 'limits.yaml:2:3'},
        {
          shape: 'g4dn.xlarge',
          count: 2,
          partitions: ['gpu'],
          weight: 50,
          features: ['fastdisk'],
          gpu: {count: 1, model: 't4'},
          where: 'limits.yaml:3:3',
        },
      ],
      partitions: [
        {name: 'compute', default: true, maxTime: '1-00:00:00', options: {}},
        {name: 'gpu', default: false, maxTime: '12:00:00', options: {OverSubscribe: 'NO'}},
      ],
      settings: {MaxJobCount: '20000'},
    })
  })

  it('gives the same JSON for the same file (one key order)', () => {
    expect(JSON.stringify(parse(text).entries[1])).toBe(
      '{"shape":"g4dn.xlarge","count":2,"partitions":["gpu"],"weight":50,"features":["fastdisk"],"gpu":{"count":1,"model":"t4"},"where":"limits.yaml:3:3"}',
    )
  })

  it('parses oracle counts as AD maps, in both the short and the long form', () => {
    const l = parse(lines('shapes:', '  VM.Standard2.1: {1: 2}', '  BM.GPU2.2:', '    count: {1: 2, 2: 1}', '    features: [gpu_node]'), 'oracle')
    expect(l.entries).toEqual([
      {shape: 'VM.Standard2.1', ad: 1, count: 2, where: 'limits.yaml:2:3'},
      {shape: 'BM.GPU2.2', ad: 1, count: 2, features: ['gpu_node'], where: 'limits.yaml:3:3'},
      {shape: 'BM.GPU2.2', ad: 2, count: 1, features: ['gpu_node'], where: 'limits.yaml:3:3'},
    ])
  })

  it('makes the first partition the default when none is marked', () => {
    const l = parse(lines('shapes:', '  c5.xlarge: 1', 'partitions:', '  cpu:', '  long: {maxTime: UNLIMITED}'))
    expect(l.partitions).toEqual([
      {name: 'cpu', default: true, options: {}},
      {name: 'long', default: false, maxTime: 'UNLIMITED', options: {}},
    ])
  })

  it('without a partitions section, named partitions are created after "compute" (the default)', () => {
    const l = parse(lines('shapes:', '  c5.xlarge: 1', '  g4dn.xlarge: {count: 1, partitions: [gpu, compute]}'))
    expect(l.partitions).toEqual([
      {name: 'compute', default: true, options: {}},
      {name: 'gpu', default: false, options: {}},
    ])
    expect(l.entries[0].partitions).toBeUndefined()
  })

  it('accepts shapes: alone, and slurm: or partitions: without shapes', () => {
    expect(parse(lines('shapes:'))).toEqual({entries: [], staticNodes: [], partitions: [], settings: {}})
    expect(parse(lines('slurm:', '  MaxJobCount: 100', '  SchedulerParameters: bf_continue,bf_max_job_test=500'))).toEqual({
      entries: [],
      staticNodes: [],
      partitions: [],
      settings: {MaxJobCount: '100', SchedulerParameters: 'bf_continue,bf_max_job_test=500'},
    })
  })

  it('renders setting values as slurm.conf text: numbers as written, booleans as YES/NO', () => {
    const l = parse(lines('slurm:', '  MaxJobCount: 20000', '  PriorityWeightAge: 1.5', 'partitions:', '  compute: {options: {Hidden: true, MaxNodes: 10}}'))
    expect(l.settings).toEqual({MaxJobCount: '20000', PriorityWeightAge: '1.5'})
    expect(l.partitions[0].options).toEqual({Hidden: 'YES', MaxNodes: '10'})
  })

  it('takes maxTime in every Slurm time format', () => {
    for (const t of ['UNLIMITED', '60', '30:00', '12:00:00', '1-12', '1-12:30', '1-00:00:00', '100:00:00']) expect(slurmTime(t)).toBe(t)
    expect(slurmTime(90)).toBe('90')
    expect(slurmTime('infinite')).toBe('INFINITE')
    for (const t of ['1-24', '12:60', '1:2:3:4', '1d', '', '1-', '-1', '0', '0:00:00', '1-123']) expect(slurmTime(t)).toEqual({error: expect.any(String)})
  })
})

describe('bad input: every problem at its file:line:col', () => {
  it('a YAML syntax error', () => {
    const p = problems(lines('c5.xlarge: 4', 'g4dn.xlarge: [1', 't3a.medium: 2'))
    expect(p[0].where).toBe('limits.yaml:3:1')
    expect(p[0].message).toMatch(/fix the YAML syntax/)
  })

  it('a duplicate shape', () => {
    expect(oneProblem(lines('c5.xlarge: 4', 't3a.medium: 1', 'c5.xlarge: 2'))).toEqual({
      where: 'limits.yaml:3:1',
      message: 'duplicate key "c5.xlarge" (first at line 1); keep only one of them',
    })
  })

  it('a duplicate AD, also written once as a number and once as a string', () => {
    expect(oneProblem(lines('VM.Standard2.1:', '  1: 1', '  "1": 2'), 'oracle')).toEqual({
      where: 'limits.yaml:3:3',
      message: 'duplicate key "1" (first at line 2); keep only one of them',
    })
    expect(oneProblem(lines('VM.Standard2.1:', '  1: 1', '  "01": 2'), 'oracle')).toEqual({
      where: 'limits.yaml:3:3',
      message: 'VM.Standard2.1["01"]: AD 1 is given twice (also at limits.yaml:2:3); keep one',
    })
  })

  it('prints each problem as "file:line:col path: message"', () => {
    expect(() => parse(lines('c5.xlarge: 4', 'c5.xlrge: 2'))).toThrow(
      'limits.yaml:2:1 c5.xlrge: unknown shape "c5.xlrge" for provider aws; did you mean c5.xlarge, c5.2xlarge?',
    )
  })

  it('an unknown shape, with suggestions', () => {
    expect(oneProblem(lines('c5.xlarge: 4', 'c5.xlrge: 2'))).toEqual({
      where: 'limits.yaml:2:1',
      message: 'c5.xlrge: unknown shape "c5.xlrge" for provider aws; did you mean c5.xlarge, c5.2xlarge?',
    })
    expect(oneProblem(lines('shapes:', '  m9.huge: 1')).message).toBe(
      'shapes["m9.huge"]: unknown shape "m9.huge" for provider aws; check the name against the aws shapes citc knows',
    )
  })

  it('a count of 0, saying to remove the line', () => {
    expect(oneProblem(lines('c5.xlarge: 4', 't3a.medium: 0'))).toEqual({
      where: 'limits.yaml:2:1',
      message: 't3a.medium: 0 nodes: remove this line instead of writing 0',
    })
    expect(oneProblem(lines('VM.Standard2.1: {1: 2, 2: 0}'), 'oracle')).toEqual({
      where: 'limits.yaml:1:24',
      message: 'VM.Standard2.1["2"]: 0 nodes in AD 2: remove "2: 0" instead of writing 0',
    })
  })

  it('negative, fractional, text, empty and too large counts', () => {
    const p = problems(lines('c5.xlarge: -1', 't3a.medium: 2.5', 'g4dn.xlarge: three', 'c5.2xlarge:'))
    expect(p).toEqual([
      {where: 'limits.yaml:1:1', message: 'c5.xlarge: a node count must be a whole number from 1 to 9999, not -1; write the maximum number of nodes, e.g. 4'},
      {where: 'limits.yaml:2:1', message: 't3a.medium: a node count must be a whole number from 1 to 9999, not 2.5; write the maximum number of nodes, e.g. 4'},
      {where: 'limits.yaml:3:1', message: 'g4dn.xlarge: a node count must be a whole number from 1 to 9999, not "three"; write the maximum number of nodes, e.g. 4'},
      {where: 'limits.yaml:4:1', message: 'c5.2xlarge: a node count must be a whole number from 1 to 9999, not nothing; write the maximum number of nodes, e.g. 4'},
    ])
    expect(oneProblem(lines('shapes:', '  c5.xlarge:', '    count: 10000'))).toEqual({
      where: 'limits.yaml:3:5',
      message: 'shapes["c5.xlarge"].count: 10000 is too many: at most 9999 nodes per shape (node names have four digits)',
    })
    expect(oneProblem(lines('c5.xlarge: "4"')).message).toMatch(/not "4"/)
  })

  it('an oracle AD key that is not an integer 1..3', () => {
    const p = problems(lines('VM.Standard2.1:', '  1.5: 2', '  AD1: 1', '  4: 1'), 'oracle')
    expect(p).toEqual([
      {where: 'limits.yaml:2:3', message: 'VM.Standard2.1["1.5"]: 1.5 is not an availability domain; AD keys are the numbers 1, 2, 3, e.g. {1: 2, 2: 1}'},
      {where: 'limits.yaml:3:3', message: 'VM.Standard2.1["AD1"]: "AD1" is not an availability domain; AD keys are the numbers 1, 2, 3, e.g. {1: 2, 2: 1}'},
      {where: 'limits.yaml:4:3', message: 'VM.Standard2.1["4"]: 4 is not an availability domain; AD keys are the numbers 1, 2, 3, e.g. {1: 2, 2: 1}'},
    ])
  })

  it('a plain count on oracle, and an empty AD map', () => {
    expect(oneProblem(lines('VM.Standard2.1: 3'), 'oracle')).toEqual({
      where: 'limits.yaml:1:1',
      message: 'VM.Standard2.1: on oracle give the nodes per availability domain, e.g. "VM.Standard2.1: {1: 3}", not 3',
    })
    expect(oneProblem(lines('shapes:', '  VM.Standard2.1: {count: 3}'), 'oracle')).toEqual({
      where: 'limits.yaml:2:20',
      message: 'shapes["VM.Standard2.1"].count: on oracle give the nodes per availability domain, e.g. "VM.Standard2.1: {1: 3}", not 3',
    })
    expect(oneProblem(lines('VM.Standard2.1: {}'), 'oracle').message).toMatch(/no availability domains given/)
  })

  it('an AD map on aws', () => {
    expect(oneProblem(lines('c5.xlarge: 2', 't3a.medium: {1: 2}'))).toEqual({
      where: 'limits.yaml:2:1',
      message: 't3a.medium: AD maps ({AD: count}) are for oracle only; on aws give the number of nodes, e.g. "t3a.medium: 4"',
    })
    expect(oneProblem(lines('shapes:', '  c5.xlarge:', '    count: {1: 2}'))).toEqual({
      where: 'limits.yaml:3:5',
      message: 'shapes["c5.xlarge"].count: AD maps ({AD: count}) are for oracle only; on aws give the number of nodes, e.g. "c5.xlarge: 4"',
    })
  })

  it('per-shape settings in the verbatim form', () => {
    expect(oneProblem(lines('c5.xlarge: {count: 2, weight: 3}'))).toEqual({
      where: 'limits.yaml:1:1',
      message: 'c5.xlarge: per-shape settings (count, partitions, weight, features, gpu) need the extended form: put this shape under a top-level shapes: key',
    })
  })

  it('a missing count, an unknown shape setting, bad weight, features and gpu', () => {
    const p = problems(
      lines(
        'shapes:', //                          1
        '  c5.xlarge:', //                      2
        '    cont: 2', //                       3
        '  g4dn.xlarge:', //                    4
        '    count: 1', //                      5
        '    weight: 70000', //                 6
        '    features: [fast disk, ok, ok]', // 7
        '    gpu: {count: 0, model: T4}', //    8
      ),
    )
    expect(p).toEqual([
      {where: 'limits.yaml:2:3', message: 'shapes["c5.xlarge"]: count is required; add count: N, the maximum number of nodes'},
      {where: 'limits.yaml:3:5', message: 'shapes["c5.xlarge"].cont: unknown key "cont"; did you mean "count"?'},
      {where: 'limits.yaml:6:5', message: 'shapes["g4dn.xlarge"].weight: weight must be a whole number from 1 to 65533 (Slurm uses lower weights first), not 70000'},
      {
        where: 'limits.yaml:7:16',
        message: 'shapes["g4dn.xlarge"].features[0]: "fast disk" is not a valid Slurm feature name; use only letters, digits, "_", "." and "-" (no commas, spaces or "=")',
      },
      {where: 'limits.yaml:8:11', message: 'shapes["g4dn.xlarge"].gpu.count: the GPU count must be a whole number of at least 1, not 0'},
      {
        where: 'limits.yaml:8:21',
        message: 'shapes["g4dn.xlarge"].gpu.model: the GPU model "T4" must be lower-case letters, digits and "_" (as Slurm\'s Gres type, e.g. t4, a100)',
      },
    ])
  })

  it('a feature or partition listed twice', () => {
    expect(problems(lines('shapes:', '  c5.xlarge:', '    count: 1', '    features: [a, b, a]', '    partitions: [p, p]'))).toEqual([
      {where: 'limits.yaml:4:22', message: 'shapes["c5.xlarge"].features[2]: "a" is listed twice; remove one'},
      {where: 'limits.yaml:5:21', message: 'shapes["c5.xlarge"].partitions[1]: "p" is listed twice; remove one'},
    ])
  })

  it('a partition referenced by a shape but not defined', () => {
    expect(oneProblem(lines('shapes:', '  c5.xlarge: 2', '  g4dn.xlarge:', '    count: 1', '    partitions: [compute, gpus]', 'partitions:', '  compute:', '  gpu:'))).toEqual({
      where: 'limits.yaml:5:27',
      message: 'shapes["g4dn.xlarge"].partitions[1]: partition "gpus" is not defined under partitions:; did you mean "gpu"? define it there or remove it from this list',
    })
  })

  it('a partition name Slurm cannot take', () => {
    const p = problems(lines('partitions:', '  "a,b": {}', '  default:', '  ok:', '    maxTime: "1:00:00"', '    color: red'))
    expect(p).toEqual([
      {where: 'limits.yaml:2:3', message: 'partitions["a,b"]: "a,b" is not a valid Slurm partition name; use only letters, digits, "_", "." and "-" (no commas, spaces or "=")'},
      {where: 'limits.yaml:3:3', message: 'partitions.default: "default" is Slurm\'s keyword for default partition settings; choose another name'},
      {where: 'limits.yaml:6:5', message: 'partitions.ok.color: unknown key "color"; allowed: default, maxTime, options'},
    ])
  })

  it('a managed key in the slurm settings', () => {
    const p = problems(lines('slurm:', '  MaxJobCount: 20000', '  SuspendTime: 300', '  nodename: x', '  GresTypes: gpu'))
    expect(p).toEqual([
      {
        where: 'limits.yaml:3:3',
        message: "slurm.SuspendTime: citc sets SuspendTime itself from its elastic power-saving settings; remove it here and change citc's setting for the cluster instead",
      },
      {
        where: 'limits.yaml:4:3',
        message: 'slurm.nodename: citc writes the node and partition lines itself; remove nodename and describe nodes under shapes: and partitions under partitions: instead',
      },
      {where: 'limits.yaml:5:3', message: 'slurm.GresTypes: citc sets GresTypes itself when a shape has GPUs; remove it and use gpu: {count, model} on the shape instead'},
    ])
  })

  it('slurm settings that are not keys, have no value, span lines or repeat a key in another case', () => {
    const p = problems(lines('slurm:', '  Max_Jobs: 1', '  MaxJobCount:', '  MinJobAge: {a: 1}', '  JobSubmitPlugins: "a', '    b"', '  maxjobcount: 3'))
    expect(p.map((x) => [x.where, x.message.replace(/;.*/, '')])).toEqual([
      ['limits.yaml:2:3', 'slurm.Max_Jobs: "Max_Jobs" is not a slurm.conf key'],
      ['limits.yaml:3:3', 'slurm.MaxJobCount: give MaxJobCount a value, or remove it'],
      ['limits.yaml:4:3', 'slurm.MinJobAge: the value of MinJobAge must be text or a number, not a map'],
      ['limits.yaml:7:3', 'slurm.maxjobcount: maxjobcount is already set (limits.yaml:3:3'],
    ])
    // A quoted value folded over two lines is one line in YAML: accepted as "a b".
    expect(parse(lines('slurm:', '  JobSubmitPlugins: "a', '    b"')).settings).toEqual({JobSubmitPlugins: 'a b'})
    expect(oneProblem(lines('slurm:', '  JobSubmitPlugins: "a\\nb"')).message).toMatch(/cannot span lines/)
  })

  it('a bad maxTime', () => {
    expect(oneProblem(lines('partitions:', '  compute:', '    maxTime: "1-25:00"'))).toEqual({
      where: 'limits.yaml:3:5',
      message:
        'partitions.compute.maxTime: maxTime "1-25:00" has a field out of range (hours < 24 after a day count, minutes and seconds < 60); write a Slurm time: UNLIMITED, minutes (MM), MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS, e.g. "1-00:00:00"',
    })
    expect(oneProblem(lines('partitions:', '  compute: {maxTime: one day}'))).toEqual({
      where: 'limits.yaml:2:13',
      message: expect.stringMatching(/^partitions\.compute\.maxTime: maxTime "one day" is not a Slurm time; write a Slurm time/),
    })
  })

  it('two default partitions', () => {
    expect(oneProblem(lines('partitions:', '  a: {default: true}', '  b: {maxTime: 60}', '  c:', '    default: true'))).toEqual({
      where: 'limits.yaml:5:5',
      message: 'partitions.c.default: partition "c" is marked default, and so is "a" (limits.yaml:2:7); Slurm has one default partition: keep default: true on only one',
    })
    expect(oneProblem(lines('partitions:', '  a: {default: yes}')).message).toBe('partitions.a.default: default must be true or false, not "yes"')
  })

  it('partition options citc writes itself, or that would break the partition line', () => {
    expect(problems(lines('partitions:', '  a:', '    options:', '      Nodes: ALL', '      maxtime: 5', '      AllowGroups: "a b"'))).toEqual([
      {where: 'limits.yaml:4:7', message: 'partitions.a.options.Nodes: citc writes Nodes= on the partition line itself; remove it'},
      {where: 'limits.yaml:5:7', message: 'partitions.a.options.maxtime: citc writes MaxTime= on the partition line itself; use maxTime: on the partition instead'},
      {
        where: 'limits.yaml:6:7',
        message: 'partitions.a.options.AllowGroups: the value of AllowGroups cannot contain spaces or line breaks (it goes on the one partition line); remove them',
      },
    ])
  })

  it('an unknown top-level key in the extended form, and a shape outside shapes:', () => {
    expect(problems(lines('shapes:', '  c5.xlarge: 1', 'partition:', '  gpu: {}', 't3a.medium: 2', 'extra: 1'))).toEqual([
      {where: 'limits.yaml:3:1', message: 'partition: unknown top-level key "partition"; did you mean "partitions"?'},
      {where: 'limits.yaml:5:1', message: 't3a.medium: with a shapes: section, every shape goes under it; move "t3a.medium" into shapes:'},
      {where: 'limits.yaml:6:1', message: 'extra: unknown top-level key "extra"; in the extended form the top level has only shapes, partitions, slurm and static'},
    ])
  })

  it('a document that is not a map, and sections of the wrong type', () => {
    expect(oneProblem(lines('- c5.xlarge', '- t3a.medium'))).toEqual({
      where: 'limits.yaml:1:1',
      message: 'limits.yaml must be a map of shapes to node counts, e.g. "c5.xlarge: 4" (or the extended form with shapes:), not a list',
    })
    expect(problems(lines('shapes: [c5.xlarge]', 'partitions: compute', 'slurm: 3')).map((p) => p.where)).toEqual([
      'limits.yaml:1:1',
      'limits.yaml:2:1',
      'limits.yaml:3:1',
    ])
  })

  it('reports every problem together, sorted by position', () => {
    const text = lines(
      'shapes:', //                           1
      '  c5.xlrge: 2', //                      2  unknown shape
      '  t3a.medium: 0', //                    3  zero
      '  g4dn.xlarge:', //                     4
      '    count: 2.5', //                     5  float
      '    partitions: [gpu]', //              6  undefined partition
      'partitions:', //                        7
      '  compute: {default: true}', //         8
      '  long: {default: true, maxTime: x}', // 9  second default, bad maxTime
      'slurm:', //                             10
      '  SuspendTime: 60', //                  11 managed
      'extras: 1', //                          12 unknown top-level key
    )
    const err = (() => {
      try {
        parse(text)
      } catch (error) {
        return error as InvalidInputError
      }
      throw new Error('expected an error')
    })()
    expect(err.problems.map((p) => p.where)).toEqual([
      'limits.yaml:2:3',
      'limits.yaml:3:3',
      'limits.yaml:5:5',
      'limits.yaml:6:18',
      'limits.yaml:9:10',
      'limits.yaml:9:25',
      'limits.yaml:11:3',
      'limits.yaml:12:1',
    ])
    // The error's message is one line per problem: file:line:col: path: message.
    expect(err.message.split('\n')[0]).toBe(
      'limits.yaml:2:3 shapes["c5.xlrge"]: unknown shape "c5.xlrge" for provider aws; did you mean c5.xlarge, c5.2xlarge?',
    )
    expect(err.message.split('\n')).toHaveLength(8)
    expect(err.hint).toMatch(/nothing was changed/)
  })

  it('uses the file label it is given', () => {
    expect(problems('c5.xlarge: 0\n', 'aws', {file: '/home/me/limits.yaml'})[0].where).toBe('/home/me/limits.yaml:1:1')
  })
})

describe('oracle: the management node is subtracted once', () => {
  const text = lines('VM.Standard2.1: {1: 1, 2: 3}', 'VM.Standard2.2: {2: 2}')

  it('subtracts 1 from the entry with its shape and AD', () => {
    expect(parse(text, 'oracle', {mgmt: {shape: 'VM.Standard2.1', ad: 2}}).entries.map((e) => [e.shape, e.ad, e.count])).toEqual([
      ['VM.Standard2.1', 1, 1],
      ['VM.Standard2.1', 2, 2],
      ['VM.Standard2.2', 2, 2],
    ])
  })

  it('drops an entry that reaches 0', () => {
    expect(parse(text, 'oracle', {mgmt: {shape: 'VM.Standard2.1', ad: 1}}).entries.map((e) => [e.shape, e.ad, e.count])).toEqual([
      ['VM.Standard2.1', 2, 3],
      ['VM.Standard2.2', 2, 2],
    ])
  })

  it('changes nothing when the shape/AD is absent or the AD is unknown', () => {
    const plain = parse(text, 'oracle').entries
    expect(parse(text, 'oracle', {mgmt: {shape: 'VM.Standard2.2', ad: 1}}).entries).toEqual(plain)
    expect(parse(text, 'oracle', {mgmt: {shape: 'BM.GPU2.2', ad: 2}}).entries).toEqual(plain)
    expect(parse(text, 'oracle', {mgmt: {shape: 'VM.Standard2.1'}}).entries).toEqual(plain)
  })

  it('only on oracle', () => {
    const aws = lines('c5.xlarge: 2')
    expect(parse(aws, 'aws', {mgmt: {shape: 'c5.xlarge', ad: 1}}).entries[0].count).toBe(2)
    expect(parse(aws, 'aws', {mgmt: {shape: 'c5.xlarge'}}).entries[0].count).toBe(2)
  })
})
