// The add-user workflow on this machine against a real slapd of the test's own (temp dir, free port),
// with homes made under a temp home root from a temp skel. Slurm accounting failures come from the real
// sacctmgr talking to a port where no slurmdbd listens; the full path with slurmdbd, nslcd and a job
// runs in the local-cluster e2e test.
import {execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {clusterRegistry} from '../../../../src/lib/cluster/registry.js'
import {CitcError, InvalidInputError} from '../../../../src/lib/errors.js'
import type {Io} from '../../../../src/lib/io.js'
import {gatherRequests, runAddUser} from '../../../../src/lib/tasks/add-user/add-user-workflow.js'
import {createUsers, type CreateUsersOptions} from '../../../../src/lib/tasks/add-user/create-users.js'
import {countKeys, listUsers, usersTable} from '../../../../src/lib/tasks/users/list-users.js'
import {localTransport} from '../../../../src/lib/transport/local.js'
import type {Transport} from '../../../../src/lib/transport/types.js'
import {Directory, readLdapConfig} from '../../../../src/lib/users/directory.js'
import {get, parseLdif} from '../../../../src/lib/users/ldif.js'
import {prepareUsers, requestFromFlags} from '../../../../src/lib/users/request.js'
import {usernameProblem} from '../../../../src/lib/users/validate.js'
import {type SlapdSandbox, startSlapd} from '../../../helpers/slapd.js'
import {freePort} from '../../../helpers/slurm.js'
import {citcRejection} from '../../../helpers/rejection.js'

let s: SlapdSandbox
let work: string
let homeRoot: string
let skel: string
let ed = ''
let rsa = ''
const t = localTransport()

const io = (lines: string[] = [], notes: string[] = []): Io => ({
  log: (m) => lines.push(m),
  note: (m) => notes.push(m),
  json: false,
  interactive: false,
  yes: true,
  renderer: 'silent',
})

const base = (o: Partial<CreateUsersOptions> = {}): CreateUsersOptions => ({
  transport: t,
  renderer: 'silent',
  ldapJsonPath: s.ldapJsonPath,
  homeRoot,
  skelDir: skel,
  accounting: false,
  verifyNss: false,
  ...o,
})

const prepare = (username: string, extra: {keys?: string[]; surname?: string; firstName?: string; account?: string} = {}) =>
  prepareUsers([requestFromFlags({username, firstName: extra.firstName ?? 'Test', surname: extra.surname ?? 'User', keys: extra.keys ?? [ed], account: extra.account})])

const search = (filter: string) => parseLdif(s.search(filter, ['*']))

/** Everything that add-user may change: the directory, and the homes. */
const snapshot = () => ({ldap: s.dump(), homes: readdirSync(homeRoot).sort()})

const failure = citcRejection

/**
 * Fault injection: the real local Transport, except that the first command for which `when(argv)`
 * is true fails (exit 1) — or, with `abort`, aborts that controller instead and then runs.
 */
function faultAt(when: (argv: string[]) => boolean, abort?: AbortController): Transport {
  let fired = false
  return {
    ...t,
    run: async (argv, opts) => {
      if (!fired && when(argv)) {
        fired = true
        if (abort) abort.abort(new Error('test interrupt'))
        else return {stdout: '', stderr: `injected failure: ${argv.join(' ')}`, exitCode: 1}
      }
      return t.run(argv, opts)
    },
    check: async (argv, opts) => {
      if (!fired && when(argv)) {
        fired = true
        if (abort) abort.abort(new Error('test interrupt'))
        else throw new CitcError('remote', `injected failure: ${argv.join(' ')}`)
      }
      return t.check(argv, opts)
    },
  }
}

/** The ordinary account this file made on this machine (useradd), removed by that name in afterAll. */
let localAccount: string | undefined

/** A new ordinary account on this machine, without a home; needs root (CI runs the integration project as root). */
function makeLocalAccount(): string {
  const name = `citc-local-${process.pid}-${randomBytes(3).toString('hex')}`
  try {
    execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', name], {stdio: ['ignore', 'ignore', 'pipe']})
  } catch (error) {
    throw new Error(`this test makes an account of its own with useradd, which needs root: ${String((error as {stderr?: Buffer}).stderr ?? error).trim()}`)
  }
  localAccount = name
  return name
}

beforeAll(async () => {
  s = await startSlapd()
  work = mkdtempSync(join(tmpdir(), 'citc-add-user-'))
  homeRoot = join(work, 'home')
  skel = join(work, 'skel')
  mkdirSync(homeRoot)
  mkdirSync(join(skel, '.config'), {recursive: true})
  writeFileSync(join(skel, '.bashrc'), '# skel bashrc\n')
  writeFileSync(join(skel, '.config', 'app'), 'x\n')
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ed@test', '-f', join(work, 'ed')])
  execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '3072', '-N', '', '-C', 'rsa@test', '-f', join(work, 'rsa')])
  ed = readFileSync(join(work, 'ed.pub'), 'utf8').trim()
  rsa = readFileSync(join(work, 'rsa.pub'), 'utf8').trim()
})

afterAll(async () => {
  try {
    await s?.stop()
    if (work) rmSync(work, {recursive: true, force: true})
  } finally {
    if (localAccount) execFileSync('userdel', [localAccount])
  }
})

describe('createUsers', () => {
  it('makes the entry, the home from skel, the keys and the password, owned by the user', async () => {
    const users = await prepare('alice', {keys: [ed, join(work, 'rsa.pub')], firstName: 'Zoë', surname: "O'Brien, Jr."})
    const [u] = await createUsers(users, base())
    const home = join(homeRoot, 'alice')
    expect(u).toMatchObject({username: 'alice', gid: 100, name: "Zoë O'Brien, Jr.", home, shell: '/bin/bash', account: null, passwordFile: `${home}/.password`})
    expect(u.keys.map((k) => k.type)).toEqual(['ssh-ed25519', 'ssh-rsa'])
    expect(u.uid).toBeGreaterThanOrEqual(10_001)

    const [e] = search('(uid=alice)')
    expect([get(e, 'uidNumber'), get(e, 'gidNumber'), get(e, 'homeDirectory'), get(e, 'givenName'), get(e, 'sn'), get(e, 'loginShell')]).toEqual([
      String(u.uid), '100', home, 'Zoë', "O'Brien, Jr.", '/bin/bash',
    ])

    const mode = (p: string) => statSync(p).mode & 0o7777
    const owner = (p: string) => [lstatSync(p).uid, lstatSync(p).gid]
    expect(mode(home)).toBe(0o700)
    expect(mode(`${home}/.ssh`)).toBe(0o700)
    expect(mode(`${home}/.ssh/authorized_keys`)).toBe(0o600)
    expect(mode(`${home}/.password`)).toBe(0o400)
    for (const p of [home, `${home}/.ssh`, `${home}/.ssh/authorized_keys`, `${home}/.password`, `${home}/.bashrc`, `${home}/.config/app`]) {
      expect(owner(p), p).toEqual([u.uid, 100])
    }
    expect(readFileSync(`${home}/.bashrc`, 'utf8')).toBe('# skel bashrc\n')
    expect(readFileSync(`${home}/.ssh/authorized_keys`, 'utf8')).toBe(`# Written by citc add-user.\n${ed}\n${rsa}\n`)

    // The password: 24 characters, only in ~/.password, and it is the one the directory checks.
    const password = readFileSync(`${home}/.password`, 'utf8')
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}\n$/)
    const pwFile = join(work, 'alice-pw')
    writeFileSync(pwFile, password.trimEnd(), {mode: 0o600})
    expect(execFileSync('ldapwhoami', ['-x', '-H', s.uri, '-D', `uid=alice,${s.peopleDn}`, '-y', pwFile], {encoding: 'utf8'}).trim()).toBe(`dn:uid=alice,${s.peopleDn}`)
    expect(JSON.stringify(u)).not.toContain(password.trimEnd())
  })

  it('the next user gets the next uid', async () => {
    const dir = new Directory(t, await readLdapConfig(t, s.ldapJsonPath))
    const alice = (await dir.getUser('alice'))!
    const [bob] = await createUsers(await prepare('bob'), base())
    expect(bob.uid).toBeGreaterThan(alice.uidNumber)
  })

  it('refuses a name in the directory, changing nothing', async () => {
    const before = snapshot()
    const error = await failure(createUsers(await prepare('alice'), base()))
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(error.message).toBe(`USERNAME: "alice" exists already in the directory (uid=alice,${s.peopleDn})`)
    expect(snapshot()).toEqual(before)
  })

  it('refuses a name that exists on the node (getent passwd), changing nothing', async () => {
    // An ordinary account of the test's own: a fresh CI machine may have none to borrow.
    const local = makeLocalAccount()
    expect(usernameProblem(local)).toBeUndefined()
    const before = snapshot()
    const error = await failure(createUsers(await prepare(local), base()))
    expect(error.message).toMatch(new RegExp(`"${local}" exists already on this machine \\(getent passwd: ${local}:x:\\d+`))
    expect(snapshot()).toEqual(before)
  })

  it('refuses when the home exists already, changing nothing', async () => {
    mkdirSync(join(homeRoot, 'carol'))
    try {
      const before = snapshot()
      const error = await failure(createUsers(await prepare('carol'), base()))
      expect(error.kind).toBe('invalidInput')
      expect(error.message).toContain(`${join(homeRoot, 'carol')} exists already on this machine`)
      expect(snapshot()).toEqual(before)
    } finally {
      rmSync(join(homeRoot, 'carol'), {recursive: true})
    }
  })

  it('a missing home root is a remote error before any change', async () => {
    const before = snapshot()
    const error = await failure(createUsers(await prepare('dora'), base({homeRoot: join(work, 'nope')})))
    expect(error.kind).toBe('remote')
    expect(error.message).toMatch(/the home root .*nope is not a directory/)
    expect(snapshot()).toEqual(before)
  })

  it('Slurm accounting failing after the entry: home and entry are undone (exit 4)', async () => {
    const conf = join(work, 'slurm.conf')
    writeFileSync(
      conf,
      `ClusterName=citctest\nSlurmctldHost=localhost\nAccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=${await freePort()}\n`,
    )
    const before = snapshot()
    const error = await failure(createUsers(await prepare('dave'), base({accounting: {confPath: conf}, defaultAccount: 'citctest'})))
    expect(error.kind).toBe('remote')
    expect(error.exitCode).toBe(4)
    expect(error.message).toMatch(/^adding dave failed: sacctmgr failed on this machine/)
    expect(error.message).toContain(`Undone: the home ${join(homeRoot, 'dave')}; the directory entry uid=dave,${s.peopleDn}.`)
    expect(error.details).toMatchObject({failedUser: 'dave', notUndone: []})
    expect(snapshot()).toEqual(before)
    expect(search('(uid=dave)')).toEqual([])
  })

  it('the user not resolving on the node (getent passwd) undoes everything', async () => {
    // This machine's NSS does not read the test's slapd, so the check cannot pass.
    const before = snapshot()
    const error = await failure(createUsers(await prepare('erin'), base({verifyNss: {timeoutMs: 1500}})))
    expect(error.kind).toBe('remote')
    expect(error.message).toMatch(/^adding erin failed: erin is in the directory, but getent passwd erin does not find it on this machine after 1.5 s/)
    expect(error.hint).toMatch(/nslcd/)
    expect(snapshot()).toEqual(before)
  })

  it('a batch is all or nothing: a failure in the second user undoes the first', async () => {
    const before = snapshot()
    const users = await prepareUsers([
      requestFromFlags({username: 'fred', firstName: 'Fred', surname: 'One', keys: [ed]}),
      requestFromFlags({username: 'gina', firstName: 'Gina', surname: 'Two', keys: [ed]}),
    ])
    const transport = faultAt((argv) => argv[0] === 'chown' && argv.at(-1) === join(homeRoot, 'gina'))
    const error = await failure(createUsers(users, base({transport})))
    expect(error.message).toMatch(/^adding gina failed: injected failure: chown/)
    expect(error.message).toContain(`Undone: the home ${join(homeRoot, 'gina')}; the directory entry uid=gina,${s.peopleDn}; the home ${join(homeRoot, 'fred')}; the directory entry uid=fred,${s.peopleDn}.`)
    expect(snapshot()).toEqual(before)
  })

  it('Ctrl-C in the middle undoes what was made and exits 130', async () => {
    const before = snapshot()
    const controller = new AbortController()
    const transport = faultAt((argv) => argv[0] === 'cp' && argv.at(-1) === join(homeRoot, 'hana'), controller)
    const error = await failure(createUsers(await prepare('hana'), base({transport, signal: controller.signal})))
    expect(error.kind).toBe('cancelled')
    expect(error.exitCode).toBe(130)
    expect(error.message).toContain('Undone: the home')
    expect(snapshot()).toEqual(before)
  })

  it('a missing skel directory gives an empty home and a note', async () => {
    const notes: string[] = []
    const [u] = await createUsers(await prepare('ivan'), base({skelDir: join(work, 'no-skel'), note: (m) => notes.push(m)}))
    expect(readdirSync(u.home).sort()).toEqual(['.password', '.ssh'])
    expect(notes).toEqual([`note: ${join(work, 'no-skel')} does not exist on this machine; ${u.home} starts empty`])
  })
})

describe('listUsers', () => {
  it('lists the directory’s people with their key counts', async () => {
    const users = await listUsers({transport: t, ldapJsonPath: s.ldapJsonPath, accounting: false})
    expect(users.map((u) => [u.username, u.keys, u.account])).toEqual([
      ['alice', 2, null],
      ['bob', 1, null],
      ['ivan', 1, null],
    ])
    expect(users[0]).toMatchObject({name: "Zoë O'Brien, Jr.", home: join(homeRoot, 'alice')})
    const table = usersTable(users).split('\n')
    expect(table[0]).toMatch(/^USERNAME\s+UID\s+NAME\s+HOME\s+KEYS\s+ACCOUNT$/)
    expect(table).toHaveLength(4)
    const nasty = usersTable([{username: 'x', uid: 1, name: 'a\nb\u001b[2J', home: '/h', keys: null, account: null}])
    expect(nasty.split('\n')).toHaveLength(2)
    expect(nasty).not.toContain('\u001b')
    expect(nasty.split('\n')[1]).toMatch(/^x\s+1\s+a\?b\?\[2J\s+\/h\s+\?\s+-$/)
  })

  it('countKeys skips blanks and comments', () => {
    expect(countKeys('# x\n\nssh-ed25519 A\nssh-rsa B\n')).toBe(2)
  })
})

describe('runAddUser (registry, lock, log)', () => {
  it('adds through a registered local cluster; the log holds no password', async () => {
    const dataDir = join(work, 'data')
    const registry = clusterRegistry(dataDir)
    registry.create({name: 'tst', provider: 'local', createdAt: new Date().toISOString(), origin: 'created', mgmt: {host: 'localhost', user: 'root'}})
    const lines: string[] = []
    const saved = process.env.CITC_DATA_DIR
    delete process.env.CITC_DATA_DIR
    try {
      const result = await runAddUser(io(lines), {username: 'judy', firstName: 'Judy', surname: 'Hopps', keys: [ed], wait: false}, dataDir, {
        layout: {ldapJsonPath: s.ldapJsonPath, homeRoot, skelDir: skel, accounting: false, verifyNss: false},
      })
      expect(result.cluster).toBe('tst')
      expect(result.users.map((u) => u.username)).toEqual(['judy'])
      expect(lines.join('\n')).toMatch(/^Added judy \(uid \d+, Judy Hopps\): home .*judy, 1 SSH key\. The password is in .*judy\/\.password \(readable by judy only\)\.$/)
      const log = readFileSync(result.logFile, 'utf8')
      expect(log).toContain('ldapadd -x -H')
      expect(log).toContain('<stdin not logged>')
      expect(log).not.toContain(readFileSync(s.adminPasswordFile, 'utf8'))
      expect(log).not.toContain(readFileSync(join(homeRoot, 'judy', '.password'), 'utf8').trim())
      expect(existsSync(registry.paths('tst').lock)).toBe(false) // released
    } finally {
      if (saved !== undefined) process.env.CITC_DATA_DIR = saved
    }
  })

  it('without a terminal, a missing answer is refused naming its flag', async () => {
    await expect(gatherRequests(io(), {username: 'kim', keys: [ed]})).rejects.toThrow(/--first-name is required \(there is no terminal to ask on\)/)
    await expect(gatherRequests(io(), {username: 'kim', firstName: 'K', keys: [ed]})).rejects.toThrow(/--surname is required/)
    await expect(gatherRequests(io(), {username: 'kim', firstName: 'K', surname: 'L', keys: []})).rejects.toThrow(/--key is required/)
    await expect(gatherRequests(io(), {keys: []})).rejects.toThrow(/USERNAME is required/)
    await expect(gatherRequests(io(), {username: 'kim', keys: [], from: 'users.yaml'})).rejects.toThrow(/--from takes every user from the file: do not also give USERNAME/)
    await expect(gatherRequests(io(), {keys: [ed], from: 'users.yaml'})).rejects.toThrow(/--from takes every user from the file: do not also give --key/)
    await expect(gatherRequests(io(), {keys: [], from: join(work, 'none.yaml')})).rejects.toThrow(/none\.yaml: no such file/)
  })
})
