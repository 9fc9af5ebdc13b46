// `citc finish --dry-run --provider P --cluster-id ID --limits FILE`: the standalone preview the README
// quick start shows. For every file in examples/: the slurm.conf printed (snapshot, then read by
// Slurm's own parser), the --json document scripts rely on, --output-dir, and the bad-input refusals.
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {type CliResult, cliSandbox, limited, nodeNameHostlists, ROOT, scontrolHostnames} from './support.js'

const sandbox = cliSandbox('finish')
afterAll(() => sandbox.cleanup())
const {run} = sandbox

interface NodeDoc {
  name: string
  shape: string
  ad: number | null
  cpus: number
  realMemory: number
  features: string[]
  gres: string | null
  partitions: string[]
}
interface PartitionDoc {
  name: string
  default: boolean
  nodes: string[]
}
interface PreviewDoc {
  nodes: NodeDoc[]
  partitions: PartitionDoc[]
  slurmConf: string
  gresConf: string
}

const CASES = [
  {file: 'limits-aws.yaml', provider: 'aws'},
  {file: 'limits-oracle.yaml', provider: 'oracle'},
  {file: 'limits-extended.yaml', provider: 'aws'},
] as const

const preview = (provider: string, limits: string, ...more: string[]) => [
  'finish',
  '--dry-run',
  '--provider',
  provider,
  '--cluster-id',
  'demo',
  '--limits',
  limits,
  ...more,
]

const key = (shape: string, ad: number | null | undefined) => (ad ? `${shape} ad${ad}` : shape)

/** Node counts per shape (and AD), read from the limits file itself: CitC's forms and the extended one. */
function countsInFile(path: string): Record<string, number> {
  const doc = parse(readFileSync(path, 'utf8')) as Record<string, unknown>
  const extended = ['shapes', 'partitions', 'slurm'].some((k) => k in doc)
  const shapes = (extended ? doc.shapes : doc) as Record<string, unknown>
  const out: Record<string, number> = {}
  for (const [shape, v] of Object.entries(shapes)) {
    if (typeof v === 'number') out[key(shape, null)] = v
    else if (v && typeof v === 'object' && 'count' in v) out[key(shape, null)] = (v as {count: number}).count
    else for (const [ad, n] of Object.entries(v as Record<string, number>)) out[key(shape, Number(ad))] = n
  }
  return out
}

function countsInDoc(nodes: NodeDoc[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const n of nodes) out[key(n.shape, n.ad)] = (out[key(n.shape, n.ad)] ?? 0) + 1
  return out
}

/** shape=…, ad=… from a NodeName line's Features. */
function featuresOf(line: string): Record<string, string> {
  const m = line.match(/Features="([^"]*)"/)
  return Object.fromEntries((m?.[1] ?? '').split(',').map((f) => f.split('=') as [string, string]))
}

const runs: Record<string, {plain: CliResult; again: CliResult; json: CliResult}> = {}

beforeAll(async () => {
  const tasks = CASES.flatMap((c) => {
    const args = preview(c.provider, `examples/${c.file}`)
    return [() => run(args), () => run(args), () => run([...args, '--json'])]
  })
  const results = await limited(3, tasks)
  CASES.forEach((c, i) => (runs[c.file] = {plain: results[3 * i], again: results[3 * i + 1], json: results[3 * i + 2]}))
})

describe.each(CASES)('finish --dry-run --provider $provider --limits examples/$file', ({file, provider}) => {
  const stem = file.replace(/\.yaml$/, '')

  it('prints the slurm.conf (snapshot), the same as --json’s slurmConf', async () => {
    const {plain, json} = runs[file]
    expect(plain.code, plain.stderr).toBe(0)
    expect(plain.stdout).toMatch(/^NodeName=/m)
    await expect(plain.stdout).toMatchFileSnapshot(`__snapshots__/finish-${stem}.slurm.conf`)
    expect(json.code, json.stderr).toBe(0)
    expect(plain.stdout).toBe(json.json<PreviewDoc>().slurmConf)
    expect(plain.stdout).toContain('ClusterName=demo\n')
    // One NodeName line per shape/AD group, not one per node.
    expect(nodeNameHostlists(plain.stdout)).toHaveLength(Object.keys(countsInFile(join(ROOT, 'examples', file))).length)
  })

  it('is accepted by Slurm (scontrol), and its hostlists expand to the nodes of the file', () => {
    const conf = runs[file].plain.stdout
    const expected = countsInFile(join(ROOT, 'examples', file))
    const firstLine = conf.split('\n').find((l) => l.startsWith('NodeName='))!
    const firstHostlist = nodeNameHostlists(conf)[0]
    const f = featuresOf(firstLine)
    expect(f.shape).toBeTruthy()
    const r = scontrolHostnames(sandbox.tmp, conf, firstHostlist)
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.hosts).toHaveLength(expected[key(f.shape, f.ad ? Number(f.ad) : null)])
    expect(new Set(r.hosts).size).toBe(r.hosts.length)
    // Every NodeName line together: exactly the nodes of the --json document, in order.
    const all = scontrolHostnames(sandbox.tmp, conf, nodeNameHostlists(conf).join(','))
    expect(all.status, all.stderr).toBe(0)
    const total = Object.values(expected).reduce((a, b) => a + b, 0)
    expect(all.hosts).toHaveLength(total)
    expect(all.hosts).toEqual(runs[file].json.json<PreviewDoc>().nodes.map((n) => n.name))
  })

  it('--json: one document with nodes, partitions, slurmConf and gresConf; node counts as in the file', () => {
    const {json} = runs[file]
    const doc = json.json<PreviewDoc>()
    expect(doc).toMatchObject({nodes: expect.any(Array), partitions: expect.any(Array), slurmConf: expect.any(String), gresConf: expect.any(String)})
    expect(countsInDoc(doc.nodes)).toEqual(countsInFile(join(ROOT, 'examples', file)))
    const partitionNames = doc.partitions.map((p) => p.name)
    expect(doc.partitions.filter((p) => p.default)).toHaveLength(1)
    for (const n of doc.nodes) {
      expect(Object.keys(n).sort()).toEqual(['ad', 'address', 'cpus', 'features', 'gres', 'kind', 'name', 'partitions', 'realMemory', 'shape'])
      // Elastic nodes get their address when they start; joined machines (kind "static") have theirs.
      expect(n).toMatchObject({kind: 'elastic', address: null})
      expect(n.name).toMatch(/^demo-[a-z0-9-]+-\d{4}$/)
      expect(Number.isInteger(n.cpus) && n.cpus > 0, `${n.name} cpus`).toBe(true)
      expect(Number.isInteger(n.realMemory) && n.realMemory > 0, `${n.name} realMemory`).toBe(true)
      expect(n.features).toContain(`shape=${n.shape}`)
      if (provider === 'oracle') {
        expect(n.ad).toEqual(expect.any(Number))
        expect(n.features).toContain(`ad=${n.ad}`)
        expect(n.name).toContain(`-ad${n.ad}-`)
      } else {
        expect(n.ad).toBeNull()
      }
      expect(n.gres === null || /^gpu:[a-z0-9_]+:\d+$/.test(n.gres), `${n.name} gres ${n.gres}`).toBe(true)
      expect(n.partitions.length).toBeGreaterThan(0)
      for (const p of n.partitions) expect(partitionNames).toContain(p)
    }
    // GPUs: every GPU node is in gres.conf, and only then is there a gres.conf line.
    const gpuShapes = new Set(doc.nodes.filter((n) => n.gres).map((n) => n.shape))
    expect(doc.gresConf.split('\n').filter((l) => l.startsWith('NodeName=')).length).toBe(gpuShapes.size)
    // Each partition's hostlists are exactly the nodes that name it.
    for (const p of doc.partitions) {
      const members = doc.nodes.filter((n) => n.partitions.includes(p.name)).map((n) => n.name)
      const expanded = p.nodes.length === 0 ? [] : scontrolHostnames(sandbox.tmp, doc.slurmConf, p.nodes.join(',')).hosts
      expect(expanded.sort(), `partition ${p.name}`).toEqual(members.sort())
      expect(doc.slurmConf).toMatch(new RegExp(`^PartitionName=${p.name} `, 'm'))
    }
  })

  it('is deterministic: two runs print the same bytes', () => {
    const {plain, again} = runs[file]
    expect(again.code).toBe(0)
    expect(again.stdout).toBe(plain.stdout)
  })
})

describe('oracle: the management node', () => {
  it('--mgmt-shape/--mgmt-ad subtract exactly one node of that shape in that AD', async () => {
    const base = preview('oracle', 'examples/limits-oracle.yaml', '--json')
    const [without, ad1, ad3] = await Promise.all([
      run(base),
      run([...base, '--mgmt-shape', 'VM.Standard2.1', '--mgmt-ad', '1']),
      run([...base, '--mgmt-shape', 'VM.Standard2.1', '--mgmt-ad', '3']),
    ])
    for (const r of [without, ad1, ad3]) expect(r.code, r.stderr).toBe(0)
    const before = countsInDoc(without.json<PreviewDoc>().nodes)
    expect(before).toEqual(countsInFile(join(ROOT, 'examples', 'limits-oracle.yaml'))) // a preview without them subtracts nothing
    // AD 1 had one VM.Standard2.1: the group goes; AD 3 had two: one is left. Nothing else changes.
    const {'VM.Standard2.1 ad1': gone, ...rest} = before
    expect(gone).toBe(1)
    expect(countsInDoc(ad1.json<PreviewDoc>().nodes)).toEqual(rest)
    expect(countsInDoc(ad3.json<PreviewDoc>().nodes)).toEqual({...before, 'VM.Standard2.1 ad3': before['VM.Standard2.1 ad3'] - 1})
    expect(ad1.json<PreviewDoc>().slurmConf).not.toContain('demo-vm-standard2-1-ad1-')
  })
})

describe('--output-dir', () => {
  it('writes slurm.conf and gres.conf (with the T4 line) and prints nothing on stdout', async () => {
    const out = join(sandbox.tmp, 'out', 'nested')
    const r = await run(preview('aws', 'examples/limits-aws.yaml', '--output-dir', out))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toBe('')
    const slurmConf = readFileSync(join(out, 'slurm.conf'), 'utf8')
    const gresConf = readFileSync(join(out, 'gres.conf'), 'utf8')
    expect(slurmConf).toBe(runs['limits-aws.yaml'].plain.stdout)
    expect(gresConf).toContain('NodeName=demo-g4dn-xlarge-[0001-0002] Name=gpu Type=t4 File=/dev/nvidia0\n')
    expect(gresConf).toBe(runs['limits-aws.yaml'].json.json<PreviewDoc>().gresConf)
    await expect(gresConf).toMatchFileSnapshot('__snapshots__/finish-limits-aws.gres.conf')
    expect(r.stderr).toContain(join(out, 'slurm.conf'))
  })
})

describe('bad limits: exit 3, FILE:LINE:COL, nothing printed as configuration', () => {
  const BAD = [
    {name: 'a typo’d shape', provider: 'aws', text: 'c5.xlarge: 2\nc5.xlarg: 4\n', at: '2:1', says: 'c5.xlarge'},
    {name: 'a count of 0', provider: 'aws', text: 't3a.medium: 1\nc5.xlarge: 0\n', at: '2:1', says: '0 nodes'},
    {name: 'an AD map on aws', provider: 'aws', text: 'c5.xlarge: {1: 2}\n', at: '1:1', says: 'oracle'},
    {name: 'a managed key under slurm:', provider: 'aws', text: 'shapes:\n  c5.xlarge: 2\nslurm:\n  SuspendTime: 30\n', at: '4:3', says: 'SuspendTime'},
    {name: 'an AD that is not a number (oracle)', provider: 'oracle', text: 'VM.Standard2.1: {one: 1}\n', at: '1:18', says: 'availability domain'},
  ]

  it.each(BAD)('$name', async ({name, provider, text, at, says}) => {
    const file = join(sandbox.tmp, `${name.replace(/\W+/g, '-')}.yaml`)
    writeFileSync(file, text)
    const out = join(sandbox.tmp, `never-${name.replace(/\W+/g, '-')}`)
    const [plain, json, written] = await Promise.all([
      run(preview(provider, file)),
      run(preview(provider, file, '--json')),
      run(preview(provider, file, '--output-dir', out)),
    ])
    expect(plain.code, plain.stderr).toBe(3)
    expect(plain.stdout).toBe('')
    expect(plain.stderr).toContain(`${file}:${at}`)
    expect(plain.stderr).toContain(says)
    expect(json.code).toBe(3)
    expect(json.json().error).toMatchObject({kind: 'invalidInput', exitCode: 3})
    expect(json.stdout).not.toContain('NodeName=')
    expect(written.code).toBe(3)
    expect(existsSync(out), 'nothing is written for bad limits').toBe(false)
  })

  it('a missing limits file: exit 3, naming it', async () => {
    const file = join(sandbox.tmp, 'no-such-limits.yaml')
    const r = await run(preview('aws', file))
    expect(r.code).toBe(3)
    expect(r.stdout).toBe('')
    expect(r.stderr).toContain(file)
  })
})
