// remove-user on this machine against a real slapd of the test's own (temp dir, free port), with the
// users made first by add-user's createUsers under a temp home root. Slurm is not here: accounting is
// skipped (accounting: false), and jobs come from a fake squeue/scancel in front of the real local
// Transport (fakeSlurm, a test double: no slurmctld runs in this test). sacctmgr and the order of the
// changes are checked on an in-memory node (remove-user-on-memory-node.test.ts); the real path with
// slurmdbd, nslcd and a job is the local-cluster e2e test's.
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {clusterRegistry} from '../../../../src/lib/cluster/registry.js'
import type {Io, Prompts} from '../../../../src/lib/io.js'
import {createUsers} from '../../../../src/lib/tasks/add-user/create-users.js'
import {removeUser, type RemoveUserOptions, runRemoveUser} from '../../../../src/lib/tasks/remove-user/remove-user.js'
import {localTransport} from '../../../../src/lib/transport/local.js'
import type {RunResult, Transport} from '../../../../src/lib/transport/types.js'
import {checkResult} from '../../../../src/lib/transport/check.js'
import {Directory, readLdapConfig} from '../../../../src/lib/users/directory.js'
import {parseLdif} from '../../../../src/lib/users/ldif.js'
import {prepareUsers, requestFromFlags} from '../../../../src/lib/users/request.js'
import {type SlapdSandbox, startSlapd} from '../../../helpers/slapd.js'
import {citcRejection} from '../../../helpers/rejection.js'

let s: SlapdSandbox
let work: string
let homeRoot: string
let ed = ''
const t = localTransport()
const FAKE_CONF = '/fake/slurm.conf'

const base = (o: Partial<RemoveUserOptions> = {}): RemoveUserOptions => ({
  transport: t,
  renderer: 'silent',
  ldapJsonPath: s.ldapJsonPath,
  homeRoot,
  accounting: false,
  jobs: false,
  deleteHome: false,
  force: false,
  ...o,
})

async function addUser(username: string, root = homeRoot): Promise<number> {
  const users = await prepareUsers([requestFromFlags({username, firstName: 'Test', surname: 'User', keys: [ed]})])
  const [u] = await createUsers(users, {transport: t, renderer: 'silent', ldapJsonPath: s.ldapJsonPath, homeRoot: root, skelDir: null, accounting: false, verifyNss: false})
  return u.uid
}

const search = (filter: string) => parseLdif(s.search(filter, ['dn']))

const snapshot = () => ({ldap: s.dump(), homes: readdirSync(homeRoot).sort()})

const failure = citcRejection

/**
 * A fake Slurm (test double) in front of the real local Transport: `squeue` lists `jobs` as
 * `id|state|uid`, `scancel IDS` ends them (or, with `stubborn`, leaves them COMPLETING). Everything
 * else runs for real. Records the Slurm commands it answered.
 */
function fakeSlurm(jobs: Map<string, {state: string; uid: number}>, o: {stubborn?: boolean} = {}): Transport & {slurmCalls: string[][]} {
  const slurmCalls: string[][] = []
  const answer = (argv: string[]): RunResult | undefined => {
    const tool = argv.find((a) => a === 'squeue' || a === 'scancel')
    if (!tool) return undefined
    slurmCalls.push(argv)
    if (tool === 'squeue') return {stdout: [...jobs].map(([id, j]) => `${id}|${j.state}|${j.uid}\n`).join(''), stderr: '', exitCode: 0}
    for (const id of argv.slice(argv.indexOf('scancel') + 1)) {
      if (o.stubborn) jobs.get(id)!.state = 'COMPLETING'
      else jobs.delete(id)
    }
    return {stdout: '', stderr: '', exitCode: 0}
  }
  return {
    ...t,
    slurmCalls,
    run: async (argv, opts) => answer(argv) ?? t.run(argv, opts),
    check: async (argv, opts) => {
      const r = answer(argv)
      return r ? checkResult(argv, r, t.description) : t.check(argv, opts)
    },
  }
}

beforeAll(async () => {
  s = await startSlapd()
  work = mkdtempSync(join(tmpdir(), 'citc-remove-user-'))
  homeRoot = join(work, 'home')
  mkdirSync(homeRoot)
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'ed@test', '-f', join(work, 'ed')])
  ed = readFileSync(join(work, 'ed.pub'), 'utf8').trim()
})

afterAll(async () => {
  await s?.stop()
  if (work) rmSync(work, {recursive: true, force: true})
})

describe('removeUser', () => {
  it('removes the directory entry and keeps the home by default', async () => {
    const uid = await addUser('rmu-alice')
    const home = join(homeRoot, 'rmu-alice')
    const r = await removeUser('rmu-alice', base())
    expect(r).toEqual({user: 'rmu-alice', uid, home, removed: {directory: `uid=rmu-alice,${s.peopleDn}`, slurmAccounts: [], home: false}, cancelledJobs: []})
    expect(search('(uid=rmu-alice)')).toEqual([])
    expect(existsSync(join(home, '.ssh', 'authorized_keys'))).toBe(true)
    rmSync(home, {recursive: true})
  })

  it('deletes the home with --delete-home, and only that home', async () => {
    await addUser('rmu-bob')
    await addUser('rmu-bobby')
    const r = await removeUser('rmu-bob', base({deleteHome: true}))
    expect(r.removed).toEqual({directory: `uid=rmu-bob,${s.peopleDn}`, slurmAccounts: [], home: true})
    expect(existsSync(join(homeRoot, 'rmu-bob'))).toBe(false)
    expect(search('(uid=rmu-bob)')).toEqual([])
    // The other user (whose name starts the same) is untouched.
    expect(existsSync(join(homeRoot, 'rmu-bobby', '.password'))).toBe(true)
    expect(search('(uid=rmu-bobby)')).toHaveLength(1)
  })

  it('a user without a home is removed, and a note says so', async () => {
    await addUser('rmu-cleo')
    rmSync(join(homeRoot, 'rmu-cleo'), {recursive: true})
    const notes: string[] = []
    const r = await removeUser('rmu-cleo', base({deleteHome: true, note: (m) => notes.push(m)}))
    expect(r.removed.home).toBe(false)
    expect(notes).toEqual([`note: rmu-cleo had no home at ${join(homeRoot, 'rmu-cleo')}`])
    expect(search('(uid=rmu-cleo)')).toEqual([])
  })

  it('an unknown user: exit 3 with the closest names, nothing changed', async () => {
    const before = snapshot()
    const error = await failure(removeUser('rmu-boby', base({deleteHome: true})))
    expect(error.kind).toBe('invalidInput')
    expect(error.exitCode).toBe(3)
    expect(error.message).toBe('USERNAME: no user "rmu-boby" in the directory on this machine; did you mean "rmu-bobby"?')
    expect(error.hint).toMatch(/citc users/)
    const far = await failure(removeUser('zzzzzz', base()))
    expect(far.message).toBe('USERNAME: no user "zzzzzz" in the directory on this machine')
    const invalid = await failure(removeUser('Bad Name', base()))
    expect(invalid.kind).toBe('invalidInput')
    expect(snapshot()).toEqual(before)
  })

  it('--delete-home refuses a home that is not directly under the home root, changing nothing', async () => {
    const elsewhere = join(work, 'elsewhere')
    mkdirSync(elsewhere)
    await addUser('rmu-dora', elsewhere)
    const before = snapshot()
    const error = await failure(removeUser('rmu-dora', base({deleteHome: true})))
    expect(error.kind).toBe('invalidInput')
    expect(error.message).toContain(`the home of rmu-dora in the directory is ${join(elsewhere, 'rmu-dora')}, not ${join(homeRoot, 'rmu-dora')}`)
    expect(snapshot()).toEqual(before)
    expect(existsSync(join(elsewhere, 'rmu-dora'))).toBe(true)
    // Without --delete-home it goes, and the home stays where it is.
    await removeUser('rmu-dora', base())
    expect(existsSync(join(elsewhere, 'rmu-dora', '.password'))).toBe(true)
  })

  it('refuses a user with active jobs (exit 2), changing nothing; only their own jobs count', async () => {
    const uid = await addUser('rmu-erin')
    const jobs = new Map([
      ['101', {state: 'RUNNING', uid}],
      ['102_[1-3]', {state: 'PENDING', uid}],
      ['103', {state: 'RUNNING', uid: uid + 1000}],
    ])
    const transport = fakeSlurm(jobs)
    const before = snapshot()
    const error = await failure(removeUser('rmu-erin', base({transport, jobs: {confPath: FAKE_CONF}, deleteHome: true})))
    expect(error.kind).toBe('usage')
    expect(error.exitCode).toBe(2)
    expect(error.message).toBe('rmu-erin has 2 active jobs (101 RUNNING, 102_[1-3] PENDING): refusing to remove a user whose jobs run or wait')
    expect(error.hint).toMatch(/--force/)
    expect(error.details).toMatchObject({jobs: [{id: '101', state: 'RUNNING'}, {id: '102_[1-3]', state: 'PENDING'}]})
    expect(snapshot()).toEqual(before)
    expect(jobs.size).toBe(3)
    // squeue as root, against the cluster's slurm.conf, every user's jobs (matched by uid).
    expect(transport.slurmCalls).toEqual([['env', `SLURM_CONF=${FAKE_CONF}`, 'squeue', '--noheader', '--all', '--format=%i|%T|%U']])
  })

  it('--force cancels the jobs, waits until squeue shows none, then removes', async () => {
    const uid = (await new Directory(t, await readLdapConfig(t, s.ldapJsonPath)).getUser('rmu-erin'))!.uidNumber
    const jobs = new Map([
      ['101', {state: 'RUNNING', uid}],
      ['102_[1-3]', {state: 'PENDING', uid}],
      ['103', {state: 'RUNNING', uid: uid + 1000}],
    ])
    const transport = fakeSlurm(jobs)
    const r = await removeUser('rmu-erin', base({transport, jobs: {confPath: FAKE_CONF, pollMs: 10}, force: true, deleteHome: true}))
    expect(r.cancelledJobs).toEqual(['101', '102_[1-3]'])
    expect(r.removed.home).toBe(true)
    expect([...jobs.keys()]).toEqual(['103'])
    expect(transport.slurmCalls.map((a) => a.slice(2).join(' '))).toEqual([
      'squeue --noheader --all --format=%i|%T|%U',
      'scancel 101 102_[1-3]',
      'squeue --noheader --all --format=%i|%T|%U',
    ])
    expect(search('(uid=rmu-erin)')).toEqual([])
  })

  it('--force with jobs that do not end: a remote error after the wait; only the cancel was done', async () => {
    const uid = await addUser('rmu-fred')
    const jobs = new Map([['201', {state: 'RUNNING', uid}]])
    const transport = fakeSlurm(jobs, {stubborn: true})
    const error = await failure(removeUser('rmu-fred', base({transport, jobs: {confPath: FAKE_CONF, waitMs: 200, pollMs: 20}, force: true, deleteHome: true})))
    expect(error.kind).toBe('remote')
    expect(error.message).toMatch(/^removing rmu-fred failed: 1 job of uid \d+ still in squeue 0.2 s after scancel: 201 COMPLETING/)
    expect(error.message).toContain('Done: the jobs 201.')
    expect(error.message).toContain(`rm -rf -- ${join(homeRoot, 'rmu-fred')}`)
    expect(transport.slurmCalls.filter((a) => a.includes('scancel'))).toHaveLength(1) // cancelled once, not again
    expect(search('(uid=rmu-fred)')).toHaveLength(1)
    expect(existsSync(join(homeRoot, 'rmu-fred'))).toBe(true)
  })
})

describe('runRemoveUser (registry, lock, log, confirmation)', () => {
  const io = (o: Partial<Io> = {}, lines: string[] = []): Io => ({log: (m) => lines.push(m), note: () => {}, json: false, interactive: false, yes: true, renderer: 'silent', ...o})
  const layout = () => ({ldapJsonPath: s.ldapJsonPath, homeRoot, accounting: false as const, jobs: false as const})
  let dataDir = ''
  let saved: string | undefined

  beforeAll(() => {
    dataDir = join(work, 'data')
    clusterRegistry(dataDir).create({name: 'tst', provider: 'local', createdAt: new Date().toISOString(), origin: 'created', mgmt: {host: 'localhost', user: 'root'}})
    saved = process.env.CITC_DATA_DIR
    delete process.env.CITC_DATA_DIR
  })
  afterAll(() => {
    if (saved !== undefined) process.env.CITC_DATA_DIR = saved
  })

  it('without --yes and without a terminal: refused naming --yes, after the checks, nothing changed', async () => {
    const before = snapshot()
    const error = await failure(runRemoveUser(io({yes: false}), {username: 'rmu-fred', deleteHome: true, force: false, wait: false}, dataDir, {layout: layout()}))
    expect(error.kind).toBe('usage')
    expect(error.message).toMatch(/^Remove rmu-fred \(uid \d+, Test User\) from tst: delete the directory entry uid=rmu-fred,.*, DELETE the home .*rmu-fred and everything in it\? — needs a confirmation/)
    expect(error.hint).toBe('pass --yes to confirm')
    // An unknown user is said before any question.
    const unknown = await failure(runRemoveUser(io({yes: false}), {username: 'rmu-fredd', deleteHome: false, force: false, wait: false}, dataDir, {layout: layout()}))
    expect(unknown.message).toContain('did you mean "rmu-fred"?')
    expect(snapshot()).toEqual(before)
  })

  it('a "no" on the terminal cancels (exit 130), nothing changed', async () => {
    const asked: string[] = []
    const prompts = {confirm: async (q: {message: string}) => (asked.push(q.message), false)} as unknown as Prompts
    const before = snapshot()
    const error = await failure(runRemoveUser(io({yes: false, interactive: true, prompts}), {username: 'rmu-fred', deleteHome: false, force: false, wait: false}, dataDir, {layout: layout()}))
    expect(error.exitCode).toBe(130)
    expect(asked).toEqual([expect.stringMatching(/^Remove rmu-fred .*: delete the directory entry uid=rmu-fred,[^;]*; the home .*rmu-fred is kept\?$/)])
    expect(snapshot()).toEqual(before)
  })

  it('with --yes: removes, logs, says what was kept, and releases the lock', async () => {
    const lines: string[] = []
    const r = await runRemoveUser(io({}, lines), {username: 'rmu-fred', deleteHome: false, force: false, wait: false}, dataDir, {layout: layout()})
    expect(r).toMatchObject({cluster: 'tst', user: 'rmu-fred', removed: {directory: `uid=rmu-fred,${s.peopleDn}`, slurmAccounts: [], home: false}, cancelledJobs: []})
    expect(lines).toEqual([`Removed rmu-fred (uid ${r.uid}): deleted the directory entry uid=rmu-fred,${s.peopleDn}; kept the home ${join(homeRoot, 'rmu-fred')} (pass --delete-home to delete it).`])
    expect(readFileSync(r.logFile, 'utf8')).toContain('ldapdelete -x -H')
    expect(readFileSync(r.logFile, 'utf8')).not.toContain(readFileSync(s.adminPasswordFile, 'utf8'))
    expect(existsSync(clusterRegistry(dataDir).paths('tst').lock)).toBe(false)
    expect(search('(uid=rmu-fred)')).toEqual([])
  })
})
