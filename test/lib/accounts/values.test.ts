import {describe, expect, it} from 'vitest'

import {formatMinutes, formatTresList, parseMinutes, parseTresAmount, parseTresList} from '../../../src/lib/accounts/values.js'

describe('MaxWall durations', () => {
  it('reads every Slurm form as whole minutes', () => {
    const cases: [unknown, number][] = [
      [90, 90],
      ['90', 90],
      ['90:00', 90],
      ['48:00:00', 2880],
      ['2-00:00:00', 2880],
      ['1-12', 2160],
      ['1-12:30', 2190],
      ['100-00:00:00', 144000],
    ]
    for (const [input, minutes] of cases) expect(parseMinutes(input), String(input)).toBe(minutes)
  })

  it('refuses what Slurm would round or misread', () => {
    for (const input of ['90:30', '1:00:01', '0', 0, -5, 1.5, '1-24', '1-123:00', '12:60:00', '2 days', '', 'UNLIMITED', null, [1]]) {
      expect(parseMinutes(input), String(input)).toEqual({error: expect.any(String)})
    }
  })

  it('prints minutes as sacctmgr does (01:31:00, 2-00:00:00)', () => {
    expect(formatMinutes(91)).toBe('01:31:00')
    expect(formatMinutes(2880)).toBe('2-00:00:00')
    expect(formatMinutes(144000)).toBe('100-00:00:00')
    expect(formatMinutes(1439)).toBe('23:59:00')
  })

  it('round-trips: parse(format(m)) = m', () => {
    for (const m of [1, 59, 60, 61, 1439, 1440, 1441, 2880, 10_000, 144_000]) expect(parseMinutes(formatMinutes(m))).toBe(m)
  })
})

describe('TRES lists', () => {
  it('reads what slurmdbd 22.05 printed, memory with its units in MB', () => {
    expect(parseTresList('billing=7,cpu=6000,mem=100000M,node=50')).toEqual({billing: 7, cpu: 6000, mem: 100000, node: 50})
    expect(parseTresList('energy=5,mem=1G')).toEqual({energy: 5, mem: 1024})
    expect(parseTresList('cpu=1,mem=2000G')).toEqual({cpu: 1, mem: 2048000})
    expect(parseTresList('cpu=300000,mem=585937.50G')).toEqual({cpu: 300000, mem: 600000000})
    expect(parseTresList('mem=3T,gres/gpu=2,gres/gpu:a100=1')).toEqual({mem: 3 * 1024 * 1024, 'gres/gpu': 2, 'gres/gpu:a100': 1})
    expect(parseTresList('')).toEqual({})
  })

  it('refuses what it cannot read exactly', () => {
    for (const text of ['cpu', 'cpu=', '=1', 'cpu=1G', 'cpu=1.5', 'mem=1.3G', 'mem=-1', 'cpu=1,,mem=2']) expect(parseTresList(text), text).toBeUndefined()
  })

  it('reads a user amount for memory with a unit', () => {
    expect(parseTresAmount('mem', '16G')).toBe(16384)
    expect(parseTresAmount('mem', '1.5G')).toBe(1536)
    expect(parseTresAmount('cpu', '16G')).toBeUndefined()
  })

  it('writes amounts sorted by name, as sacctmgr reads them', () => {
    expect(formatTresList({mem: 100, cpu: 6000, 'gres/gpu': -1})).toBe('cpu=6000,gres/gpu=-1,mem=100')
  })
})
