// add-user's workflow against an in-memory management node (test/doubles/memory-transport.ts): a
// small directory answers ldapsearch/ldapadd/ldapdelete from its entries, files and homes live in
// the node's map. What is checked: the order of changes, that the password is never in argv, that a
// taken name changes nothing, and that a failure undoes everything in reverse. The same workflow
// against a real slapd is test/lib/tasks/add-user/add-user-workflow.test.ts (integration).
import {generateKeyPairSync} from 'node:crypto'

import {describe, expect, it} from 'vitest'

import {CitcError, InvalidInputError} from '../../../../src/lib/errors.js'
import {createUsers, type CreateUsersOptions} from '../../../../src/lib/tasks/add-user/create-users.js'
import {get, type LdifEntry, parseLdif} from '../../../../src/lib/users/ldif.js'
import {parseUsersFile, prepareUsers, requestFromFlags} from '../../../../src/lib/users/request.js'
import {MEMORY_CLUSTER, MEMORY_LDAP} from '../../../doubles/memory-node.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const LDAP = MEMORY_LDAP
const CLUSTER = MEMORY_CLUSTER

/** An ed25519 public key line, as `ssh-keygen` writes it. */
function ed25519Line(comment: string): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({format: 'der', type: 'spki'}).subarray(-32)
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b])
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(raw)]).toString('base64')} ${comment}`
}

const prepare = (username: string) => prepareUsers([requestFromFlags({username, firstName: 'Alice', surname: 'Liddell', keys: [ed25519Line(`${username}@laptop`)]})])

/** A management node: citc's two JSON files, a home root, a skel, and a directory of `entries`. */
function managementNode(entries: string[] = []) {
  const directory = new Map<string, {ldif: string; entry: LdifEntry}>()
  const add = (ldif: string) => {
    const [entry] = parseLdif(ldif)
    directory.set(entry.dn.toLowerCase(), {ldif: ldif.trim(), entry})
  }
  for (const e of entries) add(e)
  const found = (list: {ldif: string}[]) => ({stdout: list.map((e) => e.ldif).join('\n\n') + (list.length ? '\n' : '')})
  const t = new MemoryTransport({
    files: {'/etc/citc/ldap.json': JSON.stringify(LDAP), '/etc/citc/cluster.json': JSON.stringify(CLUSTER), '/etc/skel/.bashrc': '# bashrc\n'},
    dirs: ['/mnt/shared/home'],
  })
    .on(['ldapsearch'], (argv) => {
      const base = argv[argv.indexOf('-b') + 1]
      const scope = argv[argv.indexOf('-s') + 1]
      const filter = argv[argv.indexOf('-s') + 2]
      const all = [...directory.values()]
      if (scope === 'base') return directory.has(base.toLowerCase()) ? found([directory.get(base.toLowerCase())!]) : {exitCode: 32, stderr: 'No such object'}
      const m = /^\((uid|uidNumber)=(.*)\)$/.exec(filter)
      if (!m) return {exitCode: 1, stderr: `the test directory does not know the filter ${filter}`}
      return found(all.filter((e) => (m[2] === '*' ? get(e.entry, m[1]) !== undefined : get(e.entry, m[1]) === m[2])))
    })
    .on(['ldapadd'], (_argv, opts) => {
      const [entry] = parseLdif(String(opts.stdin))
      if (directory.has(entry.dn.toLowerCase())) return {exitCode: 68, stderr: 'Already exists'}
      add(String(opts.stdin))
      return {}
    })
    .on(['ldapdelete'], (argv) => (directory.delete(argv.at(-1)!.toLowerCase()) ? {} : {exitCode: 32, stderr: 'No such object'}))
    // pathExists: `sh -c 'test -e "$1" || test -L "$1"' sh PATH`.
    .on((a) => a[0] === 'sh' && a[2].startsWith('test -e'), (argv, _opts, node) => (node.exists(argv[4]) ? {} : {exitCode: 1}))
    // No local account of that name or number on the node.
    .on(['getent', 'passwd'], {exitCode: 2})
    .on(['chown'])
    .on(['chmod'])
  return {t, directory}
}

/** sacctmgr's own arguments (after `env SLURM_CONF=…`). */
const sacctmgrArgs = (argv: string[]) => argv.slice(argv.indexOf('sacctmgr') + 1).join(' ')

const options = (t: MemoryTransport, more: Partial<CreateUsersOptions> = {}): CreateUsersOptions => ({transport: t, renderer: 'silent', accounting: false, verifyNss: false, ...more})

/** What changed the node, in order: files written, and every command but reads and checks. */
const READS = ['ldapsearch', 'getent', 'test', 'sh']
const changing = (t: MemoryTransport) =>
  t.calls.flatMap((c) => {
    if (c.op === 'writeFile') return [`write ${c.path}`]
    if (!c.argv || READS.includes(c.argv[0]) || (c.argv.includes('sacctmgr') && c.argv.includes('show'))) return []
    return [c.argv[0]]
  })

describe('createUsers on a node', () => {
  it('adds the entry, makes the home from skel with the keys and the password, and reports the user', async () => {
    const {t, directory} = managementNode()
    const users = await prepare('alice')
    const [created] = await createUsers(users, options(t))
    expect(created).toMatchObject({username: 'alice', uid: 10_001, gid: 100, name: 'Alice Liddell', home: '/mnt/shared/home/alice', shell: '/bin/bash', account: null, passwordFile: '/mnt/shared/home/alice/.password'})
    expect(created.keys).toEqual([expect.objectContaining({type: 'ssh-ed25519', bits: 256, comment: 'alice@laptop'})])

    const entry = directory.get('uid=alice,ou=people,dc=mem')!.entry
    expect([get(entry, 'uidNumber'), get(entry, 'homeDirectory'), get(entry, 'cn')]).toEqual(['10001', '/mnt/shared/home/alice', 'Alice Liddell'])
    expect(get(entry, 'userPassword')).toMatch(/^\{SSHA\}/)

    expect(t.text('/mnt/shared/home/alice/.bashrc')).toBe('# bashrc\n')
    expect(t.text('/mnt/shared/home/alice/.ssh/authorized_keys')).toContain(users[0].keys[0].line)
    expect(t.mode('/mnt/shared/home/alice/.ssh/authorized_keys')).toBe(0o600)
    expect(t.mode('/mnt/shared/home/alice/.password')).toBe(0o400)
    expect(t.commands()).toContainEqual(['chown', '-R', '--', '10001:100', '/mnt/shared/home/alice'])
    // What it made is listed on the node as it goes (made-so-far.ts: the entry before ldapadd), and the list removed once alice is whole.
    const LIST = 'write /var/lib/citc/pending/add-user-alice.json'
    expect(changing(t)).toEqual(['mkdir', LIST, 'ldapadd', 'mkdir', 'mkdir', LIST, 'cp', 'mkdir', 'write /mnt/shared/home/alice/.ssh/authorized_keys', 'write /mnt/shared/home/alice/.password', 'chown', 'chmod', 'rm'])
    expect(t.exists('/var/lib/citc/pending/add-user-alice.json')).toBe(false)
  })

  it('an add-user killed after ldapadd (its list left on the node): the next one undoes the entry, then makes alice whole', async () => {
    const {t, directory} = managementNode()
    const first = await prepare('alice')
    // As a killed run leaves it: the entry made, the list naming it, no home.
    await createUsers(first, options(t))
    t.put('/var/lib/citc/pending/add-user-alice.json', JSON.stringify({username: 'alice', made: [{kind: 'entry', dn: 'uid=alice,ou=People,dc=mem', uidNumber: 10_001}]}), 0o600)
    await t.run(['rm', '-rf', '--', '/mnt/shared/home/alice'])
    const [again] = await createUsers(await prepare('alice'), options(t))
    expect(again).toMatchObject({username: 'alice', home: '/mnt/shared/home/alice'})
    expect(directory.size).toBe(1)
    expect(t.exists('/mnt/shared/home/alice/.ssh/authorized_keys')).toBe(true)
    expect(t.exists('/var/lib/citc/pending/add-user-alice.json')).toBe(false)
    expect(t.commands().filter((a) => a[0] === 'ldapdelete')).toHaveLength(1)
  })

  it('a list naming an entry that now has another uidNumber (not the one that run made): it is left alone, and add-user refuses the name', async () => {
    const {t, directory} = managementNode()
    await createUsers(await prepare('alice'), options(t))
    t.put('/var/lib/citc/pending/add-user-alice.json', JSON.stringify({username: 'alice', made: [{kind: 'entry', dn: 'uid=alice,ou=People,dc=mem', uidNumber: 10_500}]}), 0o600)
    const error = (await createUsers(await prepare('alice'), options(t)).catch((e: unknown) => e)) as CitcError
    expect(error.exitCode).toBe(3)
    expect(directory.size).toBe(1)
    expect(t.commands().filter((a) => a[0] === 'ldapdelete')).toEqual([])
  })

  it('FIDO security keys land in authorized_keys exactly as given', async () => {
    // OpenSSH's test keys (openssh-portable regress/unittests/sshkey/testdata/ed25519_sk1.pub, ecdsa_sk1.pub).
    const sk = [
      'sk-ssh-ed25519@openssh.com AAAAGnNrLXNzaC1lZDI1NTE5QG9wZW5zc2guY29tAAAAICFo/k5LU8863u66YC9eUO2170QduohPURkQnbLa/dczAAAABHNzaDo= ED25519-SK test key #1',
      'sk-ecdsa-sha2-nistp256@openssh.com AAAAInNrLWVjZHNhLXNoYTItbmlzdHAyNTZAb3BlbnNzaC5jb20AAAAIbmlzdHAyNTYAAABBBGdVPkKOLUMZ7b6rZfS8BOHotic4NX4MmuyEmiuvkaeKlbb1F+5oNezRYHpcF6P104trNVEONCu1XX1CA7px+QUAAAAEc3NoOg== ECDSA-SK test key #1',
    ]
    const {t} = managementNode()
    const users = await prepareUsers([requestFromFlags({username: 'alice', firstName: 'Alice', surname: 'Liddell', keys: sk})])
    const [created] = await createUsers(users, options(t))
    expect(created.keys.map((k) => [k.type, k.bits, k.comment])).toEqual([
      ['sk-ssh-ed25519@openssh.com', 256, 'ED25519-SK test key #1'],
      ['sk-ecdsa-sha2-nistp256@openssh.com', 256, 'ECDSA-SK test key #1'],
    ])
    expect(t.text('/mnt/shared/home/alice/.ssh/authorized_keys')).toBe(`# Written by citc add-user.\n${sk.join('\n')}\n`)
  })

  it('never puts the password in argv or on a command’s stdin: only the hash goes to ldapadd', async () => {
    const {t} = managementNode()
    await createUsers(await prepare('alice'), options(t))
    const password = t.text('/mnt/shared/home/alice/.password')!.trim()
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/)
    for (const c of t.calls.filter((x) => x.op !== 'writeFile' || x.path !== '/mnt/shared/home/alice/.password')) {
      expect(JSON.stringify(c)).not.toContain(password)
    }
    // The bind password stays in its file on the node (-y FILE).
    for (const argv of t.commands().filter((a) => a[0].startsWith('ldap'))) expect(argv).toEqual(expect.arrayContaining(['-y', LDAP.adminPasswordFile]))
  })

  it('takes the next uidNumber above the directory’s highest', async () => {
    const {t} = managementNode([`dn: uid=old,${LDAP.peopleDn}\nuid: old\nuidNumber: 10041\n`])
    const [created] = await createUsers(await prepare('alice'), options(t))
    expect(created.uid).toBe(10_042)
  })

  it('a name the directory has already: exit 3 and nothing changed on the node', async () => {
    const {t} = managementNode([`dn: uid=alice,${LDAP.peopleDn}\nuid: alice\nuidNumber: 10001\n`])
    const error = await createUsers(await prepare('alice'), options(t)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).exitCode).toBe(3)
    expect((error as InvalidInputError).message).toContain('"alice" exists already in the directory (uid=alice,ou=People,dc=mem)')
    expect(changing(t)).toEqual([])
  })

  it('a home that is there already: exit 3, nothing changed', async () => {
    const {t} = managementNode()
    t.addDir('/mnt/shared/home/alice')
    const error = await createUsers(await prepare('alice'), options(t)).catch((e: unknown) => e)
    expect(error).toMatchObject({exitCode: 3, message: expect.stringContaining('/mnt/shared/home/alice exists already on the memory node')})
    expect(changing(t)).toEqual([])
  })

  it('Slurm accounting refuses the user: the account it made, the home and the entry are undone, in reverse (exit 4)', async () => {
    const {t, directory} = managementNode()
    const sacctmgr = (argv: string[]) => argv.slice(argv.indexOf('sacctmgr') + 1).join(' ')
    t.on((a) => a.includes('sacctmgr'), (argv) => {
      const args = sacctmgr(argv)
      if (args.startsWith('-n -P show account')) return {stdout: ''} // no account "mem" yet
      if (args.startsWith('-i add user')) return {exitCode: 1, stderr: 'sacctmgr: error: Problem talking to the database'}
      return {}
    })
    const error = (await createUsers(await prepare('alice'), options(t, {accounting: {}})).catch((e: unknown) => e)) as CitcError
    expect(error).toBeInstanceOf(CitcError)
    expect(error.exitCode).toBe(4)
    expect(error.message).toMatch(/^adding alice failed: sacctmgr failed on the memory node \(exit 1\)/)
    expect(error.message).toContain('Undone: the Slurm account mem; the home /mnt/shared/home/alice; the directory entry uid=alice,ou=People,dc=mem.')
    expect(error.details).toMatchObject({undone: ['the Slurm account mem', 'the home /mnt/shared/home/alice', 'the directory entry uid=alice,ou=People,dc=mem'], notUndone: [], failedUser: 'alice'})
    // Against the cluster's own slurm.conf (cluster.json's confPath).
    expect(t.commands().filter((a) => a.includes('sacctmgr')).every((a) => a[1] === `SLURM_CONF=${CLUSTER.confPath}`)).toBe(true)
    // The node is as it was.
    expect(directory.size).toBe(0)
    expect(t.exists('/mnt/shared/home/alice')).toBe(false)
    expect(t.commands().filter((a) => a.includes('sacctmgr')).map(sacctmgr)).toEqual([
      '-n -P show account where name=mem format=account',
      '-i add account mem Description=citc cluster mem Organization=mem',
      '-i add user alice Account=mem DefaultAccount=mem',
      '-i delete account where name=mem',
    ])
  })

  it('an --account slurmdbd does not have: exit 3 with the closest name and how to declare it, nothing changed', async () => {
    const {t} = managementNode()
    t.on((a) => a.includes('sacctmgr'), (argv) => (sacctmgrArgs(argv).startsWith('-n -P show account') ? {stdout: 'root\nmem\npainter\n'} : {exitCode: 1, stderr: 'not expected here'}))
    const users = await prepareUsers([requestFromFlags({username: 'bob', firstName: 'Bob', surname: 'Ross', keys: [ed25519Line('bob@easel')], account: 'painters'})])
    const error = (await createUsers(users, options(t, {accounting: {}})).catch((e: unknown) => e)) as InvalidInputError
    expect(error).toBeInstanceOf(InvalidInputError)
    expect(error.exitCode).toBe(3)
    expect(error.message).toBe('--account: the Slurm account "painters" does not exist in slurmdbd; did you mean "painter"?')
    expect(error.hint).toBe("declare it in accounts.yaml and run `citc accounts apply`, or leave --account out for the cluster's default account; nothing was changed")
    expect(changing(t)).toEqual([])
    expect(t.commands().filter((a) => a.includes('sacctmgr')).map(sacctmgrArgs)).toEqual(['-n -P show account format=account'])
  })

  it('account: in users.yaml that does not exist is reported at its line; with nothing close, the accounts are listed', async () => {
    const {t} = managementNode()
    t.on((a) => a.includes('sacctmgr'), {stdout: 'root\nmem\nphysics\n'})
    const key = ed25519Line('carol@lab')
    const text = `- {username: carol, firstName: Carol, surname: Danvers, keys: ["${key}"]}\n- username: dave\n  firstName: Dave\n  surname: Bowman\n  keys: ["${key}"]\n  account: chemistry\n`
    const users = await prepareUsers(parseUsersFile(text, 'users.yaml'))
    const error = (await createUsers(users, options(t, {accounting: {}})).catch((e: unknown) => e)) as InvalidInputError
    expect(error.exitCode).toBe(3)
    expect(error.message).toBe('users.yaml:6:3 [1].account: the Slurm account "chemistry" does not exist in slurmdbd (it has: mem, physics)')
    expect(changing(t)).toEqual([])
  })

  it('an --account that exists: the user joins it, and no account is made', async () => {
    const {t} = managementNode()
    t.on((a) => a.includes('sacctmgr'), {stdout: 'root\nmem\npainters\n'})
    const users = await prepareUsers([requestFromFlags({username: 'bob', firstName: 'Bob', surname: 'Ross', keys: [ed25519Line('bob@easel')], account: 'painters'})])
    const [created] = await createUsers(users, options(t, {accounting: {}}))
    expect(created.account).toBe('painters')
    expect(t.commands().filter((a) => a.includes('sacctmgr')).map(sacctmgrArgs)).toEqual([
      '-n -P show account format=account',
      '-i add user bob Account=painters DefaultAccount=painters',
    ])
  })

  it('an undo that fails is reported with the command to run by hand', async () => {
    const {t} = managementNode()
    t.on(['chown'], {exitCode: 1, stderr: 'chown: invalid user'})
    t.on(['ldapdelete'], {exitCode: 50, stderr: 'Insufficient access'})
    const error = (await createUsers(await prepare('alice'), options(t)).catch((e: unknown) => e)) as CitcError
    expect(error.exitCode).toBe(4)
    expect(error.message).toContain('Undone: the home /mnt/shared/home/alice.')
    expect(error.message).toContain('COULD NOT UNDO (remove by hand on the management node):')
    expect(error.message).toContain(`ldapdelete -x -H ${LDAP.uri} -D ${LDAP.adminDn} -y ${LDAP.adminPasswordFile} 'uid=alice,${LDAP.peopleDn}'`)
  })
})
