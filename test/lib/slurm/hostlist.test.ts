// Hostlist expansion and compression: unit tests, and the same cases fed to Slurm's own parser
// (scontrol show hostnames / show hostlist, Slurm 22.05 from Debian) in both directions.
import {execFile} from 'node:child_process'
import {accessSync, constants, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {delimiter, join} from 'node:path'
import {promisify} from 'node:util'
import {afterAll, describe, expect, it} from 'vitest'

import {
  DEFAULT_EXPAND_LIMIT,
  HostlistError,
  SLURM_MAX_RANGE,
  compressHostlist,
  expandHostlist,
} from '../../../src/lib/slurm/hostlist.js'

const run = promisify(execFile)

// ---- Slurm as the oracle ----------------------------------------------------------------------------

function findScontrol(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin']
  for (const d of dirs) {
    const p = join(d, 'scontrol')
    try {
      accessSync(p, constants.X_OK)
      return p
    } catch {
      // not here
    }
  }
  return undefined
}

const scontrolPath = findScontrol()
const dir = mkdtempSync(join(tmpdir(), 'citc-hostlist-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

// scontrol needs a configuration source, or it looks for DNS SRV records and dies. This is enough
// (ClusterName and SlurmctldHost alone would do); no daemon is needed to expand or compress hostlists.
const confPath = join(dir, 'slurm.conf')
writeFileSync(confPath, ['ClusterName=t', 'SlurmctldHost=localhost', 'NodeName=x State=CLOUD', 'PartitionName=p Nodes=x', ''].join('\n'))
const env = {...process.env, SLURM_CONF: confPath}

async function scontrol(args: string[]): Promise<{stdout: string; stderr: string}> {
  if (!scontrolPath)
    throw new Error(
      'scontrol was not found (on PATH or at /usr/bin/scontrol). These tests check the hostlist code against ' +
        "Slurm's own parser and must not be skipped: install Slurm's client (apt-get install slurm-client).",
    )
  try {
    // "--": getopt would otherwise take a hostlist starting with "-" for options.
    return await run(scontrolPath, ['--', ...args], {env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, timeout: 30_000})
  } catch (error) {
    const e = error as {stdout?: string; stderr?: string; code?: unknown}
    // `show hostlist` exits 1 on a bad hostlist; `show hostnames` exits 0 and only complains.
    if (typeof e.code === 'number' && e.stderr !== undefined) return {stdout: e.stdout ?? '', stderr: e.stderr}
    throw error
  }
}

type SlurmResult = {ok: true; value: string} | {ok: false; error: string}

/** Slurm's expansion of a hostlist expression, in Slurm's order. */
async function slurmExpand(expr: string): Promise<SlurmResult & {names?: string[]}> {
  const {stdout, stderr} = await scontrol(['show', 'hostnames', expr])
  if (/Invalid hostlist|error/i.test(stderr)) return {ok: false, error: stderr.trim()}
  const names = stdout.split('\n').filter((l) => l !== '')
  return {ok: true, value: names.join(' '), names}
}

async function slurmExpandOk(expr: string): Promise<string[]> {
  const r = await slurmExpand(expr)
  if (!r.ok) throw new Error(`scontrol refused ${expr}: ${r.error}`)
  return r.names!
}

let fileNo = 0
/** Slurm's compression of names in the given order (scontrol reads them from a file: no argv limit). */
async function slurmCompress(names: string[]): Promise<string> {
  const file = join(dir, `names-${fileNo++}`)
  writeFileSync(file, names.join('\n') + '\n')
  const {stdout, stderr} = await scontrol(['show', 'hostlist', file])
  if (stderr.trim() !== '') throw new Error(`scontrol show hostlist complained: ${stderr}`)
  return stdout.trim()
}

const uniqueSorted = (names: string[]) => [...new Set(names)].sort()

// ---- a seeded random number generator (mulberry32) ----------------------------------------------------

function rng(seed: number) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1))
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)]
  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = int(0, i)
      ;[xs[i], xs[j]] = [xs[j], xs[i]]
    }
    return xs
  }
  return {next, int, pick, shuffle}
}

const padNum = (n: number, w: number) => String(n).padStart(w, '0')

// ---- expansion ------------------------------------------------------------------------------------------

describe('expandHostlist', () => {
  it('expands ranges, lists, padding and several bracket groups', () => {
    expect(expandHostlist('c[1-3,7,10-12]')).toEqual(['c1', 'c2', 'c3', 'c7', 'c10', 'c11', 'c12'])
    expect(expandHostlist('n[001-010]')).toEqual(['n001', 'n002', 'n003', 'n004', 'n005', 'n006', 'n007', 'n008', 'n009', 'n010'])
    expect(expandHostlist('n[1-010]')).toEqual(['n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7', 'n8', 'n9', 'n10']) // width of the lower bound
    expect(expandHostlist('n[0099-100]')).toEqual(['n0099', 'n0100'])
    expect(expandHostlist('n[98-100]')).toEqual(['n98', 'n99', 'n100'])
    expect(expandHostlist('rack[1-2]-n[1-3]')).toEqual(['rack1-n1', 'rack1-n2', 'rack1-n3', 'rack2-n1', 'rack2-n2', 'rack2-n3'])
    // Slurm's order with three groups: the last fastest, then the first, the middle one slowest.
    expect(expandHostlist('a[1-2]b[3-4]c[5-6]')).toEqual(['a1b3c5', 'a1b3c6', 'a2b3c5', 'a2b3c6', 'a1b4c5', 'a1b4c6', 'a2b4c5', 'a2b4c6'])
    expect(expandHostlist('mycluster-c5-xlarge-0001,login.example.org')).toEqual(['mycluster-c5-xlarge-0001', 'login.example.org'])
    expect(expandHostlist('[1-3]')).toEqual(['1', '2', '3'])
    expect(expandHostlist('n[1,1],n1')).toEqual(['n1', 'n1', 'n1']) // duplicates kept, as Slurm does
    expect(expandHostlist('  c[1-2]\n')).toEqual(['c1', 'c2'])
    expect(expandHostlist('')).toEqual([])
  })

  it('refuses bad syntax with a message naming the offending part', () => {
    const cases: Array<[string, RegExp]> = [
      ['c[5-1]', /reversed range "5-1"/],
      ['c[1-3', /"\[" is never closed in "c\[1-3"/],
      ['a,c[1-3,n2', /never closed in "c\[1-3,n2"/],
      ['a]b', /"]" without a "\[" before it in "a]b"/],
      ['a,,b', /empty host name after "a"/],
      [',a', /empty host name at the start/],
      ['a,', /empty host name at the end/],
      ['c[a-b]', /"a-b" is not a number or a range/],
      ['ok[1-2],c[1-x]', /"1-x" in "c\[1-x]" is not a number/],
      ['n[1,,2]', /empty range in "\[1,,2]"/],
      ['n[]', /empty brackets/],
      ['n[[1-2]]', /"\[" inside brackets/],
      ['n[1-2-3]', /"1-2-3" is not a number/],
      ['n[-1]', /"-1" is not a number/],
      ['x[1-3].ext', /"\.ext" after the last "]" in "x\[1-3]\.ext"/],
      ['a b', /whitespace or a control character in "a b"/],
      ['n[1-70000]', /range "1-70000" has 70000 hosts; Slurm refuses a range of more than 65536/],
      ['n[1-99999999999999999]', /number too large/],
    ]
    for (const [expr, message] of cases) {
      let caught: unknown
      try {
        expandHostlist(expr)
      } catch (error) {
        caught = error
      }
      expect(caught, expr).toBeInstanceOf(HostlistError)
      expect((caught as Error).message, expr).toMatch(message)
      expect((caught as HostlistError).expression, expr).toBe(expr)
    }
  })

  it('guards against huge expansions before building them', () => {
    expect(expandHostlist('n[1-10]', 10)).toHaveLength(10)
    expect(() => expandHostlist('n[1-10]', 9)).toThrow(/expands to more than 9 hosts/)
    expect(() => expandHostlist('a,b,c', 2)).toThrow(/more than 2 hosts \(limit reached at "c"\)/)
    expect(DEFAULT_EXPAND_LIMIT).toBe(1_000_000)
    // 10^9 names: refused from the counts, before anything is built.
    expect(() => expandHostlist('a[1-1000]b[1-1000]c[1-1000]')).toThrow(/more than 1000000 hosts/)
    expect(expandHostlist('n[1-65536,65537-100000]')).toHaveLength(100_000)
  })
})

// ---- compression ----------------------------------------------------------------------------------------

const range = (prefix: string, lo: number, hi: number, width = 0) => Array.from({length: hi - lo + 1}, (_, i) => prefix + padNum(lo + i, width))

/** [names given to compressHostlist, its expected output]. Each is also checked with scontrol. */
const compressCases: Array<[string, string[], string]> = [
  ['one prefix, 4-digit padding', range('demo-c5-xlarge-', 1, 100, 4), 'demo-c5-xlarge-[0001-0100]'],
  ['gaps', ['n0001', 'n0002', 'n0003', 'n0010', 'n0012', 'n0013'], 'n[0001-0003,0010,0012-0013]'],
  ['single name keeps no brackets', ['demo-c5-xlarge-0007'], 'demo-c5-xlarge-0007'],
  ['several prefixes', [...range('demo-m5-2xlarge-', 1, 3, 4), ...range('demo-c5-xlarge-', 1, 4, 4), 'demo-c5-xlarge-0009'], 'demo-c5-xlarge-[0001-0004,0009],demo-m5-2xlarge-[0001-0003]'],
  ['unsorted with duplicates', ['c3', 'c1', 'c2', 'c1', 'c10', 'c3'], 'c[1-3,10]'],
  ['unpadded across a power of ten', range('n', 8, 12), 'n[8-12]'],
  ['padded across a power of ten', range('n', 998, 1001, 4), 'n[0998-1001]'],
  ['padding narrower than the numbers', [...range('n', 9998, 10001, 4)], 'n[9998-10001]'],
  ['prefixes in natural order', ['rack10-n1', 'rack2-n2', 'rack2-n1', 'rack1-n1'], 'rack1-n1,rack2-n[1-2],rack10-n1'],
  ['names without a number', ['login', 'c2', 'foo1', 'foo', 'c1', 'foo2', 'mgmt.example.org'], 'c[1-2],foo,foo[1-2],login,mgmt.example.org'],
  ['text after the number is not ranged (Slurm cannot parse c[1-2].ext)', ['c2.ext', 'c1.ext'], 'c1.ext,c2.ext'],
  ['padded and unpadded forms of one prefix', ['n2', 'n01', 'n1', 'n02'], 'n[1,01,2,02]'],
  ['zero, and a padded zero', ['n0', 'n1', 'n00'], 'n[0,00,1]'],
  ['only digits', ['3', '1', '2'], '[1-3]'],
  ['dashes and dots', ['my.cluster-c5-xlarge-0001', 'my.cluster-c5-xlarge-0002'], 'my.cluster-c5-xlarge-[0001-0002]'],
  ['more than 14 digits stay whole', ['n123456789012345', 'n123456789012346'], 'n123456789012345,n123456789012346'],
  ['empty', [], ''],
]

describe('compressHostlist', () => {
  for (const [name, input, expected] of compressCases) {
    it(name, () => {
      expect(compressHostlist(input)).toBe(expected)
      expect(uniqueSorted(expandHostlist(expected))).toEqual(uniqueSorted(input))
    })
  }

  it('never writes a range Slurm refuses (more than 65536 hosts)', () => {
    expect(SLURM_MAX_RANGE).toBe(65_536)
    expect(compressHostlist(range('n', 1, 70_000))).toBe('n[1-65536,65537-70000]')
    expect(compressHostlist(range('n', 1, 200_000, 6))).toBe('n[000001-065536,065537-131072,131073-196608,196609-200000]')
  })

  it('refuses names Slurm could not read back', () => {
    expect(() => compressHostlist(['a', ''])).toThrow(/empty host name/)
    expect(() => compressHostlist(['a,b'])).toThrow(/cannot compress host name "a,b" \(it contains whitespace, a comma or a bracket\)/)
    expect(() => compressHostlist(['c[1]'])).toThrow(HostlistError)
    expect(() => compressHostlist(['a b'])).toThrow(HostlistError)
  })
})

// ---- against Slurm's parser -------------------------------------------------------------------------------

describe("against Slurm's parser (scontrol, Slurm 22.05)", () => {
  it('has scontrol, and the minimal slurm.conf is enough for it', async () => {
    expect(scontrolPath, 'scontrol must be installed (slurm-client)').toBeDefined()
    expect(await slurmExpandOk('c[1-2]')).toEqual(['c1', 'c2'])
  })

  const expandCases = [
    'c[1-3,7,10-12]',
    'n[001-010]',
    'n[1-010]',
    'n[0099-100]',
    'n[8-11]',
    'n[09-11]',
    'n[007]',
    'n[0-0]',
    'n[00-02]',
    'x[01,2,003]',
    'rack[1-2]-n[1-3]',
    'a[1-2]b[3-4]c[5-6]',
    'a[1-2]b[3-4]c[5-6]d[7-8]',
    'c[1-3]-[4-5]',
    'n[1-3][4-5]',
    'c[1-2]1[3-4]',
    'mycluster-c5-xlarge-0001',
    'mycluster-c5-xlarge-[0001-0004],mycluster-m5-2xlarge-[0001-0002]',
    'login,mgmt.example.org,c[1-2]',
    'gpu-a100.node[1-2]',
    '[1-3]',
    'n[1,1],n1',
    'n[1-3],n[2-4]',
    'n[65530-65536,65537-65540]',
    'n[1-65536]',
  ]
  it('expands like Slurm', async () => {
    for (const expr of expandCases) expect(expandHostlist(expr), expr).toEqual(await slurmExpandOk(expr))
  })

  it('refuses what Slurm refuses', async () => {
    const bad = ['c[5-1]', 'c[a-b]', 'x[1-3]y', 'x[1-3].ext', 'x[1-3]-y', 'a[1-2]b[3-4]c', 'n[]', 'n[1-2-3]', 'n[[1-3]]', 'n[-1]', 'a[1,,2]', 'n[1-65537]']
    for (const expr of bad) {
      expect(() => expandHostlist(expr), expr).toThrow(HostlistError)
      expect((await slurmExpand(expr)).ok, `scontrol on ${expr}`).toBe(false)
    }
  })

  it('is deliberately stricter than Slurm on empty items, whitespace and stray brackets', async () => {
    // What Slurm 22.05 makes of these: nothing anyone meant.
    const lenient: Array<[string, string]> = [
      ['a,,b', 'a b'],
      ['a,', 'a'],
      ['c[1-3', 'c]'],
      ['a]b', 'a]b'],
      ['n1-3]', 'n1-3]'],
      ['a b', 'a b'],
    ]
    for (const [expr, slurmSays] of lenient) {
      expect(() => expandHostlist(expr), expr).toThrow(HostlistError)
      expect(await slurmExpand(expr), `scontrol on ${expr}`).toMatchObject({ok: true, value: slurmSays})
    }
  })

  it('compresses exactly as scontrol show hostlist does, and Slurm expands the result back', async () => {
    for (const [name, input, expected] of compressCases) {
      if (input.length === 0) continue
      const canonical = expandHostlist(expected) // our order: sorted, unique
      if (name.startsWith('more than 14 digits')) {
        // The one case where we keep names whole that Slurm would range: still read back the same.
        expect(await slurmExpandOk(expected)).toEqual(canonical)
        continue
      }
      expect(await slurmCompress(canonical), name).toBe(expected)
      expect(await slurmExpandOk(expected), name).toEqual(canonical)
    }
  })

  it('splits ranges of more than 65536 hosts, which scontrol show hostlist does not (and then cannot read)', async () => {
    const names = range('n', 1, 70_000)
    expect(await slurmCompress(names)).toBe('n[1-70000]')
    expect((await slurmExpand('n[1-70000]')).ok).toBe(false)
    const ours = compressHostlist(names)
    expect(await slurmExpandOk(ours)).toEqual(names)
  })

  it('agrees with scontrol on 50 random name sets (seeded)', async () => {
    const r = rng(20261121)
    const prefixes = ['c', 'n', 'mycluster-c5-xlarge-', 'mycluster-c5-2xlarge-', 'rack1-n', 'rack10-n', 'rack2-n', 'gpu.a100-', 'x-']
    const singles = ['login', 'mgmt.example.org', 'c', 'rack1-n', 'n1a', 'c1.ext']
    for (let c = 0; c < 50; c++) {
      const names: string[] = []
      const nPrefixes = r.int(1, 5)
      for (let p = 0; p < nPrefixes; p++) {
        const prefix = r.pick(prefixes)
        const width = r.pick([0, 0, 2, 3, 4, 4, 4])
        const base = r.pick([0, 1, 1, 7, 95, 990, 9990])
        const span = r.int(1, r.pick([5, 30, 300, 2000]))
        const density = r.pick([1, 1, 0.9, 0.5, 0.1])
        for (let k = base; k < base + span; k++) if (r.next() < density) names.push(prefix + padNum(k, width))
        if (r.next() < 0.15) names.push(prefix + padNum(r.int(0, 30), r.pick([1, 2, 3]))) // a stray differently padded name
      }
      if (r.next() < 0.3) names.push(r.pick(singles))
      if (names.length === 0) names.push('c1')
      for (let d = r.int(0, 3); d > 0; d--) names.push(r.pick(names)) // duplicates
      r.shuffle(names)

      const ours = compressHostlist(names)
      const canonical = expandHostlist(ours)
      const what = `case ${c}: ${ours.slice(0, 200)}`
      expect(new Set(canonical).size, what).toBe(canonical.length) // no duplicates in the output
      expect(uniqueSorted(canonical), what).toEqual(uniqueSorted(names)) // same set
      expect(await slurmExpandOk(ours), what).toEqual(canonical) // Slurm reads it back, same order
      expect(await slurmCompress(canonical), what).toBe(ours) // and writes the same for that order
    }
  })

  it('expands 50 random expressions as scontrol does (seeded)', async () => {
    const r = rng(42)
    const literals = ['c', 'n', 'rack', '-n', 'x', 'gpu.a100-', '-', 'a', 'b']
    const rangeList = () => {
      const parts: string[] = []
      for (let k = r.int(1, 3); k > 0; k--) {
        const lo = r.int(0, 120)
        const width = r.pick([0, 0, 2, 3, 4])
        parts.push(r.next() < 0.3 ? padNum(lo, width) : `${padNum(lo, width)}-${padNum(lo + r.int(0, 15), r.pick([0, width]))}`)
      }
      return `[${parts.join(',')}]`
    }
    for (let c = 0; c < 50; c++) {
      const items: string[] = []
      for (let i = r.int(1, 3); i > 0; i--) {
        const groups = r.pick([0, 1, 1, 1, 2, 2, 3])
        let item = r.pick(literals)
        for (let g = 0; g < groups; g++) item += (g > 0 && r.next() < 0.7 ? r.pick(literals) : '') + rangeList()
        if (groups === 0) item += String(r.int(0, 50))
        items.push(item)
      }
      const expr = items.join(',')
      expect(expandHostlist(expr), expr).toEqual(await slurmExpandOk(expr))
    }
  })
})
