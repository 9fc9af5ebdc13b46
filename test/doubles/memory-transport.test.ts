// The in-memory Transport behaves like the real ones where the workflows depend on it.
import {describe, expect, it} from 'vitest'

import {CitcError} from '../../src/lib/errors.js'
import {MemoryTransport} from './memory-transport.js'

describe('MemoryTransport', () => {
  it('rejects a command nobody scripted, naming it', async () => {
    const t = new MemoryTransport()
    await expect(t.run(['scontrol', 'ping'])).rejects.toThrow('no script for ["scontrol","ping"]')
  })

  it('answers by argv prefix, pattern or test; the latest script wins, once() answers one call', async () => {
    const t = new MemoryTransport()
      .on(['scontrol'], {stdout: 'any scontrol'})
      .on(/scontrol ping/, {stdout: 'UP'})
      .once((argv) => argv.includes('ping'), {exitCode: 1, stderr: 'down'})
    expect(await t.run(['scontrol', 'ping'])).toEqual({stdout: '', stderr: 'down', exitCode: 1})
    expect(await t.run(['scontrol', 'ping'])).toEqual({stdout: 'UP', stderr: '', exitCode: 0})
    expect((await t.run(['scontrol', 'show', 'node'])).stdout).toBe('any scontrol')
  })

  it('records every call in order, with stdin and env', async () => {
    const t = new MemoryTransport({dirs: ['/etc']}).on(['ldapadd'])
    await t.run(['ldapadd', '-x'], {stdin: 'dn: uid=a', env: {A: '1'}})
    await t.writeFile('/etc/x', 'data', {mode: 0o600})
    await t.readFile('/etc/x')
    expect(t.calls).toEqual([
      {op: 'run', argv: ['ldapadd', '-x'], data: 'dn: uid=a', env: {A: '1'}},
      {op: 'writeFile', path: '/etc/x', data: 'data', mode: 0o600},
      {op: 'readFile', path: '/etc/x'},
    ])
  })

  it('check rejects a non-zero exit with a remote error (exit 4) naming the command, as the real transports do', async () => {
    const t = new MemoryTransport().on(['false'], {exitCode: 3, stderr: 'broken'})
    const error = await t.check(['false']).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect(error).toMatchObject({exitCode: 4, message: 'command failed on the memory node (exit 3): false\nbroken'})
  })

  it('writes files only into directories that exist, with their mode', async () => {
    const t = new MemoryTransport({dirs: ['/a']})
    await expect(t.writeFile('/b/x', 'x')).rejects.toThrow('/b: no such directory')
    await t.writeFile('/a/x', 'x', {mode: 0o400})
    expect([t.text('/a/x'), t.mode('/a/x')]).toEqual(['x', 0o400])
    expect(await t.readFile('/nope')).toBeUndefined()
  })

  it('moves, copies and removes files, makes directories, and tests for them', async () => {
    const t = new MemoryTransport({files: {'/etc/slurm/slurm.conf': 'old', '/skel/.bashrc': 'rc'}})
    expect((await t.run(['cp', '-p', '/etc/slurm/slurm.conf', '/etc/slurm/backup'])).exitCode).toBe(0)
    await t.writeFile('/etc/slurm/.next', 'new')
    expect((await t.run(['mv', '-f', '/etc/slurm/.next', '/etc/slurm/slurm.conf'])).exitCode).toBe(0)
    expect([t.text('/etc/slurm/slurm.conf'), t.text('/etc/slurm/backup'), t.exists('/etc/slurm/.next')]).toEqual(['new', 'old', false])
    expect((await t.run(['mv', '-f', '/etc/slurm/.gone', '/etc/slurm/x'])).exitCode).toBe(1)

    expect((await t.run(['mkdir', '-m', '0700', '/home/alice'])).exitCode).toBe(1) // no /home
    expect((await t.run(['mkdir', '-p', '-m', '0700', '/home/alice/.ssh'])).exitCode).toBe(0)
    expect((await t.run(['mkdir', '-m', '0700', '/home/alice'])).exitCode).toBe(1) // exists
    expect((await t.run(['cp', '-R', '-T', '--', '/skel', '/home/alice'])).exitCode).toBe(0)
    expect(t.text('/home/alice/.bashrc')).toBe('rc')
    expect((await t.run(['test', '-d', '/home/alice/.ssh'])).exitCode).toBe(0)
    expect((await t.run(['rm', '-rf', '--', '/home/alice'])).exitCode).toBe(0)
    expect([(await t.run(['test', '-e', '/home/alice'])).exitCode, t.exists('/home/alice/.bashrc')]).toEqual([1, false])
    expect(t.paths()).toEqual(['/etc/slurm/backup', '/etc/slurm/slurm.conf', '/skel/.bashrc'])
  })

  it('a script takes precedence over a built-in (to make a file command fail)', async () => {
    const t = new MemoryTransport({files: {'/a/x': 'x'}}).on(['mv'], {exitCode: 1, stderr: 'mv: disk full'})
    expect((await t.run(['mv', '-f', '/a/x', '/a/y'])).exitCode).toBe(1)
    expect(t.text('/a/x')).toBe('x')
  })

  it('stops at once when cancelled', async () => {
    const t = new MemoryTransport().on(['sleep'])
    await expect(t.run(['sleep', '1'], {signal: AbortSignal.abort()})).rejects.toThrow()
  })
})
