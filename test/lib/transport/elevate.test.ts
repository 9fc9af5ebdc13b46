// The root-through-a-prefix transport (sudo -n on cloud images) over a real sshd. This machine has no
// sudo, and the tests log in as root anyway: the prefix here is `env`, which runs the rest as it is —
// so what is tested is everything but sudo itself: the environment carried in argv (sudo would drop
// it), files staged by SFTP and moved into place by the elevated side, atomically, with their mode.
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, readdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {elevated, elevatedArgv, SUDO_PREFIX} from '../../../src/lib/transport/elevate.js'
import {connectSsh, generateEd25519KeyPair, publicKeyFingerprint, type SshTransport} from '../../../src/lib/transport/ssh/index.js'
import type {Transport} from '../../../src/lib/transport/types.js'
import {keygenFingerprint, startSshd, type SshdSandbox} from '../../helpers/sshd.js'

let sshd: SshdSandbox
let ssh: SshTransport
let root: Transport
const work = mkdtempSync(join(tmpdir(), 'citc-elevate-'))

beforeAll(async () => {
  sshd = await startSshd()
  ssh = await connectSsh({host: sshd.host, port: sshd.port, user: sshd.user, privateKey: sshd.clientKeyPath, hostKeyFingerprint: sshd.hostKeyFingerprint})
  root = elevated(ssh, ['env'])
})
afterAll(async () => {
  await ssh?.close()
  await sshd?.stop()
  rmSync(work, {recursive: true, force: true})
})

describe('elevatedArgv', () => {
  it('puts the prefix first and the environment in argv', () => {
    expect(elevatedArgv(SUDO_PREFIX, ['ansible-playbook', 'x.yml'], {A: '1', B: 'two words'})).toEqual(['sudo', '-n', 'env', 'A=1', 'B=two words', 'ansible-playbook', 'x.yml'])
    expect(elevatedArgv(SUDO_PREFIX, ['id'])).toEqual(['sudo', '-n', 'id'])
    expect(() => elevatedArgv(SUDO_PREFIX, ['id'], {'A;rm': '1'})).toThrow(/invalid environment variable name/)
    // env would read a first word with "=" as one more variable, and run something else.
    expect(() => elevatedArgv(SUDO_PREFIX, ['X=1', 'id'], {A: '1'})).toThrow(/argv\[0\] cannot contain "="/)
    expect(elevatedArgv(SUDO_PREFIX, ['X=1'])).toEqual(['sudo', '-n', 'X=1'])
  })

  it('is the transport itself with an empty prefix (the login user is root)', () => {
    expect(elevated(ssh, [])).toBe(ssh)
  })
})

describe('elevated over SSH', () => {
  it('runs commands with their environment, says so in its description', async () => {
    const r = await root.run(['sh', '-c', 'echo "$GREETING"'], {env: {GREETING: "it's $HOME; ok"}})
    expect(r).toMatchObject({exitCode: 0, stdout: "it's $HOME; ok\n"})
    expect(root.description).toBe(`${ssh.description} (env)`)
    await expect(root.check(['false'])).rejects.toThrow(/exit 1/)
  })

  it('writes a file atomically with its mode, keeps the old mode without one, and leaves no temp file', async () => {
    const file = join(work, 'conf')
    await root.writeFile(file, 'one\n', {mode: 0o640})
    expect(readFileSync(file, 'utf8')).toBe('one\n')
    expect(statSync(file).mode & 0o777).toBe(0o640)
    await root.writeFile(file, 'two\n')
    expect(readFileSync(file, 'utf8')).toBe('two\n')
    expect(statSync(file).mode & 0o777).toBe(0o640)
    expect(readdirSync(work).filter((f) => f.startsWith('conf') || f.startsWith('.conf'))).toEqual(['conf'])
  })

  it('removes the login user\'s staging directory, also when the move fails', async () => {
    const staged: string[] = []
    const spy: Transport = {
      ...ssh,
      run: async (argv, opts) => {
        const r = await ssh.run(argv, opts)
        if (argv[0] === 'mktemp') staged.push(r.stdout.trim())
        return r
      },
    }
    const t = elevated(spy, ['env'])
    await t.writeFile(join(work, 'staged'), 'x')
    await expect(t.writeFile(join(work, 'no-such-dir', 'f'), 'x')).rejects.toThrow(/command failed/)
    expect(staged).toHaveLength(2)
    for (const d of staged) expect(existsSync(d), d).toBe(false)
  })

  it('reads a file, and says undefined for one that does not exist', async () => {
    writeFileSync(join(work, 'r'), 'content\nwith lines\n')
    expect((await root.readFile(join(work, 'r')))?.toString()).toBe('content\nwith lines\n')
    expect(await root.readFile(join(work, 'absent'))).toBeUndefined()
  })
})

describe('generated keys', () => {
  it('ed25519 pairs whose fingerprint is the one ssh-keygen prints', () => {
    const k = generateEd25519KeyPair('citc-test')
    expect(k.privateKey).toMatch(/^-----BEGIN OPENSSH PRIVATE KEY-----\n/)
    expect(k.publicKey).toMatch(/^ssh-ed25519 AAAA\S+ citc-test$/)
    writeFileSync(join(work, 'k.pub'), `${k.publicKey}\n`)
    expect(k.fingerprint).toBe(keygenFingerprint(join(work, 'k.pub')))
    expect(publicKeyFingerprint(k.publicKey)).toBe(k.fingerprint)
    rmSync(join(work, 'k.pub'))
  })
})
