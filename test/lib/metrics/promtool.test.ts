// citc.prom as Prometheus's own linter reads it: `promtool check metrics` (Debian's prometheus package).
import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'

import {type CommandResult, collectCycle} from '../../../src/lib/metrics/cycle.js'
import {capturedAt, scontrolNodes, sdiagReport, squeueJobs} from './fixtures.js'

const ok = (stdout: string): CommandResult => ({ok: true, stdout, seconds: 0.02})
const down: CommandResult = {ok: false, error: 'Unable to contact slurm controller', seconds: 20}

function promtool(text: string): {status: number | null; output: string} {
  const r = spawnSync('promtool', ['check', 'metrics'], {input: text, encoding: 'utf8', timeout: 20_000})
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new Error('promtool is not installed: install Debian\'s prometheus package (apt-get install prometheus), which CI needs for this test')
  }
  return {status: r.status, output: `${r.stdout}${r.stderr}`}
}

describe('promtool check metrics', () => {
  const good = collectCycle({now: capturedAt + 60, results: {scontrol: ok(scontrolNodes), squeue: ok(squeueJobs), sdiag: ok(sdiagReport)}})

  it('accepts a collection from real Slurm 22.05 outputs without a complaint', () => {
    expect(promtool(good.text)).toEqual({status: 0, output: ''})
  })

  it('accepts the file written when slurmctld does not answer', () => {
    const failed = collectCycle({now: capturedAt + 90, previous: good.text, results: {scontrol: down, squeue: down, sdiag: down}})
    expect(promtool(failed.text)).toEqual({status: 0, output: ''})
    expect(promtool(collectCycle({now: capturedAt, results: {scontrol: down, squeue: down, sdiag: down}}).text)).toEqual({status: 0, output: ''})
  })

  it('is a check that can fail (a counter without _total)', () => {
    expect(promtool('# HELP citc_x x\n# TYPE citc_x counter\ncitc_x 1\n').status).not.toBe(0)
  })
})
