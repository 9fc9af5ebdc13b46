// citc cluster add on a real terminal: the management node's host key is shown and must be
// confirmed by the person; "no" registers nothing, "yes" pins exactly the key shown.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'
import {runOnPty} from '../helpers/pty.js'
import {type SshdSandbox, startSshd} from '../helpers/sshd.js'

const data = mkdtempSync(join(tmpdir(), 'citc-add-tty-'))
let sshd: SshdSandbox

beforeAll(async () => {
  sshd = await startSshd()
  writeFileSync(join(sshd.dir, 'slurm.conf'), 'ClusterName=tty\n')
})
afterAll(async () => {
  await sshd?.stop()
  rmSync(data, {recursive: true, force: true})
})

const add = (answer: string) =>
  runOnPty(
    [
      process.execPath, join(ROOT, 'bin', 'run.js'), 'cluster', 'add', 'tty', '--host', '127.0.0.1', '--port', String(sshd.port),
      '--user', sshd.user, '--key', sshd.clientKeyPath, '--provider', 'aws', '--conf-path', join(sshd.dir, 'slurm.conf'),
    ],
    [{expect: String.raw`\(y/N\)`, send: answer}],
    {env: {CITC_DATA_DIR: data, CI: '', NODE_ENV: 'production', TERM: 'xterm'}, timeoutS: 60, cwd: ROOT},
  )

describe('cluster add on a terminal', () => {
  it('shows the host key fingerprint; "no" registers nothing', () => {
    const r = add('n\r')
    expect(r.output).toContain(sshd.hostKeyFingerprint)
    expect(r.code).toBe(130)
    expect(() => readFileSync(join(data, 'clusters', 'tty', 'cluster.yaml'))).toThrow()
  }, 90_000)

  it('"yes" pins the key that was shown', () => {
    const r = add('y\r')
    expect(r.code, r.output).toBe(0)
    expect(readFileSync(join(data, 'clusters', 'tty', 'cluster.yaml'), 'utf8')).toContain(sshd.hostKeyFingerprint)
  }, 90_000)
})
