import {describe, expect, it} from 'vitest'

import {procStat} from '../../src/lib/proc.js'

describe('procStat', () => {
  it("reads this process's parent, group and state from /proc", () => {
    const stat = procStat(process.pid)!
    expect(stat.ppid).toBe(process.ppid)
    expect(stat.pgrp).toBeGreaterThan(0)
    expect(stat.state).toBe('R')
    expect(stat.start).toBeGreaterThan(0)
  })

  it('is undefined for a process that does not exist', () => {
    expect(procStat(2 ** 22 + 1)).toBeUndefined() // above the kernel's largest pid (pid_max ≤ 2^22)
  })
})
