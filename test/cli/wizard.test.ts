// citc create's wizard on a real terminal: every question asked in order, and a "no" at the end
// changes nothing (exit 130). Takes the machine lock: the pre-flight looks at this machine's Slurm.
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'
import {runOnPty} from '../helpers/pty.js'
import {lockSystem} from '../helpers/system-lock.js'

const data = mkdtempSync(join(tmpdir(), 'citc-wizard-'))
let release: (() => void) | undefined

beforeAll(async () => {
  const lock = await lockSystem('wizard test')
  release = () => lock.release()
}, 60 * 60_000)

afterAll(() => {
  release?.()
  rmSync(data, {recursive: true, force: true})
})

describe('citc create on a terminal', () => {
  it('asks provider, name and node counts, then confirms; "no" changes nothing', () => {
    const {code, output} = runOnPty(
      [process.execPath, join(ROOT, 'bin', 'run.js'), 'create'],
      [
        {expect: 'Where should the cluster run', send: '\r'},
        {expect: 'Cluster name', send: '\x15wizard-test\r'},
        {expect: 'How many local.small nodes', send: '\x7f\x7f3\r'},
        {expect: 'How many local.medium nodes', send: '\r'},
        {expect: 'How many local.large nodes', send: '\r'},
        {expect: 'Create local cluster wizard-test on this machine\\?', send: 'n\r'},
      ],
      {env: {CITC_DATA_DIR: data, CI: '', NODE_ENV: 'production', TERM: 'xterm'}, timeoutS: 90, cwd: ROOT},
    )
    expect(output).toMatch(/becomes the management node of cluster wizard-test/)
    expect(code).toBe(130)
    expect(output).toMatch(/nothing was changed/)
    expect(existsSync(join(data, 'clusters', 'wizard-test'))).toBe(false)
  }, 120_000)
})
