// citc ssh's command lines (transport/ssh-command.ts): the system ssh's arguments, the same for
// `citc ssh` and the line create prints; and the remote command after `--`, taken from what oclif's
// parser (with citc ssh's real flags) says are arguments — spaces, quotes, `--` and repeated words kept.
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {Flags, Parser} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import Ssh from '../../../src/commands/ssh.js'
import {CitcError} from '../../../src/lib/errors.js'
import {shellQuote} from '../../../src/lib/shell-quote.js'
import {remoteCommand, sshArgs} from '../../../src/lib/transport/ssh-command.js'

/** The remote command of `citc ssh ARGV…`, parsed as the command parses it. */
async function commandOf(argv: string[]): Promise<string[] | undefined> {
  const {raw} = await Parser.parse([...argv], {flags: {...Ssh.baseFlags, json: Flags.boolean()}, args: {}, strict: false})
  return remoteCommand(argv, raw.flatMap((t) => (t.type === 'arg' ? [t.input] : [])))
}

const usage = async (argv: string[]) => {
  const error = await commandOf(argv).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(CitcError)
  expect((error as CitcError).kind).toBe('usage')
  return error as CitcError
}

describe('remoteCommand', () => {
  it('is every word after the first --, exactly as given', async () => {
    expect(await commandOf(['-c', 'lab', '--', 'sinfo', '-N'])).toEqual(['sinfo', '-N'])
    expect(await commandOf(['--', 'printf', '%s|', 'a b', '$(id)', "it's", '"q"', ''])).toEqual(['printf', '%s|', 'a b', '$(id)', "it's", '"q"', ''])
    // A repeated word stays where it was (oclif's own argv sorts by first occurrence: echo a a b).
    expect(await commandOf(['-c', 'a', '--', 'echo', 'a', 'b', 'a'])).toEqual(['echo', 'a', 'b', 'a'])
    // Flags after -- are the command's, a second -- too; citc's flags go before it in any spelling.
    expect(await commandOf(['--cluster=lab', '--json', '--', 'git', 'log', '--json', '-c', 'x', '--', 'file'])).toEqual(['git', 'log', '--json', '-c', 'x', '--', 'file'])
    expect(await commandOf(['-clab', '--verbose', '--', 'true'])).toEqual(['true'])
  })

  it('without --: no command (a shell)', async () => {
    expect(await commandOf(['-c', 'lab'])).toBeUndefined()
    expect(await commandOf([])).toBeUndefined()
  })

  it('refuses a command without --, naming where it goes, and a -- with nothing after it', async () => {
    const stray = await usage(['-c', 'lab', 'squeue', 'all'])
    expect(stray.message).toBe('unexpected argument squeue')
    expect(stray.hint).toBe('put the command after --, e.g. citc ssh -c NAME -- squeue all')
    // A flag citc does not know, before --: oclif's parser refuses it (a usage error, exit 2).
    await expect(commandOf(['-c', 'lab', 'sinfo', '-N'])).rejects.toThrow('Nonexistent flag: -N')
    expect((await usage(['hostname', '-c', 'lab', '--', 'true'])).message).toBe('unexpected argument hostname')
    expect((await usage(['-c', 'lab', '--'])).message).toBe('no command after --')
  })
})

describe('sshArgs', () => {
  const login = {host: '203.0.113.7', port: 2222, user: 'rocky', keyPath: '/state/keys/admin_ed25519'}

  it('trusts the pinned key only and offers citc’s key only', () => {
    expect(sshArgs(login, {file: '/state/keys/known_hosts', algorithm: 'ssh-ed25519'})).toEqual([
      '-o', 'StrictHostKeyChecking=yes',
      '-o', 'UserKnownHostsFile=/state/keys/known_hosts',
      '-o', 'GlobalKnownHostsFile=/dev/null',
      '-o', 'IdentitiesOnly=yes',
      '-o', 'HostKeyAlgorithms=ssh-ed25519',
      '-i', '/state/keys/admin_ed25519',
      '-p', '2222',
      'rocky@203.0.113.7',
    ])
    expect(sshArgs({...login, port: 22}, {file: '/k'})).not.toContain('HostKeyAlgorithms=ssh-ed25519')
  })

  it('create’s printed line is the same argv: a shell reads it back word for word, paths with spaces included', () => {
    const dir = mkdtempSync(join(tmpdir(), 'citc ssh-'))
    try {
      const file = join(dir, 'known_hosts')
      const argv = ['ssh', ...sshArgs({...login, keyPath: join(dir, "admin's key")}, {file, algorithm: 'ssh-ed25519'})]
      expect(argv).toContain('HostKeyAlgorithms=ssh-ed25519')
      const r = spawnSync('/bin/sh', ['-c', `printf '%s\\0' ${shellQuote(argv)}`], {encoding: 'utf8'})
      expect(r.stdout.split('\0').slice(0, -1)).toEqual(argv)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
