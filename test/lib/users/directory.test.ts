// Against a real slapd that this test starts in a temp dir on a free 127.0.0.1 port (never the system's).
import {execFileSync} from 'node:child_process'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CitcError, InvalidInputError} from '../../../src/lib/errors.js'
import {localTransport} from '../../../src/lib/transport/local.js'
import type {Transport} from '../../../src/lib/transport/types.js'
import {Directory, FIRST_UID, getentPasswd, readLdapConfig} from '../../../src/lib/users/directory.js'
import {get, parseLdif, sshaHash, type UserEntry} from '../../../src/lib/users/ldif.js'
import {prepareUsers, requestFromFlags} from '../../../src/lib/users/request.js'
import {type SlapdSandbox, startSlapd} from '../../helpers/slapd.js'

let s: SlapdSandbox
let dir: Directory
const argvSeen: string[][] = []
const stdinSeen: string[] = []

/** The local Transport, recording every argv and stdin (to assert what never appears there). */
function recording(inner: Transport): Transport {
  return {
    ...inner,
    run: (argv, opts) => {
      argvSeen.push(argv)
      if (opts?.stdin !== undefined) stdinSeen.push(String(opts.stdin))
      return inner.run(argv, opts)
    },
  }
}

/** ldapsearch with the system tool, as an outsider would see the directory. */
function search(filter: string, ...attrs: string[]) {
  const out = execFileSync('ldapsearch', ['-x', '-LLL', '-o', 'ldif-wrap=no', '-H', s.uri, '-D', s.adminDn, '-y', s.adminPasswordFile, '-b', s.baseDn, filter, ...attrs], {encoding: 'utf8'})
  return parseLdif(out)
}

const entry = (o: Partial<UserEntry> & {username: string; uidNumber: number}): UserEntry => ({
  firstName: 'First',
  surname: 'Last',
  gidNumber: 100,
  homeDirectory: `/mnt/shared/home/${o.username}`,
  loginShell: '/bin/bash',
  ...o,
})

/** The lowest uid ≥ `from` that this machine's NSS does not know (the directory's own are added on top). */
function firstFreeLocal(from: number): number {
  for (let n = from; ; n++) {
    try {
      execFileSync('getent', ['passwd', String(n)])
    } catch {
      return n
    }
  }
}

beforeAll(async () => {
  s = await startSlapd()
  const t = recording(localTransport())
  dir = new Directory(t, await readLdapConfig(t, s.ldapJsonPath))
})

afterAll(async () => {
  await s?.stop()
})

describe('Directory on a real slapd', () => {
  it('reads ldap.json (usersGid defaults to 100)', () => {
    expect(dir.config).toMatchObject({uri: s.uri, peopleDn: s.peopleDn, adminDn: s.adminDn, usersGid: 100})
  })

  it('ldap.json missing or wrong is a remote error naming the file', async () => {
    const t = localTransport()
    await expect(readLdapConfig(t, join(s.dir, 'nope.json'))).rejects.toThrow(/nope\.json does not exist on this machine/)
    const bad = join(s.dir, 'bad.json')
    writeFileSync(bad, JSON.stringify({uri: 'http://x', baseDn: 'dc=x'}))
    await expect(readLdapConfig(t, bad)).rejects.toThrow(/bad\.json on this machine is not what citc wrote: uri: must be an ldap/)
  })

  it('the first uid is 10001 (or the next one free on this machine)', async () => {
    expect(await dir.nextUidNumber()).toBe(firstFreeLocal(FIRST_UID))
  })

  it('adds a user, readable by ldapsearch, with the next uid after it', async () => {
    const uid = await dir.nextUidNumber()
    const dn = await dir.add(entry({username: 'alice', firstName: 'Alice', surname: 'Liddell', uidNumber: uid}))
    expect(dn).toBe(`uid=alice,${s.peopleDn}`)
    const [e] = search('(uid=alice)', '*')
    expect(e.dn).toBe(dn)
    expect(e.attrs.get('objectClass')).toEqual(['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'posixAccount'])
    expect([get(e, 'cn'), get(e, 'sn'), get(e, 'givenName'), get(e, 'uidNumber'), get(e, 'gidNumber'), get(e, 'homeDirectory'), get(e, 'loginShell')]).toEqual([
      'Alice Liddell', 'Liddell', 'Alice', String(uid), '100', '/mnt/shared/home/alice', '/bin/bash',
    ])
    expect(await dir.exists('alice')).toBe(true)
    expect(await dir.exists('bob')).toBe(false)
    expect(await dir.nextUidNumber()).toBe(firstFreeLocal(uid + 1))
    expect(await dir.getUser('alice')).toMatchObject({username: 'alice', uidNumber: uid, gidNumber: 100, name: 'Alice Liddell', firstName: 'Alice', surname: 'Liddell', home: '/mnt/shared/home/alice'})
  })

  it('nasty names are stored literally: newlines, commas, quotes, $(id), unicode', async () => {
    const before = search('(objectClass=*)', 'dn').map((e) => e.dn)
    const surname = 'x\ndn: cn=evil,dc=citc,dc=local\nobjectClass: organizationalRole'
    const firstName = 'Zoë, "the" +1 $(id) `id` ;'
    await dir.add(entry({username: 'nasty', firstName, surname, uidNumber: await dir.nextUidNumber()}))
    const [e] = search('(uid=nasty)', '*')
    expect(get(e, 'sn')).toBe(surname)
    expect(get(e, 'givenName')).toBe(firstName)
    expect(get(e, 'cn')).toBe(`${firstName} ${surname}`)
    const after = search('(objectClass=*)', 'dn').map((e) => e.dn)
    expect(after.filter((d) => !before.includes(d))).toEqual([`uid=nasty,${s.peopleDn}`]) // one entry, no cn=evil
    expect(search('(cn=evil)')).toEqual([])
  })

  it('a DN value with commas and plus signs stays one RDN (no injected ou=)', async () => {
    const uid = await dir.nextUidNumber()
    const dn = await dir.add(entry({username: 'a,ou=Groups+cn=x', uidNumber: uid}))
    expect(dn).toBe(`uid=a\\,ou=Groups\\+cn=x,${s.peopleDn}`)
    const [e] = search(`(uidNumber=${uid})`, 'uid')
    expect(get(e, 'uid')).toBe('a,ou=Groups+cn=x')
    expect(await dir.search('(objectClass=*)', ['dn'], {base: s.groupsDn})).toEqual([{dn: s.groupsDn, attrs: new Map()}]) // nothing landed in Groups
    expect(await dir.deleteDn(dn)).toBe(true)
  })

  it('search filter values are escaped: "*" finds nobody', async () => {
    expect(await dir.exists('*')).toBe(false)
    expect(await dir.exists('alice)(uid=*')).toBe(false)
  })

  it('a duplicate is refused and the directory is unchanged', async () => {
    const before = s.dump()
    const error = await dir.add(entry({username: 'alice', uidNumber: 99_999})).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('invalidInput')
    expect((error as CitcError).message).toMatch(/has an entry uid=alice,ou=People,dc=citc,dc=local already/)
    expect(s.dump()).toBe(before)
  })

  it('validation refuses injection attempts before the directory is touched', async () => {
    const before = s.dump()
    const calls = argvSeen.length
    const error = await prepareUsers([
      requestFromFlags({username: 'bob;touch /tmp/x', firstName: 'Bob', surname: 'x\ndn: cn=evil', keys: ['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGd7rw/ZLqDbK3xBVm0K2vsi9TJvSnf0ipY3SwHPV6UF']}),
    ]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).problems).toEqual([
      {where: 'USERNAME', message: expect.stringMatching(/"bob;touch \/tmp\/x" is not a valid login name/)},
      {where: '--surname', message: expect.stringMatching(/the surname contains a control character \(U\+000A/)},
    ])
    expect(existsSync('/tmp/x')).toBe(false)
    expect(argvSeen.length).toBe(calls)
    expect(s.dump()).toBe(before)
  })

  it('the stored password hash lets the user bind; the admin password never reaches argv or stdin', async () => {
    const password = 'pw-' + Math.random().toString(36).slice(2)
    await dir.add(entry({username: 'carol', uidNumber: await dir.nextUidNumber(), passwordHash: sshaHash(password)}))
    const pwFile = join(s.dir, 'carol-pw')
    writeFileSync(pwFile, password, {mode: 0o600})
    const who = execFileSync('ldapwhoami', ['-x', '-H', s.uri, '-D', `uid=carol,${s.peopleDn}`, '-y', pwFile], {encoding: 'utf8'})
    expect(who.trim()).toBe(`dn:uid=carol,${s.peopleDn}`)
    const admin = readFileSync(s.adminPasswordFile, 'utf8')
    expect(argvSeen.flat().some((a) => a.includes(admin))).toBe(false)
    expect(stdinSeen.some((x) => x.includes(admin) || x.includes(password))).toBe(false)
    expect(argvSeen.flat().some((a) => a.includes(password))).toBe(false)
  })

  it('lists users sorted, and undo (deleteDn) removes an entry; twice is harmless', async () => {
    const names = (await dir.listUsers()).map((u) => u.username)
    expect(names).toEqual(['alice', 'carol', 'nasty'])
    expect(await dir.deleteDn(dir.dn('carol'))).toBe(true)
    expect(await dir.exists('carol')).toBe(false)
    expect(await dir.deleteDn(dir.dn('carol'))).toBe(false)
    expect(search('(uid=carol)')).toEqual([])
  })

  it('getent passwd on the node: root is there, a directory-only name is not', async () => {
    const t = localTransport()
    expect(await getentPasswd(t, 'root')).toMatch(/^root:x:0:0:/)
    expect(await getentPasswd(t, 'citc-no-such-user-x')).toBeUndefined()
  })

  it('a wrong admin password is a remote error with a hint, not a crash', async () => {
    const wrong = join(s.dir, 'wrong-pw')
    writeFileSync(wrong, 'nope', {mode: 0o600})
    const bad = new Directory(localTransport(), {...dir.config, adminPasswordFile: wrong})
    const error = await bad.exists('alice').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).kind).toBe('remote')
    expect((error as CitcError).message).toMatch(/ldapsearch failed on this machine \(exit 49\)/)
    expect((error as CitcError).hint).toMatch(/refused the admin password/)
  })
})
