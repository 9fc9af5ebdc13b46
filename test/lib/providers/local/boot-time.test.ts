// A local node's slurmd must report a boot time no earlier than the second of its power-up request, or
// slurmctld ignores its registration and the job waits until ResumeTimeout fails it (driver.ts
// msToNextSecond). slurmd -b reports its own start as the boot; the driver starts it in a later second.
import {chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import fc from 'fast-check'
import {afterAll, describe, expect, it} from 'vitest'

import {localDriver, msToNextSecond} from '../../../../src/lib/providers/local/driver.js'
import {realContext} from '../../../../src/lib/providers/types.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-boot-time-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

/** slurmctld's check, in whole seconds: boot = now − uptime (slurmd -b: ceil'd since its start) ≥ request. */
const accepted = (requestMs: number, slurmdStartMs: number, registerMs: number) => {
  const up = Math.ceil(registerMs / 1000) - Math.ceil(slurmdStartMs / 1000) // sysinfo's uptime rounds up
  return Math.floor(registerMs / 1000) - up >= Math.floor(requestMs / 1000)
}

describe('a local node boots after its power-up request', () => {
  it('starts slurmd in a later second than the request, so slurmctld takes its registration', () => {
    fc.assert(
      fc.property(fc.integer({min: 0, max: 10_000_000}), fc.integer({min: 0, max: 3000}), fc.integer({min: 0, max: 5000}), (request, programStart, registration) => {
        const now = request + programStart // the driver runs after the request
        const start = now + msToNextSecond(now)
        expect(msToNextSecond(now)).toBeLessThanOrEqual(1050)
        expect(accepted(request, start, start + registration)).toBe(true)
      }),
      {numRuns: 2000},
    )
    // What it replaced: slurmd 1.1 s after the request, its uptime from a time namespace whose offset
    // is whole seconds (so up to 1 s old at the start), rounded up. With CI's numbers (request at
    // 03:00:43.346, namespace 0.9 s into its first second, registration at 44.592: "Uptime=2") the
    // boot looked like 03:00:42, before the request: refused, and the job waited out ResumeTimeout.
    const oldAccepted = (requestMs: number, uptimeAtStart: number, registerMs: number) => {
      const up = Math.ceil((registerMs - (requestMs + 1100)) / 1000 + uptimeAtStart)
      return Math.floor(registerMs / 1000) - up >= Math.floor(requestMs / 1000)
    }
    expect(oldAccepted(43_346, 0.9, 44_592)).toBe(false)
  })

  it('runs slurmd with -b (its uptime from its own start)', async () => {
    const args = join(dir, 'unshare.args')
    const unshare = join(dir, 'unshare')
    writeFileSync(unshare, `#!/bin/sh\nprintf '%s ' "$@" > ${args}\n`)
    chmodSync(unshare, 0o755)
    const driver = localDriver({unshare, imagesDir: join(dir, 'no-images'), runDir: join(dir, 'run'), logDir: join(dir, 'log'), slurmdPidFile: join(dir, 'slurmd-%n.pid')})
    const [outcome] = await driver.resume([{name: 'boot-node-1', shape: 'local.small'}], realContext(() => undefined, 1000))
    expect(outcome.ok).toBe(false) // the stand-in unshare starts nothing
    expect(readFileSync(args, 'utf8')).toMatch(/ -D -b -N "\$1" -f "\$3" citc-node boot-node-1 /)
  })
})
