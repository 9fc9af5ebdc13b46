// `citc doctor --security`'s rules, pure: realistic `ss -H -ltnup` lines (a cloud node, a local one
// with and without joined machines), stat records as the collector prints them, exports(5) files, and
// the collector's NUL-separated output read back; and the whole check over a memory node (where the
// paths come from, what is said when cluster.json is not this cluster's). Each rule is shown passing and failing.
import {describe, expect, it} from 'vitest'

import {clusterCidr, directoryCheck, exportsCheck, homesCheck, reachOf, readableFilesCheck, secretFilesCheck, type SecurityLayout, socketsCheck} from '../../../../src/lib/tasks/doctor/security-checks.js'
import {parseCollectorOutput, parseStat} from '../../../../src/lib/tasks/doctor/security-collect.js'
import {parseExports, parseSsLine, type StatFact} from '../../../../src/lib/tasks/doctor/security-facts.js'
import {checkSecurityVia, securityLines, type SecurityReport} from '../../../../src/lib/tasks/doctor/check-security.js'
import {MANAGEMENT_CONTRACT_VERSION} from '../../../../src/lib/cluster/management-contract.js'
import type {ClusterRecord} from '../../../../src/lib/cluster/schema.js'
import {FAKE_EC2_SECTION} from '../../../doubles/cloud-api/ec2.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

// `ss -H -ltnup` on a cloud management node (Debian 12, iproute2 6.1), columns as ss pads them.
const SS_CLOUD = [
  'udp   UNCONN 0      0            0.0.0.0:68         0.0.0.0:*    users:(("dhclient",pid=512,fd=7))',
  'udp   UNCONN 0      0          127.0.0.1:323        0.0.0.0:*    users:(("chronyd",pid=601,fd=5))',
  'tcp   LISTEN 0      128          0.0.0.0:22         0.0.0.0:*    users:(("sshd",pid=702,fd=3))',
  'tcp   LISTEN 0      4096        10.0.1.5:6817       0.0.0.0:*    users:(("slurmctld",pid=1010,fd=6))',
  'tcp   LISTEN 0      2048         0.0.0.0:389        0.0.0.0:*    users:(("slapd",pid=990,fd=8))',
  'tcp   LISTEN 0      80         127.0.0.1:3306       0.0.0.0:*    users:(("mariadbd",pid=880,fd=21))',
  'tcp   LISTEN 0      128             [::]:22            [::]:*    users:(("sshd",pid=702,fd=4))',
  'tcp   LISTEN 0      4096               *:9100             *:*    users:(("prometheus-node",pid=1200,fd=3))',
  'tcp   LISTEN 0      4096   127.0.0.53%lo:53         0.0.0.0:*    users:(("systemd-resolve",pid=400,fd=14))',
]
const IP_ADDR = ['1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever preferred_lft forever', '2: ens4    inet 10.0.1.5/24 brd 10.0.1.255 scope global dynamic ens4\\       valid_lft 3000sec preferred_lft 3000sec']

const sockets = (lines: string[]) => lines.map(parseSsLine).filter((s) => s !== undefined)

const L: SecurityLayout = {
  etcCitc: '/etc/citc',
  etcSlurm: '/etc/slurm',
  secretsDir: '/etc/citc/secrets',
  mungeKey: '/etc/munge/munge.key',
  slurmdbdConf: '/etc/slurm/slurmdbd.conf',
  sharedDir: '/mnt/shared',
  sharedSlurmdbdConf: '/mnt/shared/etc/slurm/slurmdbd.conf',
  homeDir: '/mnt/shared/home',
}
const st = (path: string, type: string, mode: number, owner = 'root', group = 'root', target?: string): StatFact => ({path, type, mode, owner, group, size: 40, ...(target ? {target} : {})})
const failing = (c: {items: Array<{ok: boolean; subject: string}>}) => c.items.filter((i) => !i.ok).map((i) => i.subject)

describe('ss lines', () => {
  it('reads the protocol, address (brackets, %interface and * taken off), port and process', () => {
    expect(parseSsLine(SS_CLOUD[0])).toEqual({proto: 'udp', address: '0.0.0.0', port: 68, process: 'dhclient', pid: 512})
    expect(parseSsLine(SS_CLOUD[6])).toEqual({proto: 'tcp', address: '::', port: 22, process: 'sshd', pid: 702})
    expect(parseSsLine(SS_CLOUD[7])).toMatchObject({address: '*', port: 9100, process: 'prometheus-node'})
    expect(parseSsLine(SS_CLOUD[8])).toMatchObject({address: '127.0.0.53', port: 53})
    // No process column: ss cannot see it (another namespace).
    expect(parseSsLine('tcp LISTEN 0      128    0.0.0.0:2024 0.0.0.0:*')).toEqual({proto: 'tcp', address: '0.0.0.0', port: 2024})
    expect(parseSsLine('u_str LISTEN 0 4096 /run/x 123 * 0')).toBeUndefined()
  })

  it('who can reach an address', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].map(reachOf)).toEqual(['loopback', 'loopback', 'loopback'])
    expect(['0.0.0.0', '::', '*'].map(reachOf)).toEqual(['every interface', 'every interface', 'every interface'])
    expect(['10.0.1.5', '172.20.0.1', '192.168.3.4', 'fd00::2', 'fe80::1'].map(reachOf)).toEqual(Array(5).fill('cluster network'))
    expect(['203.0.113.5', '172.32.0.1', '2001:db8::1'].map(reachOf)).toEqual(Array(3).fill('a public address'))
    expect(clusterCidr(['127.0.0.1/8', '10.0.1.5/24'])).toBe('10.0.1.0/24')
    expect(clusterCidr(['192.0.2.2/24'])).toBeUndefined() // TEST-NET: public, not the cluster's
  })
})

describe('sockets', () => {
  const facts = {sockets: sockets(SS_CLOUD), addresses: IP_ADDR.map((l) => /inet (\S+)/.exec(l)![1])}

  it('a cloud node: SSH and DHCP everywhere are expected, the cluster network is fine, anything else everywhere is a finding', () => {
    const c = socketsCheck(facts, {thisMachine: false, joined: false})
    expect(c.ok).toBe(false)
    expect(failing(c)).toEqual(['tcp 0.0.0.0:389', 'tcp *:9100'])
    const slapd = c.items.find((i) => i.subject === 'tcp 0.0.0.0:389')!
    expect(slapd.summary).toBe('slapd (pid 990): every interface; it belongs on the cluster network (10.0.1.0/24)')
    expect(slapd.fix).toBe('iptables -I INPUT -p tcp --dport 389 ! -i lo ! -s 10.0.1.0/24 -j DROP')
    expect(c.items.find((i) => i.subject === 'tcp 10.0.1.5:6817')).toMatchObject({ok: true, summary: 'slurmctld (pid 1010): the cluster network'})
    expect(c.items.find((i) => i.subject === 'tcp [::]:22')).toMatchObject({ok: true, summary: 'sshd (pid 702): every interface (SSH, the way in)'})
    expect(c.items.find((i) => i.subject === 'udp 0.0.0.0:68')).toMatchObject({ok: true})
    expect(c.summary).toBe('9 listening sockets, 2 reachable from further than the cluster network')
  })

  it('the same daemons bound right: no finding', () => {
    const fixed = SS_CLOUD.map((l) => l.replace('0.0.0.0:389', '10.0.1.5:389').replace('*:9100', '10.0.1.5:9100'))
    expect(socketsCheck({...facts, sockets: sockets(fixed)}, {thisMachine: false, joined: false}).ok).toBe(true)
  })

  it('a local cluster: off loopback is a finding; with joined machines the cluster network is allowed, every interface still not', () => {
    const local = sockets([
      'tcp LISTEN 0 4096 0.0.0.0:6819 0.0.0.0:* users:(("slurmdbd",pid=26983,fd=6))',
      'tcp LISTEN 0 4096 10.0.1.5:6817 0.0.0.0:* users:(("slurmctld",pid=1010,fd=6))',
      'tcp LISTEN 0 2048 127.0.0.1:389 0.0.0.0:* users:(("slapd",pid=19084,fd=7))',
    ])
    const alone = socketsCheck({...facts, sockets: local}, {thisMachine: true, joined: false})
    expect(failing(alone)).toEqual(['tcp 10.0.1.5:6817', 'tcp 0.0.0.0:6819'])
    expect(alone.items.find((i) => i.subject === 'tcp 0.0.0.0:6819')?.fix).toBe('iptables -I INPUT -p tcp --dport 6819 ! -i lo -j DROP')
    const joined = socketsCheck({...facts, sockets: local}, {thisMachine: true, joined: true})
    expect(failing(joined)).toEqual(['tcp 0.0.0.0:6819'])
    expect(joined.items.find((i) => i.subject === 'tcp 0.0.0.0:6819')?.fix).toBe('iptables -I INPUT -p tcp --dport 6819 ! -i lo ! -s 10.0.1.0/24 -j DROP')
  })

  it("a local cluster with citc's guard loaded: Slurm's ports on every interface are not findings; other ports still are", () => {
    // `nft list table inet citc_local_guard` as nft 1.0.6 prints the role's table (one joined machine).
    const guard = [
      'table inet citc_local_guard {',
      '\tchain input {',
      '\t\ttype filter hook input priority filter; policy accept;',
      '\t\tip saddr { 10.250.25.2 } tcp dport 6817 accept',
      '\t\tiifname != "lo" tcp dport { 6817, 6819, 17001-47999 } tcp flags syn / fin,syn,rst,ack reject with tcp reset',
      '\t}',
      '}',
    ]
    const local = sockets([
      'tcp LISTEN 0 4096 0.0.0.0:6817 0.0.0.0:* users:(("slurmctld",pid=1010,fd=6))',
      'tcp LISTEN 0 4096 0.0.0.0:6819 0.0.0.0:* users:(("slurmdbd",pid=26983,fd=6))',
      'tcp LISTEN 0 4096 0.0.0.0:17003 0.0.0.0:* users:(("slurmd",pid=3001,fd=5))',
      'tcp LISTEN 0 4096 0.0.0.0:48000 0.0.0.0:* users:(("other",pid=3002,fd=5))',
    ])
    const guarded = socketsCheck({...facts, sockets: local, guard}, {thisMachine: true, joined: true, cluster: 'lab'})
    expect(failing(guarded)).toEqual(['tcp 0.0.0.0:48000'])
    expect(guarded.items.find((i) => i.subject === 'tcp 0.0.0.0:6817')?.summary).toMatch(/citc's local guard .* all but loopback and the joined machines$/)
    expect(guarded.items.find((i) => i.subject === 'tcp 0.0.0.0:6819')?.summary).toMatch(/all but loopback$/)
    expect(guarded.notes.join('\n')).not.toMatch(/not loaded/)
    // Without the table (or with one emptied by hand) the same sockets are findings, and the note says how to load it.
    const none = socketsCheck({...facts, sockets: local}, {thisMachine: true, joined: false, cluster: 'lab'})
    expect(failing(none)).toEqual(['tcp 0.0.0.0:6817', 'tcp 0.0.0.0:6819', 'tcp 0.0.0.0:17003', 'tcp 0.0.0.0:48000'])
    expect(none.notes).toContain("citc's local guard (nftables table inet citc_local_guard) is not loaded: run citc create --name lab again to load it")
    expect(failing(socketsCheck({...facts, sockets: local, guard: guard.filter((l) => !l.includes('reject'))}, {thisMachine: true, joined: false}))).toHaveLength(4)
  })

  it('ss missing or failing is a finding of its own, not "no socket"', () => {
    const c = socketsCheck({sockets: [], addresses: [], socketsError: 'ss is not installed'}, {thisMachine: false, joined: false})
    expect(c.ok).toBe(false)
    expect(c.items[0].fix).toBe('apt-get install iproute2')
  })
})

describe('readable files', () => {
  const base = {scanned: 7, capped: false, cap: 20_000, secretsCompared: 2, holdingSecret: new Set<string>()}
  const scan = [
    st('/etc/citc', 'd', 0o755),
    st('/etc/citc/cluster.json', 'f', 0o644),
    st('/etc/slurm', 'd', 0o755),
    st('/etc/slurm/slurm.conf', 'f', 0o644),
    st('/mnt/shared', 'd', 0o755),
    st('/mnt/shared/apps', 'd', 0o755),
    st('/mnt/shared/apps/notes.txt', 'f', 0o644),
  ]

  it('nothing secret readable: ok, with what was looked at', () => {
    const c = readableFilesCheck({...base, scan}, L)
    expect(c.ok).toBe(true)
    expect(c.summary).toBe('none of 7 entries under /etc/citc, /etc/slurm, /mnt/shared is a secret readable by others (contents compared with 2 secrets)')
  })

  it('a world-readable file holding a secret, a key by its name, a foreign group: findings with chmod', () => {
    const c = readableFilesCheck(
      {
        ...base,
        scan: [...scan, st('/etc/citc/compute-host-keys', 'd', 0o755), st('/etc/citc/compute-host-keys/ssh_host_ed25519_key', 'f', 0o640, 'root', 'users'), st('/mnt/shared/etc', 'd', 0o755), st('/mnt/shared/etc/munge.key', 'f', 0o444)],
        holdingSecret: new Set(['/mnt/shared/apps/notes.txt']),
      },
      L,
    )
    expect(failing(c)).toEqual(['/mnt/shared/apps/notes.txt', '/etc/citc/compute-host-keys/ssh_host_ed25519_key', '/mnt/shared/etc/munge.key'])
    expect(c.items[0]).toEqual({ok: false, subject: '/mnt/shared/apps/notes.txt', summary: "readable by others (0644 root:root): its content holds one of the cluster's secrets", fix: "chmod go-rwx /mnt/shared/apps/notes.txt"})
    expect(c.items[1].summary).toBe('readable by group users (0640 root:users): a private key by its name')
  })

  it('a readable secret behind a directory others cannot enter, or 0640 for the owner’s own group: no finding', () => {
    const c = readableFilesCheck(
      {...base, scan: [...scan, st('/etc/citc/secrets', 'd', 0o700), st('/etc/citc/secrets/x-password', 'f', 0o644), st('/etc/slurm/slurmdbd.conf', 'f', 0o640, 'slurm', 'slurm')], holdingSecret: new Set(['/etc/citc/secrets/x-password'])},
      L,
    )
    expect(c.ok).toBe(true)
  })

  it('the cap hit is said', () => {
    const c = readableFilesCheck({...base, scan, capped: true, cap: 7}, L)
    expect(c.notes[0]).toBe('the scan stopped at its cap of 7 entries: files beyond it were not checked')
  })
})

describe('secret files', () => {
  const good = [
    st('/etc/citc/secrets', 'd', 0o700),
    st('/etc/citc/secrets/ldap-admin-password', 'f', 0o600),
    st('/etc/citc/secrets/slurmdbd-db-password', 'f', 0o600),
    st('/etc/citc/secrets/cluster-ca.key', 'f', 0o600),
    st('/etc/munge/munge.key', 'f', 0o400, 'munge', 'munge'),
    st('/etc/slurm/slurmdbd.conf', 'f', 0o600, 'slurm', 'root'),
  ]
  const ctx = {cluster: 'demo', slurmUser: 'slurm', layout: L}
  const run = (files: StatFact[], links = new Map<string, StatFact>()) => secretFilesCheck({secretFiles: files, linkTargets: links}, ctx)

  it('as the table says: ok, each path listed', () => {
    const c = run(good)
    expect(c.ok).toBe(true)
    expect(c.items.map((i) => [i.subject, i.summary])).toEqual([
      ['/etc/citc/secrets', "the cluster's secrets: 0700 root:root"],
      ['/etc/citc/secrets/cluster-ca.key', 'secret: 0600 root:root'],
      ['/etc/citc/secrets/ldap-admin-password', 'secret: 0600 root:root'],
      ['/etc/citc/secrets/slurmdbd-db-password', 'secret: 0600 root:root'],
      ['/etc/munge/munge.key', 'munge key: 0400 munge:munge'],
      ['/etc/slurm/slurmdbd.conf', 'slurmdbd.conf: 0600 slurm:root'],
    ])
  })

  it('each rule broken: 0644 secret, 0755 directory, munge key of root, slurmdbd.conf of the wrong user', () => {
    const c = run([st('/etc/citc/secrets', 'd', 0o755), st('/etc/citc/secrets/ldap-admin-password', 'f', 0o644), st('/etc/munge/munge.key', 'f', 0o400), st('/etc/slurm/slurmdbd.conf', 'f', 0o600, 'root', 'root')])
    expect(failing(c)).toEqual(['/etc/citc/secrets', '/etc/citc/secrets/ldap-admin-password', '/etc/munge/munge.key', '/etc/slurm/slurmdbd.conf'])
    expect(c.items[1].fix).toBe("chown root:root /etc/citc/secrets/ldap-admin-password && chmod 0600 /etc/citc/secrets/ldap-admin-password")
    expect(c.items[2].fix).toBe("chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key")
    expect(c.items[3].summary).toBe('slurmdbd.conf: 0600 root:root, should be 0600 owned by slurm (no access for group or others)')
  })

  it('slurmdbd.conf linked to the shared filesystem: run citc create again', () => {
    const c = run([...good.slice(0, 5), st('/etc/slurm/slurmdbd.conf', 'l', 0o777, 'root', 'root', '/mnt/shared/etc/slurm/slurmdbd.conf'), st('/mnt/shared/etc/slurm/slurmdbd.conf', 'f', 0o600, 'slurm')])
    expect(failing(c)).toEqual(['/etc/slurm/slurmdbd.conf'])
    expect(c.items.at(-1)).toMatchObject({summary: expect.stringMatching(/^slurmdbd\.conf lives on the shared filesystem .*run citc create again to move it$/), fix: 'citc create --name demo'})
  })

  it('a local file, but an old copy left on the shared filesystem: remove it; a link elsewhere is judged by its target', () => {
    const left = run([...good, st('/mnt/shared/etc/slurm/slurmdbd.conf', 'f', 0o600, 'slurm')])
    expect(failing(left)).toEqual(['/mnt/shared/etc/slurm/slurmdbd.conf'])
    expect(left.items.at(-1)?.fix).toBe("rm -f /mnt/shared/etc/slurm/slurmdbd.conf")
    const link = st('/etc/slurm/slurmdbd.conf', 'l', 0o777, 'root', 'root', '../slurm-llnl/slurmdbd.conf')
    const target = (mode: number) => new Map([['/etc/slurm/slurmdbd.conf', st('/etc/slurm/slurmdbd.conf', 'f', mode, 'slurm')]])
    expect(run([...good.slice(0, 5), link], target(0o600)).ok).toBe(true)
    expect(failing(run([...good.slice(0, 5), link], target(0o644)))).toEqual(['/etc/slurm/slurmdbd.conf -> ../slurm-llnl/slurmdbd.conf'])
  })

  it('absent files (no cluster CA yet, no secrets directory) are no finding', () => {
    expect(run([]).ok).toBe(true)
  })
})

describe('homes', () => {
  it('0700 and 0750 homes are fine; a readable or writable one, or a homes directory others can write, is a finding', () => {
    const homes = [st('/mnt/shared/home', 'd', 0o755), st('/mnt/shared/home/alice', 'd', 0o700, 'alice', 'alice'), st('/mnt/shared/home/bob', 'd', 0o750, 'bob', 'bob')]
    expect(homesCheck({homes}, L)).toMatchObject({ok: true, summary: '2 homes, none open to others'})
    const open = homesCheck({homes: [st('/mnt/shared/home', 'd', 0o777), ...homes.slice(1), st('/mnt/shared/home/carol', 'd', 0o755, 'carol', 'carol')]}, L)
    expect(failing(open)).toEqual(['/mnt/shared/home', '/mnt/shared/home/carol'])
    expect(open.items[1]).toMatchObject({summary: 'readable by others (0755 carol): a home should be 0700 or 0750', fix: "chmod 0700 /mnt/shared/home/carol"})
  })
})

describe('exports', () => {
  const self = {addresses: ['127.0.0.1/8', '10.0.1.5/24'], hostnames: ['mgmt']}

  it('exports(5): clients, options, continuation lines, default options, comments', () => {
    const text = ['# comment', '/mnt/shared 10.0.1.7(rw,root_squash) \\', '    10.0.1.8(rw,no_root_squash)', '"/srv/a b" -no_root_squash host1 host2(ro)', '/x *(ro)'].join('\n')
    expect(parseExports({file: '/etc/exports', text}).map((e) => [e.line, e.path, e.client, e.options.join(',')])).toEqual([
      [2, '/mnt/shared', '10.0.1.7', 'rw,root_squash'],
      [3, '/mnt/shared', '10.0.1.8', 'rw,no_root_squash'],
      [4, '/srv/a b', 'host1', 'no_root_squash'],
      [4, '/srv/a b', 'host2', 'no_root_squash,ro'],
      [5, '/x', '*', 'ro'],
    ])
  })

  it('no_root_squash for a node is a finding with the sed that fixes that line; the management node itself is allowed', () => {
    const exports = [{file: '/etc/exports.d/citc.exports', text: '/mnt/shared 10.0.1.7(rw,sync,no_subtree_check,no_root_squash)\n/mnt/shared 10.0.1.5(rw,no_root_squash) mgmt(rw,no_root_squash)\n'}]
    const c = exportsCheck({...self, exports}, {provider: 'local'})
    expect(failing(c)).toEqual(['/etc/exports.d/citc.exports:1 /mnt/shared 10.0.1.7'])
    expect(c.items[0].fix).toBe("sed -i '1s/\\bno_root_squash\\b/root_squash/' /etc/exports.d/citc.exports && exportfs -ra")
    const fixed = exportsCheck({...self, exports: [{file: exports[0].file, text: exports[0].text.replace('10.0.1.7(rw,sync,no_subtree_check,no_root_squash)', '10.0.1.7(rw,sync,no_subtree_check,root_squash)')}]}, {provider: 'local'})
    expect(fixed).toMatchObject({ok: true, summary: '3 exports, each squashing root'})
  })

  it('a cloud cluster: no exports here, and where its export options are checked', () => {
    const c = exportsCheck({...self, exports: []}, {provider: 'google', cloudSharedFs: true})
    expect(c).toMatchObject({ok: true, summary: 'no NFS exports on this node'})
    expect(c.notes).toEqual(["the shared filesystem is the cloud's own (EFS, Filestore or OCI File Storage): its export options are set by Terraform (templates/terraform/google/storage.tf) and checked there, not from this node"])
  })
})

describe("the collector's output", () => {
  it('NUL-separated records back to facts; paths with tabs and newlines survive', () => {
    const out = [
      'U\t0',
      `S\t${SS_CLOUD[4]}`,
      `A\t${IP_ADDR[1]}`,
      'N\tmgmt',
      'M\td\t700\troot\troot\t4096\t\t/etc/citc/secrets',
      'M\tl\t777\troot\troot\t36\t/mnt/shared/etc/slurm/slurmdbd.conf\t/etc/slurm/slurmdbd.conf',
      'T\tf\t600\tslurm\troot\t300\t\t/etc/slurm/slurmdbd.conf',
      'H\td\t700\talice\talice\t4096\t\t/mnt/shared/home/alice',
      'K\t2',
      'F\tf\t644\troot\troot\t12\t\t/mnt/shared/odd\tname\nhere',
      'CAP\t1',
      'C\t/mnt/shared/odd\tname\nhere',
      'XF\t/etc/exports',
      'XC\t/mnt/shared 10.0.1.7(rw)\n',
      'P\tldap://10.0.1.5/',
      'G\ttable inet citc_local_guard {',
      '',
    ].join('\0')
    const f = parseCollectorOutput(out, 1)
    expect(f).toMatchObject({uid: 0, addresses: ['10.0.1.5/24'], hostnames: ['mgmt'], secretsCompared: 2, scanned: 1, capped: true, cap: 1, exports: [{file: '/etc/exports', text: '/mnt/shared 10.0.1.7(rw)\n'}]})
    expect(f.sockets).toEqual([{proto: 'tcp', address: '0.0.0.0', port: 389, process: 'slapd', pid: 990}])
    expect(f.secretFiles[1]).toEqual({path: '/etc/slurm/slurmdbd.conf', type: 'l', mode: 0o777, owner: 'root', group: 'root', size: 36, target: '/mnt/shared/etc/slurm/slurmdbd.conf'})
    expect(f.linkTargets.get('/etc/slurm/slurmdbd.conf')?.mode).toBe(0o600)
    expect(f.scan[0].path).toBe('/mnt/shared/odd\tname\nhere')
    expect(f.holdingSecret.has('/mnt/shared/odd\tname\nhere')).toBe(true)
    expect(parseStat('f\t644')).toBeUndefined()
    expect(f.plainLdap).toEqual(['ldap://10.0.1.5/'])
    expect(f.guard).toEqual(['table inet citc_local_guard {'])
  })

  it('plain LDAP kept for older nodes is a finding with the way out; none kept, no check', () => {
    expect(directoryCheck({plainLdap: []}, 'demo')).toBeUndefined()
    const c = directoryCheck({plainLdap: ['ldap://10.0.1.5/']}, 'demo')!
    expect(c.ok).toBe(false)
    expect(c.items[0]).toMatchObject({subject: 'ldap://10.0.1.5/', fix: expect.stringContaining('rm /etc/citc/slapd-plain-uris && citc create --name demo')})
  })
})

describe('the report for people', () => {
  it('each check, its items, the fix under a finding, the verdict', () => {
    const r: SecurityReport = {
      cluster: 'demo',
      where: 'this machine',
      provider: 'local',
      ok: false,
      notes: [],
      checks: [{name: 'exports', ok: false, summary: '1 export let a node’s root act as root', items: [{ok: false, subject: '/etc/exports:1 /mnt/shared 10.0.1.7', summary: 'no_root_squash: root on 10.0.1.7 is root on /mnt/shared', fix: 'sed …'}], notes: []}],
    }
    expect(securityLines(r)).toEqual([
      'Security of cluster demo (this machine):',
      '✗ exports             1 export let a node’s root act as root',
      '                      ✗ /etc/exports:1 /mnt/shared 10.0.1.7: no_root_squash: root on 10.0.1.7 is root on /mnt/shared',
      '                          fix: sed …',
      '',
      'The security of demo needs attention: exports.',
    ])
  })
})

describe('checkSecurityVia over a memory node', () => {
  const record = {name: 'demo', provider: 'aws', origin: 'created', createdAt: '2026-11-26T00:00:00Z', mgmt: {host: '203.0.113.5', port: 22, user: 'admin'}, slurm: {confPath: '/mnt/shared/etc/slurm/slurm.conf', programsDir: '/usr/local/libexec/citc'}} as unknown as ClusterRecord
  const contract = (name: string) => JSON.stringify({version: MANAGEMENT_CONTRACT_VERSION, name, sharedDir: '/shared', slurmUser: 'slurm', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog: '/var/log/citc/elastic.log', provider: 'aws', driver: FAKE_EC2_SECTION})
  const output = ['U\t0', `S\t${SS_CLOUD[2]}`, 'K\t2', 'F\td\t755\troot\troot\t4096\t\t/shared', ''].join('\0')

  it("takes the shared directory and Slurm user from cluster.json, the homes from ldap.json; a cloud's shared filesystem is checked by its templates", async () => {
    const node = new MemoryTransport({files: {'/etc/citc/cluster.json': contract('demo'), '/etc/citc/ldap.json': JSON.stringify({homeDir: '/shared/users'})}}).on((argv) => argv[0] === 'bash', {stdout: output})
    const r = await checkSecurityVia(node, record, false)
    const argv = node.commands().find((c) => c[0] === 'bash')!
    expect(argv.slice(4)).toEqual(['/etc/citc', '/etc/slurm', '/etc/citc/secrets', '/etc/munge/munge.key', '/etc/slurm/slurmdbd.conf', '/shared', '/shared/etc/slurm/slurmdbd.conf', '/shared/users', '', '20000', '1048576'])
    expect(r).toMatchObject({cluster: 'demo', provider: 'aws', ok: true, notes: [], scan: {entries: 1, cap: 20_000, capped: false, secretsCompared: 2}})
    expect(r.checks.find((c) => c.name === 'exports')?.notes[0]).toMatch(/^the shared filesystem is the cloud's own .*templates\/terraform\/aws\/storage\.tf/)
  })

  it('cluster.json of another cluster, or none: said, with what was assumed', async () => {
    const other = new MemoryTransport({files: {'/etc/citc/cluster.json': contract('prod')}}).on((argv) => argv[0] === 'bash', {stdout: output})
    expect((await checkSecurityVia(other, record, false)).notes[0]).toMatch(/describes cluster prod, not demo/)
    const none = new MemoryTransport().on((argv) => argv[0] === 'bash', {stdout: output})
    const r = await checkSecurityVia(none, record, false)
    expect(r.notes[0]).toMatch(/assumed the shared filesystem at \/mnt\/shared and Slurm user slurm$/)
    expect(none.commands().find((c) => c[0] === 'bash')?.[9]).toBe('/mnt/shared')
  })

  it('not run as root: a finding, with the sudo to run', async () => {
    const node = new MemoryTransport({files: {'/etc/citc/cluster.json': contract('demo')}}).on((argv) => argv[0] === 'bash', {stdout: output.replace('U\t0', 'U\t1000')})
    const r = await checkSecurityVia(node, record, false)
    expect(r.checks[0]).toMatchObject({name: 'collector', ok: false, items: [{fix: 'sudo citc doctor --security -c demo'}]})
  })
})
