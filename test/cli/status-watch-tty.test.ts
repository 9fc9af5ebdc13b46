// `citc status --watch` on a real pseudo-terminal: the first frame hides the cursor, each later one
// goes back up over the last and overwrites it (no full-screen clear), and Ctrl-C typed on the terminal
// ends it with exit 0 and the cursor shown again. A local cluster whose controller is on a closed port.
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ANSI} from '../../src/lib/tasks/status/watch-screen.js'
import {runOnPty} from '../helpers/pty.js'
import {cliSandbox, localClusterWithoutController, ROOT} from './support.js'

const sandbox = cliSandbox('status-watch-tty')
beforeAll(() => void localClusterWithoutController(sandbox.dataDir, 'lab'))
afterAll(() => sandbox.cleanup())

const count = (s: string, part: string) => s.split(part).length - 1

describe('citc status --watch on a terminal', () => {
  it('redraws in place, then Ctrl-C ends it with exit 0 and the cursor back', () => {
    const {code, output} = runOnPty(
      [process.execPath, join(ROOT, 'bin', 'run.js'), 'status', '--watch', '--interval', '5'],
      // Two frames drawn (the second after going back up), then Ctrl-C.
      [{expect: String.raw`Every 5 s: citc status -c lab[\s\S]*\(no nodes\)[\s\S]*\x1b\[\d+A[\s\S]*\(no nodes\)`, send: '\x03'}],
      {env: {CITC_DATA_DIR: sandbox.dataDir, CITC_CLUSTER: '', CI: '', NODE_ENV: 'production', TERM: 'xterm'}, timeoutS: 40, cwd: ROOT},
    )
    expect(code, output).toBe(0)
    expect(output.startsWith(ANSI.beginSync + ANSI.hideCursor), JSON.stringify(output.slice(0, 40))).toBe(true)
    expect(count(output, 'Every 5 s: citc status -c lab')).toBe(2)
    // Header, Cluster, Controller, Nodes, blank, "(no nodes)": 6 lines to climb over.
    expect(count(output, `\r${ANSI.up(6)}`)).toBe(1)
    expect(output).not.toContain(ANSI.clearScreen)
    expect(output).not.toMatch(/^=== /m)
    expect(output.endsWith(ANSI.showCursor), JSON.stringify(output.slice(-40))).toBe(true)
  })
})
