import {describe, expect, it} from 'vitest'

import {aggregateUsage, type UsageBy} from '../../../src/lib/usage/aggregate.js'
import {bar, csvField, formatNumber, renderUsageCsv, renderUsageTable, usageDocument} from '../../../src/lib/usage/render.js'
import {parseSacct} from '../../../src/lib/usage/sacct.js'
import {usageDocumentSchema} from '../../../src/lib/usage/schema.js'

const T = (iso: string) => Date.parse(iso + 'Z') / 1000

// sacct's own lines (the format sacctArgv asks for): the report is built the way the command will.
const SACCT = [
  'JobID|User|Account|Partition|NodeList|AllocTRES|ElapsedRaw|Start|End|State',
  '201|alice|physics|compute|demo-c5-xlarge-[0001-0004]|billing=16,cpu=16,mem=28G,node=4|36000|2026-11-02T08:00:00|2026-11-02T18:00:00|COMPLETED',
  '202|bob|physics-lab|gpu|demo-g4dn-xlarge-0001|billing=4,cpu=4,gres/gpu=1,mem=15000M,node=1|7200|2026-11-03T23:00:00|2026-11-04T01:00:00|COMPLETED',
  '203|carol|chemistry|compute|demo-c5-xlarge-0002|billing=2,cpu=2,mem=3500M,node=1|1800|2026-11-04T12:00:00|2026-11-04T12:30:00|CANCELLED by 1002',
  '204|alice|physics|compute|demo-t3a-medium-0001,old-node-0003|billing=4,cpu=4,mem=6G,node=2|2700|2026-11-05T09:00:00|Unknown|RUNNING',
  '205|dave|chemistry|compute|None assigned||0|Unknown|Unknown|PENDING',
].slice(1)

const nodeShapes = new Map([
  ...[1, 2, 3, 4].map((n): [string, string] => [`demo-c5-xlarge-000${n}`, 'c5.xlarge']),
  ['demo-g4dn-xlarge-0001', 'g4dn.xlarge'],
  ['demo-t3a-medium-0001', 't3a.medium'],
])
const prices = new Map([
  ['c5.xlarge', 0.17],
  ['g4dn.xlarge', 0.526],
])

function doc(by: UsageBy, priced = true) {
  const jobs = parseSacct(SACCT.join('\n') + '\n')
  const report = aggregateUsage(jobs, {by, since: T('2026-11-01T00:00:00'), until: T('2026-11-06T00:00:00'), now: T('2026-11-05T09:45:00'), nodeShapes, prices: priced ? prices : undefined})
  return usageDocument(report, {cluster: 'demo', currency: priced ? 'USD' : null})
}

describe('usageDocument', () => {
  it('is valid against the versioned schema, for every grouping', () => {
    for (const by of ['account', 'user', 'shape', 'day'] as const) {
      for (const priced of [true, false]) expect(usageDocumentSchema.safeParse(doc(by, priced)).success, `${by} ${priced}`).toBe(true)
    }
  })

  it('is the stable document a portal reads (file snapshot)', async () => {
    await expect(JSON.stringify(doc('account'), null, 2) + '\n').toMatchFileSnapshot('__snapshots__/usage-by-account.json')
  })

  it('is refused by the schema with another version or an unknown field', () => {
    const d = doc('account')
    expect(usageDocumentSchema.safeParse({...d, version: 2}).success).toBe(false)
    expect(usageDocumentSchema.safeParse({...d, extra: 1}).success).toBe(false)
    expect(usageDocumentSchema.safeParse({...d, rows: [{...d.rows[0], jobs: -1}]}).success).toBe(false)
  })
})

describe('renderUsageTable', () => {
  it('by account, with prices (file snapshot)', async () => {
    await expect(renderUsageTable(doc('account'), {barWidth: 20})).toMatchFileSnapshot('__snapshots__/usage-by-account.txt')
  })

  it('by day, without prices: the bars show CPU-hours (file snapshot)', async () => {
    await expect(renderUsageTable(doc('day', false), {barWidth: 16})).toMatchFileSnapshot('__snapshots__/usage-by-day.txt')
  })

  it('by shape, without a bar column (file snapshot)', async () => {
    await expect(renderUsageTable(doc('shape'), {barWidth: 0})).toMatchFileSnapshot('__snapshots__/usage-by-shape.txt')
  })

  it('says so when no job ran', () => {
    const empty = usageDocument(aggregateUsage([], {by: 'user', since: 0, until: 86_400, now: 86_400, nodeShapes}), {cluster: 'demo', currency: null})
    expect(renderUsageTable(empty, {barWidth: 20})).toBe('Usage of cluster demo, 1970-01-01 00:00 to 1970-01-02 00:00 UTC, by user\n\nNo jobs ran in this window.\n')
  })

  it('never writes a control character from a name to the terminal', () => {
    const d = doc('user')
    const evil = {...d, rows: [{...d.rows[0], key: 'x\u001b[2Jy'}]}
    expect(renderUsageTable(evil, {barWidth: 4})).not.toContain('\u001b')
  })
})

describe('renderUsageCsv', () => {
  it('by shape, with prices (file snapshot)', async () => {
    await expect(renderUsageCsv(doc('shape'))).toMatchFileSnapshot('__snapshots__/usage-by-shape.csv')
  })

  it('by user, without prices: no cost columns, CRLF line ends', () => {
    const csv = renderUsageCsv(doc('user', false))
    const lines = csv.split('\r\n')
    expect(lines[0]).toBe('user,jobs,running,cpu_seconds,cpu_hours,gpu_hours,mem_gb_hours,node_hours,node_hours:(unknown),node_hours:c5.xlarge,node_hours:g4dn.xlarge,node_hours:t3a.medium')
    expect(lines.at(-1)).toBe('')
    expect(lines.slice(1, -1).map((l) => l.split(',')[0])).toEqual(['alice', 'bob', 'carol'])
    expect(csv.replace(/\r\n/g, '')).not.toContain('\n')
  })

  it('is only a header line without jobs', () => {
    const empty = usageDocument(aggregateUsage([], {by: 'day', since: 0, until: 86_400, now: 86_400, nodeShapes}), {cluster: 'demo', currency: 'EUR'})
    expect(renderUsageCsv(empty)).toBe('day,jobs,running,cpu_seconds,cpu_hours,gpu_hours,mem_gb_hours,node_hours,cost_EUR,unpriced_node_hours\r\n')
  })
})

describe('csvField', () => {
  it('quotes as RFC 4180 says, and only when needed', () => {
    expect(csvField('physics')).toBe('physics')
    expect(csvField('a,b')).toBe('"a,b"')
    expect(csvField('say "hi"')).toBe('"say ""hi"""')
    expect(csvField('two\nlines')).toBe('"two\nlines"')
    expect(csvField('cr\r')).toBe('"cr\r"')
    expect(csvField('')).toBe('')
  })
})

describe('bar', () => {
  it('draws eighths of a cell, full at the maximum, never empty above 0', () => {
    expect(bar(10, 10, 4)).toBe('████')
    expect(bar(5, 10, 4)).toBe('██')
    expect(bar(1, 10, 4)).toBe('▍')
    expect(bar(3, 8, 2)).toBe('▊')
    expect(bar(0.0001, 10, 4)).toBe('▏')
    expect(bar(0, 10, 4)).toBe('')
    expect(bar(5, 0, 4)).toBe('')
    expect(bar(5, 10, 0)).toBe('')
  })
})

describe('formatNumber', () => {
  it('groups thousands and keeps the decimals asked for', () => {
    expect(formatNumber(1234567.891, 1)).toBe('1,234,567.9')
    expect(formatNumber(999.95, 1)).toBe('1,000.0')
    expect(formatNumber(12, 0)).toBe('12')
    expect(formatNumber(0, 2)).toBe('0.00')
  })
})
