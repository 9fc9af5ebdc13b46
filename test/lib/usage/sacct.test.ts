import {describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {parseAllocTres, parseMemMB, parseSacct, parseSacctTime, sacctArgv, sacctTime} from '../../../src/lib/usage/sacct.js'

const T = (iso: string) => Date.parse(iso + 'Z') / 1000

describe('sacctArgv', () => {
  it('asks for every user’s allocations in the window, in UTC, in a parsable format', () => {
    expect(sacctArgv({since: T('2026-11-01T00:00:00'), until: T('2026-11-23T17:38:06')})).toEqual([
      'env',
      'TZ=UTC',
      'sacct',
      '--allusers',
      '--allocations',
      '--parsable2',
      '--noheader',
      '--starttime=2026-11-01T00:00:00',
      '--endtime=2026-11-23T17:38:06',
      '--format=JobID,User,Account,Partition,NodeList,AllocTRES,ElapsedRaw,Start,End,State',
    ])
  })

  it('passes the cluster’s slurm.conf like sacctmgr gets it', () => {
    const argv = sacctArgv({since: 0, until: 60}, {confPath: '/etc/slurm/citc/slurm.conf'})
    expect(argv.slice(0, 4)).toEqual(['env', 'TZ=UTC', 'SLURM_CONF=/etc/slurm/citc/slurm.conf', 'sacct'])
  })

  it('refuses an empty or fractional window', () => {
    expect(() => sacctArgv({since: 60, until: 60})).toThrow(RangeError)
    expect(() => sacctArgv({since: 0.5, until: 60})).toThrow(RangeError)
  })

  it('writes and reads the same time', () => {
    const t = T('2026-02-28T23:59:59')
    expect(sacctTime(t)).toBe('2026-02-28T23:59:59')
    expect(parseSacctTime(sacctTime(t))).toBe(t)
  })
})

describe('parseSacctTime', () => {
  it('reads UTC times and nothing else', () => {
    expect(parseSacctTime('1970-01-01T00:01:00')).toBe(60)
    expect(parseSacctTime('2028-02-29T23:59:59')).toBe(Date.UTC(2028, 1, 29, 23, 59, 59) / 1000)
    const bad = ['Unknown', 'None', '', '2026-11-01 00:00:00', '2026-11-01T00:00', '2026-1a-01T00:00:00', '2026-11-01T00:00:00Z']
    // Dates and times that do not exist, which Date.UTC would roll over.
    bad.push('2026-02-29T00:00:00', '2026-04-31T00:00:00', '2026-13-01T00:00:00', '2026-00-10T00:00:00', '2026-11-00T00:00:00')
    bad.push('2026-11-01T24:00:00', '2026-11-01T00:60:00', '2026-11-01T00:00:60', '2026-11-01T0x:00:00')
    for (const text of bad) {
      expect(parseSacctTime(text), text).toBeUndefined()
    }
  })
})

describe('parseMemMB', () => {
  it('reads Slurm’s units as powers of 1024 MiB', () => {
    expect(parseMemMB('7G')).toBe(7168)
    expect(parseMemMB('7500M')).toBe(7500)
    expect(parseMemMB('512K')).toBe(0.5)
    expect(parseMemMB('2T')).toBe(2 * 1024 * 1024)
    expect(parseMemMB('1.50T')).toBe(1.5 * 1024 * 1024)
    expect(parseMemMB('1P')).toBe(1024 ** 3)
    expect(parseMemMB('0')).toBe(0)
    expect(parseMemMB('100')).toBe(100)
  })

  it('refuses what is not a size', () => {
    for (const bad of ['', 'G', '7g', '7GB', '-1M', '7 G']) expect(parseMemMB(bad), bad).toBeUndefined()
  })
})

describe('parseAllocTres', () => {
  it('reads the documented example', () => {
    expect(parseAllocTres('billing=4,cpu=4,gres/gpu=1,mem=7G,node=1')).toEqual({cpus: 4, gpus: 1, memMB: 7168, nodes: 1})
  })

  it('uses the untyped GPU total and never adds the typed ones to it', () => {
    expect(parseAllocTres('cpu=8,gres/gpu:a100=2,gres/gpu=2,mem=16G,node=1')).toMatchObject({gpus: 2})
    expect(parseAllocTres('cpu=8,gres/gpu:a100=2,gres/gpu:t4=1,mem=16G,node=2')).toMatchObject({gpus: 3})
  })

  it('ignores the other TRES and defaults what is missing to 0', () => {
    expect(parseAllocTres('billing=2,energy=1234,fs/disk=99,license/matlab=1,gres/gpumem=16384,cpu=2')).toEqual({cpus: 2, gpus: 0, memMB: 0, nodes: 0})
    expect(parseAllocTres('')).toEqual({cpus: 0, gpus: 0, memMB: 0, nodes: 0})
  })

  it('says what is wrong with a bad item', () => {
    expect(parseAllocTres('cpu=4,mem=lots')).toEqual({error: 'mem=lots is not a memory size'})
    expect(parseAllocTres('cpu=four')).toEqual({error: 'cpu=four is not a count'})
    expect(parseAllocTres('cpu')).toEqual({error: '"cpu" is not name=value'})
  })
})

const line = (...fields: string[]) => fields.join('|')

describe('parseSacct', () => {
  it('reads finished, running and cancelled jobs; skips pending ones, never-allocated ones and steps', () => {
    const text = [
      line('101', 'alice', 'physics', 'compute', 'demo-c5-xlarge-[0001-0002]', 'billing=8,cpu=8,mem=14G,node=2', '3600', '2026-11-20T10:00:00', '2026-11-20T11:00:00', 'COMPLETED'),
      line('102_3', 'bob', 'physics-lab', 'gpu', 'demo-g4dn-xlarge-0001', 'cpu=4,gres/gpu=1,mem=15000M,node=1', '120', '2026-11-23T17:36:06', 'Unknown', 'RUNNING'),
      line('103', 'alice', 'physics', 'compute', 'demo-c5-xlarge-0001', 'cpu=1,mem=1G,node=1', '5', '2026-11-21T00:00:00', '2026-11-21T00:00:05', 'CANCELLED by 1000'),
      line('104', 'carol', 'physics', 'compute', 'None assigned', '', '0', 'Unknown', 'Unknown', 'PENDING'),
      line('105', 'carol', 'physics', 'compute', 'None assigned', '', '0', '2026-11-21T00:00:00', '2026-11-21T00:00:00', 'CANCELLED by 1001'),
      line('101.batch', '', 'physics', '', 'demo-c5-xlarge-0001', 'cpu=4,mem=7G,node=1', '3600', '2026-11-20T10:00:00', '2026-11-20T11:00:00', 'COMPLETED'),
      '',
    ].join('\n')
    expect(parseSacct(text)).toEqual([
      {
        jobId: '101',
        user: 'alice',
        account: 'physics',
        partition: 'compute',
        nodeList: 'demo-c5-xlarge-[0001-0002]',
        cpus: 8,
        gpus: 0,
        memMB: 14336,
        nodes: 2,
        elapsedSeconds: 3600,
        start: T('2026-11-20T10:00:00'),
        end: T('2026-11-20T11:00:00'),
        state: 'COMPLETED',
      },
      {
        jobId: '102_3',
        user: 'bob',
        account: 'physics-lab',
        partition: 'gpu',
        nodeList: 'demo-g4dn-xlarge-0001',
        cpus: 4,
        gpus: 1,
        memMB: 15000,
        nodes: 1,
        elapsedSeconds: 120,
        start: T('2026-11-23T17:36:06'),
        state: 'RUNNING',
      },
      {
        jobId: '103',
        user: 'alice',
        account: 'physics',
        partition: 'compute',
        nodeList: 'demo-c5-xlarge-0001',
        cpus: 1,
        gpus: 0,
        memMB: 1024,
        nodes: 1,
        elapsedSeconds: 5,
        start: T('2026-11-21T00:00:00'),
        end: T('2026-11-21T00:00:05'),
        state: 'CANCELLED',
      },
    ])
  })

  it('is empty for no output, and reads CRLF lines', () => {
    expect(parseSacct('')).toEqual([])
    expect(parseSacct('\n\n')).toEqual([])
    const crlf = line('1', 'a', 'b', 'p', 'n1', 'cpu=1,node=1', '1', '2026-11-20T10:00:00', '2026-11-20T10:00:01', 'COMPLETED') + '\r\n'
    expect(parseSacct(crlf).map((j) => j.state)).toEqual(['COMPLETED'])
  })

  it('refuses output that is not this format, naming the line', () => {
    const good = line('1', 'a', 'b', 'p', 'n1', 'cpu=1,node=1', '1', '2026-11-20T10:00:00', '2026-11-20T10:00:01', 'COMPLETED')
    const cases: [string, RegExp][] = [
      ['JobID|User|Account', /line 2: 3 fields, expected 10/],
      [line('1', 'a', 'b', 'p', 'n1', 'cpu=1', 'x', '2026-11-20T10:00:00', 'Unknown', 'RUNNING'), /line 2: ElapsedRaw "x"/],
      [line('1', 'a', 'b', 'p', 'n1', 'cpu=1', '1', '20/11/2026', 'Unknown', 'RUNNING'), /line 2: Start "20\/11\/2026" is not a time/],
      [line('1', 'a', 'b', 'p', 'n1', 'cpu=1', '1', '2026-11-20T10:00:00', 'soon', 'RUNNING'), /line 2: End "soon"/],
      [line('1', 'a', 'b', 'p', 'n1', 'cpu=1,mem=7Q', '1', '2026-11-20T10:00:00', 'Unknown', 'RUNNING'), /line 2: AllocTRES: mem=7Q/],
    ]
    for (const [bad, message] of cases) {
      let error: unknown
      try {
        parseSacct(`${good}\n${bad}\n`)
      } catch (e) {
        error = e
      }
      expect(error, bad).toBeInstanceOf(CitcError)
      expect((error as CitcError).kind).toBe('remote')
      expect((error as CitcError).message).toMatch(message)
    }
  })
})
