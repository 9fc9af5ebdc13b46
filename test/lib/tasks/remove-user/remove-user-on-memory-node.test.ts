// remove-user against an in-memory management node (test/doubles/memory-transport.ts): a one-person
// directory answers ldapsearch/ldapdelete, sacctmgr and squeue/scancel are scripted, the home lives in
// the node's map. What is checked: the order of the changes (jobs, then Slurm, then the entry, then
// the home), that sacctmgr and squeue run against the cluster's slurm.conf, and that a failure in the
// middle says what was done and what is left. The same workflow against a real slapd is
// test/lib/tasks/remove-user/remove-user.test.ts (integration).
import {describe, expect, it} from 'vitest'

import {CitcError} from '../../../../src/lib/errors.js'
import {removeUser, type RemoveUserOptions} from '../../../../src/lib/tasks/remove-user/remove-user.js'
import {MEMORY_CLUSTER, MEMORY_LDAP} from '../../../doubles/memory-node.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const LDAP = MEMORY_LDAP
const CLUSTER = MEMORY_CLUSTER
const ALICE = `dn: uid=alice,${LDAP.peopleDn}
objectClass: inetOrgPerson
objectClass: posixAccount
uid: alice
uidNumber: 10001
gidNumber: 100
cn: Alice Liddell
homeDirectory: /mnt/shared/home/alice
`

/** A node with alice: her entry, her home, associations in two accounts, and `jobs` (id → state) of her uid. */
function managementNode(jobs = new Map<string, string>()) {
  let entry = true
  const t = new MemoryTransport({
    files: {'/etc/citc/ldap.json': JSON.stringify(LDAP), '/etc/citc/cluster.json': JSON.stringify(CLUSTER), '/mnt/shared/home/alice/.bashrc': '# bashrc\n'},
    dirs: ['/mnt/shared/home/alice/.ssh'],
  })
    .on(['ldapsearch'], (argv) => {
      const filter = argv[argv.indexOf('-s') + 2]
      if (filter === '(&(objectClass=posixAccount)(uid=alice))' || filter === '(objectClass=posixAccount)') return {stdout: entry ? ALICE : ''}
      if (filter.startsWith('(&(objectClass=posixAccount)(uid=')) return {stdout: ''}
      return {exitCode: 1, stderr: `the test directory does not know the filter ${filter}`}
    })
    .on(['ldapdelete'], () => (entry ? ((entry = false), {}) : {exitCode: 32, stderr: 'No such object'}))
    .on((a) => a[0] === 'sh' && a[2].startsWith('test -e'), (argv, _opts, node) => (node.exists(argv[4]) ? {} : {exitCode: 1}))
    // Every user's jobs (squeue as root): alice's (uid 10001), and one of someone else's.
    .on((a) => a.includes('squeue'), () => ({stdout: [...[...jobs].map(([id, state]) => `${id}|${state}|10001`), '77|RUNNING|10002'].join('\n') + '\n'}))
    .on((a) => a.includes('scancel'), (argv) => {
      for (const id of argv.slice(argv.indexOf('scancel') + 1)) jobs.delete(id)
      return {}
    })
    .on((a) => a.includes('sacctmgr') && a.includes('show'), {stdout: 'mem\nphysics\n'})
    .on((a) => a.includes('sacctmgr') && a.includes('delete'), {stdout: ' Deleting users...\n  alice\n'})
  return t
}

const options = (t: MemoryTransport, more: Partial<RemoveUserOptions> = {}): RemoveUserOptions => ({transport: t, renderer: 'silent', deleteHome: false, force: false, jobs: {pollMs: 1}, ...more})

/** What changed the node, in order: every command but reads. */
const changing = (t: MemoryTransport) =>
  t.commands().flatMap((argv) => {
    if (['ldapsearch', 'sh'].includes(argv[0]) || argv.includes('squeue') || (argv.includes('sacctmgr') && argv.includes('show'))) return []
    return [argv.slice(argv[0] === 'env' ? 2 : 0).join(' ')]
  })

describe('removeUser on a node', () => {
  it('--force --delete-home: cancels the jobs, then Slurm, the entry, the home, in that order', async () => {
    const t = managementNode(new Map([['12', 'RUNNING'], ['13', 'PENDING']]))
    const r = await removeUser('alice', options(t, {force: true, deleteHome: true}))
    expect(r).toEqual({
      user: 'alice',
      uid: 10_001,
      home: '/mnt/shared/home/alice',
      removed: {directory: `uid=alice,${LDAP.peopleDn}`, slurmAccounts: ['mem', 'physics'], home: true},
      cancelledJobs: ['12', '13'],
    })
    expect(changing(t)).toEqual([
      'scancel 12 13',
      'sacctmgr -i delete user where name=alice',
      `ldapdelete -x -H ${LDAP.uri} -D ${LDAP.adminDn} -y ${LDAP.adminPasswordFile} uid=alice,${LDAP.peopleDn}`,
      'rm -rf -- /mnt/shared/home/alice',
    ])
    expect(t.exists('/mnt/shared/home/alice')).toBe(false)
    // Slurm's tools against the cluster's slurm.conf (cluster.json's confPath).
    const slurm = t.commands().filter((a) => a.some((w) => ['sacctmgr', 'squeue', 'scancel'].includes(w)))
    expect(slurm.length).toBeGreaterThan(0)
    expect(slurm.every((a) => a[0] === 'env' && a[1] === `SLURM_CONF=${CLUSTER.confPath}`)).toBe(true)
  })

  it('the associations are read before anything changes, and the home is kept by default', async () => {
    const t = managementNode()
    const r = await removeUser('alice', options(t))
    expect(r.removed).toEqual({directory: `uid=alice,${LDAP.peopleDn}`, slurmAccounts: ['mem', 'physics'], home: false})
    expect(t.exists('/mnt/shared/home/alice/.bashrc')).toBe(true)
    expect(t.commands().find((a) => a.includes('sacctmgr'))!.slice(2)).toEqual(['sacctmgr', '-n', '-P', 'show', 'association', 'where', 'user=alice', 'format=account'])
    expect(changing(t)).toEqual(['sacctmgr -i delete user where name=alice', `ldapdelete -x -H ${LDAP.uri} -D ${LDAP.adminDn} -y ${LDAP.adminPasswordFile} uid=alice,${LDAP.peopleDn}`])
  })

  it('a "no" at the confirmation changes nothing', async () => {
    const t = managementNode(new Map([['12', 'RUNNING']]))
    const seen: string[] = []
    const error = await removeUser('alice', options(t, {force: true, deleteHome: true, confirm: async (p) => {
      seen.push(`${p.jobs.length} jobs, ${p.slurmAccounts!.join('+')}, ${p.home}`)
      throw new CitcError('cancelled', 'cancelled: nothing was changed')
    }})).catch((e: unknown) => e)
    expect(error).toMatchObject({exitCode: 130})
    expect(seen).toEqual(['1 jobs, mem+physics, /mnt/shared/home/alice'])
    expect(changing(t)).toEqual([])
  })

  it('sacctmgr failing: nothing else is done, and the error lists what is left', async () => {
    const t = managementNode()
    t.on((a) => a.includes('sacctmgr') && a.includes('delete'), {exitCode: 1, stderr: 'sacctmgr: error: Job(s) active, cancel job(s) before remove'})
    const error = (await removeUser('alice', options(t, {deleteHome: true})).catch((e: unknown) => e)) as CitcError
    expect(error.exitCode).toBe(4)
    expect(error.message).toMatch(/^removing alice failed: sacctmgr failed on the memory node \(exit 1\)/)
    expect(error.message).toContain('Nothing had been changed yet.')
    expect(error.details).toMatchObject({done: [], left: [{what: 'the Slurm associations of alice'}, {what: `the directory entry uid=alice,${LDAP.peopleDn}`}, {what: 'the home /mnt/shared/home/alice'}]})
    expect(changing(t)).toEqual(['sacctmgr -i delete user where name=alice'])
    expect(t.exists('/mnt/shared/home/alice')).toBe(true)
  })

  it('ldapdelete failing after Slurm: the error says the associations are gone and how to finish', async () => {
    const t = managementNode()
    t.on(['ldapdelete'], {exitCode: 50, stderr: 'Insufficient access'})
    const error = (await removeUser('alice', options(t, {deleteHome: true})).catch((e: unknown) => e)) as CitcError
    expect(error.exitCode).toBe(4)
    expect(error.message).toContain('Done: the Slurm associations of alice.')
    expect(error.message).toContain(`ldapdelete -x -H ${LDAP.uri} -D ${LDAP.adminDn} -y ${LDAP.adminPasswordFile} 'uid=alice,${LDAP.peopleDn}'`)
    expect(error.message).toContain("rm -rf -- /mnt/shared/home/alice")
    expect(t.exists('/mnt/shared/home/alice')).toBe(true)
  })

  it('Ctrl-C while waiting for cancelled jobs: exit 130, nothing after the cancel was done', async () => {
    const t = managementNode(new Map([['12', 'RUNNING']]))
    const controller = new AbortController()
    // The job does not end; the second squeue (the first wait) is where Ctrl-C comes.
    t.on((a) => a.includes('scancel'), {})
    let asked = 0
    t.on((a) => a.includes('squeue'), () => {
      if (++asked === 2) controller.abort(new Error('test interrupt'))
      return {stdout: '12|COMPLETING|10001\n'}
    })
    const error = (await removeUser('alice', options(t, {force: true, signal: controller.signal, jobs: {pollMs: 1}})).catch((e: unknown) => e)) as CitcError
    expect(error).toBeInstanceOf(CitcError)
    expect(error.exitCode).toBe(130)
    expect(error.message).toContain('\nDone: the jobs 12.\nLeft (run `citc remove-user alice --force` again, or by hand on the management node):\n  the Slurm associations of alice')
    expect(error.details).toMatchObject({done: ['the jobs 12']})
    expect(changing(t)).toEqual(['scancel 12'])
  })

  it('an unknown user: exit 3 with the closest name, before any Slurm command', async () => {
    const t = managementNode()
    const error = (await removeUser('alcie', options(t)).catch((e: unknown) => e)) as CitcError
    expect(error).toMatchObject({exitCode: 3, message: 'USERNAME: no user "alcie" in the directory on the memory node; did you mean "alice"?'})
    expect(t.commands().filter((a) => a.includes('sacctmgr') || a.includes('squeue'))).toEqual([])
  })
})
