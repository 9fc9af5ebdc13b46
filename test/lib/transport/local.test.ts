import {mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {localTransport} from '../../../src/lib/transport/local.js'
import {NASTY} from '../../helpers/nasty.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-local-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))
let n = 0
const sub = () => {
  const d = join(dir, String(++n))
  mkdirSync(d)
  return d
}
const t = localTransport()

describe('localTransport', () => {
  it('describes itself', () => {
    expect(t.description).toBe('this machine')
  })

  it('runs argv literally (no shell), with stdin and env', async () => {
    const r = await t.run(['printf', '%s\\0', ...NASTY])
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(NASTY)
    expect((await t.run(['cat'], {stdin: 'in'})).stdout).toBe('in')
    expect((await t.run(['sh', '-c', 'printf %s "$X"'], {env: {X: '$(id)'}})).stdout).toBe('$(id)')
  })

  it('run reports a non-zero exit; check rejects with a remote error naming the command', async () => {
    expect((await t.run(['sh', '-c', 'exit 4'])).exitCode).toBe(4)
    const error = await t.check(['sh', '-c', 'echo boom >&2; exit 4']).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('remote')
    expect((error as CitcError).message).toMatch(/exit 4.*sh -c 'echo boom >&2; exit 4'\nboom/s)
  })

  it('times out', async () => {
    const error = await t.run(['sleep', '30'], {timeoutMs: 200}).catch((e: unknown) => e)
    expect((error as CitcError).message).toMatch(/timed out/)
  })

  it('readFile: the bytes, or undefined when missing', async () => {
    const d = sub()
    writeFileSync(join(d, 'f'), Buffer.from([1, 2, 3]))
    expect(await t.readFile(join(d, 'f'))).toEqual(Buffer.from([1, 2, 3]))
    expect(await t.readFile(join(d, 'missing'))).toBeUndefined()
    await expect(t.readFile(d)).rejects.toThrow(/cannot read/) // a directory is an error, not "missing"
  })

  it('writeFile replaces the target by rename, with the mode asked for, and leaves no temp file', async () => {
    const d = sub()
    const target = join(d, 'slurm.conf')
    writeFileSync(target, 'old\n', {mode: 0o644})
    const before = statSync(target).ino
    const old = process.umask(0o077)
    try {
      await t.writeFile(target, 'new\n', {mode: 0o664}) // 0664 despite the umask
    } finally {
      process.umask(old)
    }
    expect(readFileSync(target, 'utf8')).toBe('new\n')
    expect(statSync(target).mode & 0o7777).toBe(0o664)
    expect(statSync(target).ino).not.toBe(before) // a new file renamed over, not rewritten in place
    expect(readdirSync(d)).toEqual(['slurm.conf'])
  })

  it('writeFile keeps the existing mode when none is given, 0644 for a new file', async () => {
    const d = sub()
    writeFileSync(join(d, 'secret'), 'x', {mode: 0o600})
    await t.writeFile(join(d, 'secret'), 'y')
    expect(statSync(join(d, 'secret')).mode & 0o7777).toBe(0o600)
    await t.writeFile(join(d, 'fresh'), Buffer.from('z'))
    expect(statSync(join(d, 'fresh')).mode & 0o7777).toBe(0o644)
  })

  it('a failed writeFile leaves the target alone and removes its temp file', async () => {
    const d = sub()
    const target = join(d, 'target')
    mkdirSync(target) // rename(file, dir) fails after the temp file was written
    writeFileSync(join(target, 'inside'), 'keep')
    const error = await t.writeFile(target, 'data').catch((e: unknown) => e)
    expect((error as CitcError).kind).toBe('remote')
    expect((error as CitcError).message).toMatch(/cannot write/)
    expect(readdirSync(d)).toEqual(['target'])
    expect(readFileSync(join(target, 'inside'), 'utf8')).toBe('keep')
    await expect(t.writeFile(join(d, 'no/such/dir/f'), 'x')).rejects.toThrow(/cannot write/)
  })
})
