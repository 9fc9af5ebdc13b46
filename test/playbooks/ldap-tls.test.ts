// The directory over TLS (issue #25, item 3), with real components: the ldap role's tls.yml (its
// ldap-cert program, run by ansible-playbook) makes the cluster CA and a server certificate for a real
// slapd of the test's own, which serves ldaps on a network the test made; a real nslcd on a "machine"
// (namespaces, test/helpers/machines.ts), configured by the nss role as node.yml configures a joined
// machine, resolves a directory user over TLS with tls_reqcert demand. The same nslcd refuses the
// server once its certificate comes from another CA, and says why. Renewal: a second run changes
// nothing; a certificate expiring within 30 days is reissued by the daily job, and slapd serves the
// new one without a restart; so is one whose names changed. Needs root (namespaces, a bridge).
// Everything is stopped by PID.
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'
import {clusterNetwork, type ClusterNetwork, type Machine, machineRootfs, startMachine} from '../helpers/machines.js'
import {freePort} from '../helpers/slurm.js'
import {type SlapdSandbox, startSlapd} from '../helpers/slapd.js'

const PLAYBOOKS = join(ROOT, 'playbooks')
const env = {...process.env, ANSIBLE_CONFIG: join(PLAYBOOKS, 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(PLAYBOOKS, 'roles'), ANSIBLE_NOCOLOR: '1', LC_ALL: 'C.UTF-8'}
const USER = {name: 'tlsalice', uid: 23456}

let work: string
let net: ClusterNetwork | undefined
let slapd: SlapdSandbox | undefined
let machine: Machine | undefined
let tlsPort: number
let ldapsUri: string

/** The role's variables for this test: every path in its own directory, slapd's ldapi socket. */
function tlsVars(caDir: string, moreUris: string[] = []) {
  return {
    cluster_name: 'tlstest',
    citc_etc_dir: join(work, caDir),
    citc_secrets_dir: join(work, caDir, 'secrets'),
    citc_programs_dir: join(work, 'programs'),
    ldap_tls_dir: join(work, 'slapd-tls'),
    ldap_tls_renew_cron: join(work, 'cron.daily', 'citc-ldap-cert'),
    ldap_ldapi_uri: slapd!.ldapiUri,
    citc_slapd_uris: ['ldap://127.0.0.1/', ldapsUri, 'ldapi:///', ...moreUris],
  }
}

function playbook(args: string[], vars: Record<string, unknown>, name: string) {
  const varsFile = join(work, `${name}.json`)
  writeFileSync(varsFile, JSON.stringify(vars), {mode: 0o600})
  const r = spawnSync('ansible-playbook', [...args, '-e', `@${join(PLAYBOOKS, 'group_vars', 'all.yml')}`, '-e', `@${varsFile}`], {encoding: 'utf8', env, timeout: 300_000})
  return {status: r.status, out: `${r.stdout}${r.stderr}`}
}

/** tls.yml on this machine, as listen.yml imports it on the management node. */
function runTls(caDir: string, name: string, moreUris: string[] = []) {
  const play = join(work, 'tls.yml')
  writeFileSync(play, '- hosts: all\n  gather_facts: true\n  gather_subset: [min]\n  tasks:\n    - ansible.builtin.import_role: {name: ldap, tasks_from: tls}\n')
  return playbook(['-i', 'localhost,', '-c', 'local', play], tlsVars(caDir, moreUris), name)
}

const x509 = (file: string, ...what: string[]) => execFileSync('openssl', ['x509', '-in', file, '-noout', ...what], {encoding: 'utf8'})
/** The certificate slapd hands out on ldaps right now (serial=…). */
const servedSerial = () => {
  const pem = execFileSync('openssl', ['s_client', '-connect', `${net!.hostAddr}:${tlsPort}`, '-showcerts'], {input: '', encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'], timeout: 15_000})
  return execFileSync('openssl', ['x509', '-noout', '-serial'], {input: pem, encoding: 'utf8'}).trim()
}
const mode = (file: string) => (statSync(file).mode & 0o777).toString(8)

describe('the directory over TLS: cluster CA, slapd on ldaps, nslcd with tls_reqcert demand', () => {
  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('this test needs root (namespaces, a bridge): bash .ci/run runs it so')
    work = mkdtempSync(join(tmpdir(), 'citc-ldap-tls-'))
    for (const d of ['ca1', 'ca2', 'cron.daily']) mkdirSync(join(work, d))
    const rootfs = await machineRootfs()
    net = await clusterNetwork()
    tlsPort = await freePort()
    ldapsUri = `ldaps://${net.hostAddr}:${tlsPort}/`
    slapd = await startSlapd({ldapi: true, extraUris: [ldapsUri]})
    execFileSync('ldapadd', ['-x', '-H', slapd.uri, '-D', slapd.adminDn, '-y', slapd.adminPasswordFile], {
      input: `dn: uid=${USER.name},${slapd.peopleDn}
objectClass: inetOrgPerson
objectClass: posixAccount
uid: ${USER.name}
cn: TLS Alice
sn: Alice
uidNumber: ${USER.uid}
gidNumber: 100
homeDirectory: /home/${USER.name}
loginShell: /bin/bash
`,
      stdio: ['pipe', 'ignore', 'pipe'],
    })
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-ldap-tls-test', '-f', join(work, 'id')])
    machine = await startMachine({net, name: 'tlsnode', index: 1, rootfs, authorizedKey: readFileSync(join(work, 'id.pub'), 'utf8')})
  }, 1_600_000)

  afterAll(async () => {
    await machine?.destroy().catch((e: unknown) => console.error(e))
    await slapd?.stop()
    await net?.close()
    if (work) rmSync(work, {recursive: true, force: true})
  }, 120_000)

  it('makes the cluster CA and a certificate for the address slapd serves ldaps on, and slapd serves it', () => {
    const r = runTls('ca1', 'tls1')
    expect(r.out).toMatch(/localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    const ca = {key: join(work, 'ca1', 'secrets', 'cluster-ca.key'), cert: join(work, 'ca1', 'cluster-ca.crt')}
    const tls = join(work, 'slapd-tls')
    expect(mode(ca.key)).toBe('600')
    expect(statSync(ca.key).uid).toBe(0)
    expect(mode(ca.cert)).toBe('644')
    expect(x509(ca.cert, '-text')).toMatch(/CA:TRUE/)
    // About ten years for the CA, one year for the server.
    const days = (file: string) => (Date.parse(x509(file, '-enddate').trim().replace('notAfter=', '')) - Date.now()) / 86_400_000
    expect(days(ca.cert)).toBeGreaterThan(3640)
    expect(days(join(tls, 'slapd.crt'))).toBeGreaterThan(360)
    expect(days(join(tls, 'slapd.crt'))).toBeLessThan(370)
    // The key: slapd's user only.
    expect(mode(join(tls, 'slapd.key'))).toBe('600')
    expect(statSync(join(tls, 'slapd.key')).uid).toBe(Number(execFileSync('id', ['-u', 'openldap'], {encoding: 'utf8'}).trim()))
    expect(x509(join(tls, 'slapd.crt'), '-text')).toContain(`IP Address:${net!.hostAddr}`)
    expect(execFileSync('openssl', ['verify', '-CAfile', ca.cert, join(tls, 'slapd.crt')], {encoding: 'utf8'})).toMatch(/: OK$/m)
    // slapd's cn=config names the files, and it hands out that certificate on ldaps.
    const config = execFileSync('ldapsearch', ['-Q', '-LLL', '-Y', 'EXTERNAL', '-H', slapd!.ldapiUri!, '-b', 'cn=config', '-s', 'base', 'olcTLSCertificateFile'], {encoding: 'utf8'})
    expect(config).toContain(`olcTLSCertificateFile: ${tls}/slapd.crt`)
    expect(servedSerial()).toBe(x509(join(tls, 'slapd.crt'), '-serial').trim())
    // The daily job (no systemd here: cron.daily).
    expect(mode(join(work, 'cron.daily', 'citc-ldap-cert'))).toBe('755')
  }, 300_000)

  it('changes nothing on a second run while the certificate is good', () => {
    const before = x509(join(work, 'slapd-tls', 'slapd.crt'), '-serial')
    const r = runTls('ca1', 'tls2')
    expect(r.out).toMatch(/TASK \[ldap : Make the cluster CA and slapd's certificate[^\n]*\n(?:[^\n]*\n)*?ok: \[localhost\]/)
    expect(r.out).toMatch(/localhost\s+: ok=\d+\s+changed=0\s+unreachable=0\s+failed=0/)
    expect(x509(join(work, 'slapd-tls', 'slapd.crt'), '-serial')).toBe(before)
  }, 300_000)

  it('the daily job reissues a certificate that expires within 30 days, and slapd serves it without a restart', () => {
    const tls = join(work, 'slapd-tls')
    // The same key and names, signed by the same CA, for 10 days only.
    const short = join(work, 'short.crt')
    const csr = execFileSync('openssl', ['req', '-new', '-key', join(tls, 'slapd.key'), '-subj', '/CN=short'], {encoding: 'utf8'})
    writeFileSync(join(work, 'ext.cnf'), `[ext]\nsubjectAltName=IP:${net!.hostAddr}\n`)
    execFileSync('openssl', ['x509', '-req', '-CA', join(work, 'ca1', 'cluster-ca.crt'), '-CAkey', join(work, 'ca1', 'secrets', 'cluster-ca.key'), '-set_serial', '4242', '-days', '10', '-extfile', join(work, 'ext.cnf'), '-extensions', 'ext', '-out', short], {input: csr, stdio: ['pipe', 'ignore', 'pipe']})
    writeFileSync(join(tls, 'slapd.crt'), readFileSync(short))
    const pid = slapd!.pid
    const r = spawnSync(join(work, 'cron.daily', 'citc-ldap-cert'), [], {encoding: 'utf8', timeout: 60_000})
    expect(r.stderr).toBe('')
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/issued slapd's certificate \(it expires within 30 days\)/)
    expect(x509(join(tls, 'slapd.crt'), '-serial').trim()).not.toBe('serial=1092')
    expect(x509(join(tls, 'slapd.crt'), '-checkend', String(300 * 86_400))).toMatch(/will not expire/)
    expect(servedSerial()).toBe(x509(join(tls, 'slapd.crt'), '-serial').trim())
    expect(slapd!.pid).toBe(pid)
    expect(() => process.kill(pid, 0)).not.toThrow()
  }, 120_000)

  it('reissues the certificate when slapd serves ldaps on another address (a machine joined: joined-management.yml)', () => {
    const r = runTls('ca1', 'tls-names', ['ldaps://192.0.2.10/'])
    expect(r.out).toMatch(/localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    expect(r.out).toContain("issued slapd's certificate (its names changed)")
    const text = x509(join(work, 'slapd-tls', 'slapd.crt'), '-text')
    expect(text).toContain('IP Address:192.0.2.10')
    expect(text).toContain(`IP Address:${net!.hostAddr}`)
    expect(servedSerial()).toBe(x509(join(work, 'slapd-tls', 'slapd.crt'), '-serial').trim())
  }, 300_000)

  it('nslcd on a joined machine (role nss) resolves a directory user over ldaps with the cluster CA', () => {
    const known = join(work, 'known_hosts')
    writeFileSync(known, `${machine!.address} ${machine!.hostKey}\n`)
    const play = join(work, 'node.yml')
    // node.yml's play for the nss role (its other roles need a controller): citc_live_node, no systemd.
    writeFileSync(play, '- hosts: all\n  gather_facts: true\n  gather_subset: [min]\n  vars: {citc_live_node: true, citc_systemd: false}\n  roles: [nss]\n')
    const r = playbook(
      ['-i', `${machine!.address},`, '-c', 'ssh', '-u', 'root', '--private-key', join(work, 'id'), play],
      {
        ansible_ssh_common_args: `-o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${known}`,
        cluster_name: 'tlstest',
        ldap_uri: ldapsUri,
        ldap_tls_ca_cert: join(work, 'ca1', 'cluster-ca.crt'),
      },
      'node',
    )
    expect(r.out).toMatch(/: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    const conf = machine!.exec(['cat', '/etc/nslcd.conf']).stdout
    expect(conf).toContain(`uri ${ldapsUri}`)
    expect(conf).toMatch(/^tls_reqcert demand$/m)
    expect(conf).toMatch(/^tls_cacertfile \/etc\/citc-cluster-ca\.crt$/m)
    expect(machine!.exec(['cat', '/etc/citc-cluster-ca.crt']).stdout).toBe(readFileSync(join(work, 'ca1', 'cluster-ca.crt'), 'utf8'))
    const user = machine!.exec(['getent', 'passwd', USER.name], {timeoutMs: 30_000})
    expect(user.stdout).toBe(`${USER.name}:*:${USER.uid}:100:TLS Alice:/home/${USER.name}:/bin/bash\n`)
  }, 600_000)

  it('the same nslcd resolves nothing from a server whose certificate another CA signed, and says why', async () => {
    // Another cluster's CA: ldap-cert finds slapd's certificate not valid for it and issues one of its own.
    const r = runTls('ca2', 'tls-other-ca')
    expect(r.out).toMatch(/localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    expect(r.out).toContain('it is not valid for the cluster CA')
    expect(execFileSync('openssl', ['verify', '-CAfile', join(work, 'ca2', 'cluster-ca.crt'), join(work, 'slapd-tls', 'slapd.crt')], {encoding: 'utf8'})).toMatch(/: OK$/m)
    // nslcd in the foreground with its debug log and the LDAP library's (-d -d; the machine has no
    // syslog), in place of the service's.
    const m = machine!
    expect(m.exec(['service', 'nslcd', 'stop']).status).toBe(0)
    const started = m.exec(['sh', '-c', 'nslcd -d -d >/tmp/nslcd-debug.log 2>&1 & echo $!'])
    const pid = started.stdout.trim()
    try {
      // Asked only once it accepts requests: before, NSS would fail without asking it.
      expect(m.exec(['sh', '-c', 'i=0; until grep -q "accepting connections" /tmp/nslcd-debug.log; do i=$((i+1)); [ $i -lt 100 ] || exit 1; sleep 0.1; done']).status).toBe(0)
      const user = m.exec(['getent', 'passwd', USER.name], {timeoutMs: 60_000})
      const log = m.exec(['cat', '/tmp/nslcd-debug.log']).stdout
      // It was asked, and went to the server.
      expect(log).toContain(`<passwd="${USER.name}"> DEBUG: ldap_simple_bind_s(NULL,NULL) (uri="${ldapsUri}")`)
      expect(user.stdout).toBe('')
      expect(user.status).toBe(2)
      // The LDAP library's own words (nslcd -d -d): the server's certificate is not the cluster CA's.
      expect(log).toContain('TLS: peer cert untrusted or revoked')
    } finally {
      m.exec(['kill', pid])
    }
  }, 300_000)
})
