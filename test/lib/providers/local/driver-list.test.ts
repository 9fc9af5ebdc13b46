// The local driver as the watchdog sees it: list() is every node whose launcher (unshare) still runs,
// terminate() stops exactly those launchers — never a pid that is no longer the node's launcher.
import {spawn, type ChildProcess} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {localDriver} from '../../../../src/lib/providers/local/driver.js'
import {realContext} from '../../../../src/lib/providers/types.js'
import {pidAlive} from '../../../../src/lib/proc.js'
import {waitFor} from '../../../helpers/wait.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-local-list-'))
const runDir = join(dir, 'run')
mkdirSync(runDir)
const children: ChildProcess[] = []
afterAll(() => {
  for (const c of children) if (c.pid && pidAlive(c.pid)) process.kill(c.pid, 'SIGKILL')
  rmSync(dir, {recursive: true, force: true})
})

/** A node's launcher as the driver starts it (unshare --fork), running `sleep` instead of slurmd. */
function launcher(name: string): number {
  const c = spawn('/usr/bin/unshare', ['--fork', '--kill-child', '--', 'sleep', '60'], {stdio: 'ignore'})
  children.push(c)
  writeFileSync(join(runDir, `${name}.pid`), `${c.pid}\n`)
  return c.pid!
}

describe('local driver: list and terminate', () => {
  it('lists live launchers only, and terminates a listed one by its pid', async () => {
    const driver = localDriver({runDir, logDir: join(dir, 'log'), stopGraceS: 1})
    const a = launcher('demo-node-1')
    launcher('demo-node-2')
    writeFileSync(join(runDir, 'demo-node-3.pid'), '999999\n') // a dead one: not listed
    await waitFor('both launchers', () => [a].every(pidAlive), 5000)
    const listed = await driver.list()
    expect(listed.map((i) => [i.name, i.state]).sort()).toEqual([['demo-node-1', 'running'], ['demo-node-2', 'running']])
    expect(listed.find((i) => i.name === 'demo-node-1')!.id).toBe(String(a))
    const lines: string[] = []
    const out = await driver.terminate(listed.filter((i) => i.name === 'demo-node-1'), realContext((m) => void lines.push(m), 10_000))
    expect(out).toEqual([{name: 'demo-node-1', ok: true}])
    await waitFor('demo-node-1 gone', () => !pidAlive(a), 5000)
    expect((await driver.list()).map((i) => i.name)).toEqual(['demo-node-2'])
    // An id that is not the node's launcher (pid reused, or stale): nothing is signalled.
    const other = await driver.terminate([{id: '1', name: 'demo-node-2', state: 'running', launchedAt: 0}], realContext(() => {}, 1000))
    expect(other).toEqual([{name: 'demo-node-2', ok: true, instanceId: '1'}])
    expect((await driver.list()).map((i) => i.name)).toEqual(['demo-node-2'])
  })
})
