// The SSH transport against a real OpenSSH sshd on loopback (test/helpers/sshd.ts). sshd runs on this
// machine, so the test checks remote effects directly on the local filesystem.
import {execFileSync} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createServer, connect, type Server, type Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {pidAlive, sleep} from '../../../../src/lib/proc.js'
import {waitFor} from '../../../helpers/wait.js'

import {CitcError, HostKeyMismatchError, InvalidInputError} from '../../../../src/lib/errors.js'
import {takePidLine} from '../../../../src/lib/transport/ssh/exec.js'
import {connectSsh, fetchHostKeyFingerprint, fetchPinnedHostKey, generateEd25519KeyPair, parseSshPublicKey, sshFingerprint, type SshTransport} from '../../../../src/lib/transport/ssh/index.js'
import {NASTY} from '../../../helpers/nasty.js'
import {freePort} from '../../../helpers/slurm.js'
import {keygenFingerprint, startSshd, type SshdSandbox} from '../../../helpers/sshd.js'

let sshd: SshdSandbox
let t: SshTransport
let work: string
let n = 0
const sub = () => {
  const d = join(work, String(++n))
  mkdirSync(d)
  return d
}

const connectOpts = () => ({
  host: sshd.host,
  port: sshd.port,
  user: sshd.user,
  privateKey: sshd.clientKeyPath,
  hostKeyFingerprint: sshd.hostKeyFingerprint,
  readyTimeoutMs: 10_000,
})



const caught = (p: Promise<unknown>) => p.then(
  () => {
    throw new Error('expected a rejection')
  },
  (e: unknown) => e as CitcError,
)

beforeAll(async () => {
  sshd = await startSshd()
  work = join(sshd.dir, 'work')
  mkdirSync(work)
  t = await connectSsh(connectOpts())
})

afterAll(async () => {
  await t?.close()
  await sshd?.stop()
})

describe('the sshd harness', () => {
  it('ssh-keygen -lf prints the SHA-256 of the raw key, base64 without padding', () => {
    const blob = Buffer.from(readFileSync(`${sshd.hostKeyPath}.pub`, 'utf8').split(' ')[1], 'base64')
    const ours = `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`
    expect(sshd.hostKeyFingerprint).toBe(keygenFingerprint(`${sshd.hostKeyPath}.pub`))
    expect(ours).toBe(sshd.hostKeyFingerprint)
    expect(sshFingerprint(blob)).toBe(sshd.hostKeyFingerprint)
    expect(sshd.hostKeyFingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/)
  })
})

describe('takePidLine', () => {
  it('finds the PID line first or after other output, and removes only it', () => {
    expect(takePidLine(Buffer.from('citc-pid:42\nerr'))).toEqual({pid: 42, rest: Buffer.from('err')})
    expect(takePidLine(Buffer.from('bashrc says hi\nünï\ncitc-pid:7\nerr\ncitc-pid:8\n'))).toEqual({
      pid: 7,
      rest: Buffer.from('bashrc says hi\nünï\nerr\ncitc-pid:8\n'),
    })
    expect(takePidLine(Buffer.from('citc-pid:4'))).toBeUndefined() // incomplete: wait for more
    expect(takePidLine(Buffer.from('xcitc-pid:4\n'))).toBeUndefined() // not at a line start
  })
})

describe('fetchHostKeyFingerprint', () => {
  it('returns what ssh-keygen prints for the host key, without logging in', async () => {
    const logBefore = sshd.log().length
    const seen = await fetchHostKeyFingerprint({host: sshd.host, port: sshd.port, timeoutMs: 10_000})
    expect(seen).toEqual({fingerprint: keygenFingerprint(`${sshd.hostKeyPath}.pub`), algorithm: 'ssh-ed25519'})
    await sleep(200)
    expect(sshd.log().slice(logBefore)).not.toMatch(/Accepted/)
  })

  it('says clearly when nothing listens', async () => {
    const port = await freePort()
    const error = await caught(fetchHostKeyFingerprint({host: '127.0.0.1', port, timeoutMs: 5000}))
    expect(error.kind).toBe('remote')
    expect(error.message).toMatch(/connection refused/)
  })
})

describe('fetchPinnedHostKey', () => {
  it('returns the host key as a known_hosts line wants it when it is the pinned one, and refuses any other', async () => {
    const line = await fetchPinnedHostKey({host: sshd.host, port: sshd.port, hostKeyFingerprint: sshd.hostKeyFingerprint, timeoutMs: 10_000})
    expect(line).toBe(readFileSync(`${sshd.hostKeyPath}.pub`, 'utf8').split(' ').slice(0, 2).join(' '))
    const wrong = sshFingerprint(Buffer.from('not the host key'))
    const error = await caught(fetchPinnedHostKey({host: sshd.host, port: sshd.port, hostKeyFingerprint: wrong, timeoutMs: 10_000}))
    expect(error).toBeInstanceOf(HostKeyMismatchError)
    expect(error.details).toEqual({expectedFingerprint: wrong, receivedFingerprint: sshd.hostKeyFingerprint, algorithm: 'ssh-ed25519'})
  })
})

describe('connectSsh refuses', () => {
  it('a host key that does not match the pinned one, before logging in', async () => {
    const wrong = sshFingerprint(Buffer.from('not the host key'))
    const logBefore = sshd.log().length
    const error = await caught(connectSsh({...connectOpts(), hostKeyFingerprint: wrong}))
    expect(error).toBeInstanceOf(HostKeyMismatchError)
    expect(error.kind).toBe('remote')
    expect(error.message).toContain(`the host key of 127.0.0.1:${sshd.port} does not match the pinned key (it changed)`)
    expect(error.message).toContain(`expected ${wrong}`)
    expect(error.message).toContain(`received ${sshd.hostKeyFingerprint} (ssh-ed25519)`)
    expect(error.hint).toMatch(/ssh-keygen -lf .*intercepting/)
    expect(error.details).toMatchObject({expectedFingerprint: wrong, receivedFingerprint: sshd.hostKeyFingerprint})
    // No session was ever authenticated, so nothing could have run.
    await sleep(200)
    expect(sshd.log().slice(logBefore)).not.toMatch(/Accepted/)
  })

  it('a fingerprint that is not one', async () => {
    await expect(connectSsh({...connectOpts(), hostKeyFingerprint: 'MD5:aa:bb'})).rejects.toBeInstanceOf(InvalidInputError)
  })

  it('a key the server does not know, with a hint to check the key', async () => {
    const other = join(sshd.dir, 'other_key')
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', other])
    const error = await caught(connectSsh({...connectOpts(), privateKey: readFileSync(other)}))
    expect(error.kind).toBe('remote')
    expect(error.message).toBe(`SSH authentication failed for ${sshd.user}@127.0.0.1:${sshd.port}`)
    expect(error.hint).toMatch(/check the key/)
  })

  it('a key protected by a passphrase, as invalid input', async () => {
    const locked = join(sshd.dir, 'locked_key')
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'passphrase', '-f', locked])
    const error = await caught(connectSsh({...connectOpts(), privateKey: locked}))
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(error.message).toMatch(/locked_key: .*passphrase/)
  })

  it('a port where nothing listens', async () => {
    const error = await caught(connectSsh({...connectOpts(), port: await freePort()}))
    expect(error.message).toMatch(/connection refused/)
  })

  it('an unreadable key file', async () => {
    await expect(connectSsh({...connectOpts(), privateKey: join(sshd.dir, 'no-such-key')})).rejects.toBeInstanceOf(InvalidInputError)
  })

  it('when cancelled', async () => {
    const error = await caught(connectSsh({...connectOpts(), signal: AbortSignal.abort()}))
    expect(error.kind).toBe('cancelled')
  })
})

describe('run', () => {
  it('describes the connection', () => {
    expect(t.description).toBe(`${sshd.user}@127.0.0.1:${sshd.port}`)
  })

  it('passes argv with shell metacharacters literally', async () => {
    const marker = join(work, 'pwned')
    const words = [...NASTY, `; touch ${marker}`, `$(touch ${marker})`, `\`touch ${marker}\``]
    const r = await t.run(['printf', '%s\\0', ...words])
    expect(r.exitCode).toBe(0)
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(words)
    expect(existsSync(marker)).toBe(false)
  })

  it('delivers stdin, text or binary, then EOF', async () => {
    expect((await t.run(['cat'], {stdin: 'secret\nline 2'})).stdout).toBe('secret\nline 2')
    const data = randomBytes(3 << 20)
    const r = await t.run(['sha256sum'], {stdin: data})
    expect(r.stdout.split(' ')[0]).toBe(createHash('sha256').update(data).digest('hex'))
    expect((await t.run(['cat'])).stdout).toBe('') // no stdin: EOF at once, no hang
  })

  it('passes env (quoted)', async () => {
    const r = await t.run(['sh', '-c', 'printf "%s|%s" "$A" "$B"'], {env: {A: "x'$(id)", B: ''}})
    expect(r.stdout).toBe("x'$(id)|")
  })

  it('reports non-zero exits and output; check turns them into remote errors', async () => {
    expect(await t.run(['sh', '-c', 'echo out; echo err >&2; exit 3'])).toEqual({stdout: 'out\n', stderr: 'err\n', exitCode: 3})
    expect((await t.run(['citc-no-such-command'])).exitCode).toBe(127)
    const error = await caught(t.check(['sh', '-c', 'echo broken >&2; exit 5']))
    expect(error.kind).toBe('remote')
    expect(error.message).toContain(`command failed on ${t.description} (exit 5)`)
    expect(error.message).toContain('broken')
  })

  it('reports death by signal as 128+n', async () => {
    expect((await t.run(['sh', '-c', 'kill -KILL $$'])).exitCode).toBe(137)
  })

  it('streams output as it comes', async () => {
    // The remote command waits for a file that only the onOutput callback creates.
    const marker = join(work, 'stream-marker')
    const seen: string[] = []
    const r = await t.run(['sh', '-c', 'echo one; while [ ! -e "$1" ]; do sleep 0.02; done; echo two >&2', 'sh', marker], {
      timeoutMs: 20_000,
      onOutput: (chunk, stream) => {
        seen.push(`${stream}:${chunk}`)
        if (chunk.includes('one')) writeFileSync(marker, '')
      },
    })
    expect(r.exitCode).toBe(0)
    expect(seen).toEqual(['stdout:one\n', 'stderr:two\n'])
  })

  it('on timeout signals the remote process and rejects', async () => {
    const pidFile = join(work, 'timeout.pid')
    // The limit must come after sshd started the command and it wrote its pid (or the test has no
    // pid to look at): a channel's start through sshd can take most of a second on a loaded machine,
    // so 3 s, not 0.5.
    const error = await caught(t.run(['sh', '-c', 'echo $$ > "$1"; exec sleep 300', 'sh', pidFile], {timeoutMs: 3000}))
    expect(error.kind).toBe('remote')
    expect(error.message).toMatch(/timed out after 3 s on .*: sh -c/)
    await waitFor('the remote process to exit', () => !pidAlive(Number(readFileSync(pidFile, 'utf8'))))
  })

  it('on timeout sends KILL to a remote process that ignores TERM', async () => {
    const pidFile = join(work, 'stubborn.pid')
    // As above: the trap must be set and the pid written before the limit (3 s, not 0.3).
    const error = await caught(t.run(['sh', '-c', 'trap "" TERM; echo $$ > "$1"; exec sleep 300', 'sh', pidFile], {timeoutMs: 3000}))
    expect(error.message).toMatch(/timed out/)
    await waitFor('the remote process to exit', () => !pidAlive(Number(readFileSync(pidFile, 'utf8'))))
  })

  it('an abort signal stops the remote process and rejects as cancelled', async () => {
    const pidFile = join(work, 'abort.pid')
    const ac = new AbortController()
    const error = await caught(
      t.run(['sh', '-c', 'echo $$ > "$1"; echo ready; exec sleep 300', 'sh', pidFile], {
        signal: ac.signal,
        onOutput: (c) => c.includes('ready') && ac.abort(),
      }),
    )
    expect(error.kind).toBe('cancelled')
    await waitFor('the remote process to exit', () => !pidAlive(Number(readFileSync(pidFile, 'utf8'))))
  })

  it('many commands at once on one connection', async () => {
    const results = await Promise.all(Array.from({length: 8}, (_, i) => t.run(['echo', String(i)])))
    expect(results.map((r) => r.stdout)).toEqual(Array.from({length: 8}, (_, i) => `${i}\n`))
  })
})

describe('readFile', () => {
  it('returns the bytes, or undefined when the file does not exist', async () => {
    const d = sub()
    const data = randomBytes(700_000)
    writeFileSync(join(d, 'f'), data)
    expect(await t.readFile(join(d, 'f'))).toEqual(data)
    expect(await t.readFile(join(d, 'missing'))).toBeUndefined()
    expect(await t.readFile(join(d, 'no/such/dir'))).toBeUndefined()
  })
})

describe('writeFile', () => {
  it('replaces the target by rename with the mode asked for, leaving no temp file', async () => {
    const d = sub()
    const target = join(d, 'slurm.conf')
    writeFileSync(target, 'old\n', {mode: 0o644})
    const before = statSync(target).ino
    await t.writeFile(target, 'new ünïcode\n', {mode: 0o640})
    expect(readFileSync(target, 'utf8')).toBe('new ünïcode\n')
    expect(statSync(target).mode & 0o7777).toBe(0o640)
    expect(statSync(target).ino).not.toBe(before)
    expect(readdirSync(d)).toEqual(['slurm.conf'])
  })

  it('keeps the existing mode when none is given, 0644 for a new file; writes empty files', async () => {
    const d = sub()
    writeFileSync(join(d, 'key'), 'x', {mode: 0o600})
    await t.writeFile(join(d, 'key'), 'y')
    expect(statSync(join(d, 'key')).mode & 0o7777).toBe(0o600)
    await t.writeFile(join(d, 'fresh'), Buffer.alloc(0))
    expect(statSync(join(d, 'fresh')).mode & 0o7777).toBe(0o644)
    expect(statSync(join(d, 'fresh')).size).toBe(0)
  })

  it('fails clearly into a missing directory, leaving nothing behind', async () => {
    const d = sub()
    const error = await caught(t.writeFile(join(d, 'nope/f'), 'x'))
    expect(error.kind).toBe('remote')
    expect(error.message).toMatch(/cannot create .*nope\/\.f\.citc-tmp-/)
    expect(readdirSync(d)).toEqual([])
  })

  it('a failed rename leaves the target alone and removes the temp file', async () => {
    const d = sub()
    mkdirSync(join(d, 'target'))
    writeFileSync(join(d, 'target', 'inside'), 'keep')
    const error = await caught(t.writeFile(join(d, 'target'), 'data'))
    expect(error.kind).toBe('remote')
    expect(readdirSync(d)).toEqual(['target'])
    expect(readFileSync(join(d, 'target', 'inside'), 'utf8')).toBe('keep')
  })

  it('an upload aborted midway leaves the target intact and no temp file', async () => {
    const d = sub()
    const target = join(d, 'big')
    writeFileSync(target, 'original')
    const ac = new AbortController()
    const upload = t.writeFile(target, randomBytes(50 << 20), {signal: ac.signal})
    // Abort once the temp file holds part of the data.
    await waitFor('the upload\'s temporary file to grow', () => readdirSync(d).some((f) => f.startsWith('.big.citc-tmp-') && statSync(join(d, f)).size > 2 << 20), 30_000)
    ac.abort()
    const error = await caught(upload)
    expect(error.kind).toBe('cancelled')
    expect(readFileSync(target, 'utf8')).toBe('original')
    expect(readdirSync(d)).toEqual(['big'])
    // The connection is still usable.
    expect((await t.run(['echo', 'still here'])).stdout).toBe('still here\n')
  })

  it('a connection lost midway leaves the target intact (the temp file stays behind)', async () => {
    // A TCP proxy in front of sshd, cut once a few MB have gone through: a network failure.
    const d = sub()
    const target = join(d, 'big')
    writeFileSync(target, 'original')
    const sockets: Socket[] = []
    let bytes = 0
    let cut = false
    const proxy: Server = createServer((client) => {
      const upstream = connect(sshd.port, '127.0.0.1')
      sockets.push(client, upstream)
      client.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        if (!cut && bytes > 8 << 20) {
          cut = true
          for (const s of sockets) s.destroy()
        }
      })
      client.pipe(upstream)
      upstream.pipe(client)
      client.on('error', () => {})
      upstream.on('error', () => {})
    })
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r))
    try {
      const port = (proxy.address() as {port: number}).port
      const viaProxy = await connectSsh({...connectOpts(), port})
      const error = await caught(viaProxy.writeFile(target, randomBytes(50 << 20)))
      expect(cut).toBe(true)
      expect(error.kind).toBe('remote')
      expect(error.message).toMatch(/connection to .* was lost while writing .*big \(.*big is unchanged\)/)
      await viaProxy.close()
      expect(readFileSync(target, 'utf8')).toBe('original')
      // The far side cannot clean up after a dead connection: at most one hidden temp file stays.
      const left = readdirSync(d).filter((f) => f !== 'big')
      expect(left.length).toBeLessThanOrEqual(1)
      for (const f of left) expect(f).toMatch(/^\.big\.citc-tmp-[0-9a-f]{12}$/)
    } finally {
      await new Promise((r) => proxy.close(r))
    }
  })
})

describe('close', () => {
  it('closes the connection; later calls fail clearly', async () => {
    const other = await connectSsh({...connectOpts(), privateKey: sshd.clientKey})
    expect((await other.run(['true'])).exitCode).toBe(0)
    await other.close()
    await other.close() // twice is fine
    await expect(other.run(['true'])).rejects.toThrow(/closed/)
    await expect(other.readFile('/etc/hostname')).rejects.toThrow(/closed/)
  })
})

describe('generateEd25519KeyPair', () => {
  it('makes only well-formed pairs (ssh2 alone drops a leading zero byte of about one public key in 256)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'citc-keygen-'))
    try {
      for (let i = 0; i < 3000; i++) {
        const pair = generateEd25519KeyPair('citc-test')
        const parsed = parseSshPublicKey(pair.publicKey)
        if (parsed instanceof Error) throw new Error(`pair ${i}: ${parsed.message}: ${pair.publicKey}`)
        // "ssh-ed25519" blob: 4 + 11 (type) + 4 + 32 (key) bytes.
        expect(parsed.blob.length).toBe(51)
        if (i % 600 === 0) {
          // OpenSSH reads both halves, and derives the same public key from the private one.
          writeFileSync(join(dir, 'k'), pair.privateKey, {mode: 0o600})
          expect(execFileSync('ssh-keygen', ['-y', '-f', join(dir, 'k')], {encoding: 'utf8'}).split(' ').slice(0, 2)).toEqual(pair.publicKey.split(' ').slice(0, 2))
        }
      }
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
