// The AWS management node's mount of the shared filesystem (issue #25, root squash on EFS): the
// filesystem role builds Amazon's EFS mount helper from its pinned source release, refusing one whose
// SHA-256 differs, installs it, and mounts /mnt/shared with `efs tls,iam` — moving a running node's
// plain mount over even while something has files open there. Real ansible-playbook over SSH to a real
// machine (namespaces, test/helpers/machines.ts) with apt and dpkg. Two TEST DOUBLES, because neither
// can exist here: the efs-utils source release (GitHub is out of reach: a tarball of the same layout,
// whose build-deb.sh makes an amazon-efs-utils .deb) and EFS itself (its mount.efs records how mount(8)
// called it and bind-mounts a directory of the machine). Needs root. Everything is stopped by PID.
import {execFileSync, spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'
import {clusterNetwork, type ClusterNetwork, type Machine, machineRootfs, startMachine} from '../helpers/machines.js'

const PLAYBOOKS = join(ROOT, 'playbooks')
const env = {...process.env, ANSIBLE_CONFIG: join(PLAYBOOKS, 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(PLAYBOOKS, 'roles'), ANSIBLE_NOCOLOR: '1', LC_ALL: 'C.UTF-8'}
const VERSION = readFileSync(join(PLAYBOOKS, 'group_vars', 'all.yml'), 'utf8').match(/^efs_utils_version: "([^"]+)"$/m)![1]
const TARBALL = `/srv/efs-utils-${VERSION}.tar.gz`
const EFS_SOURCE = 'fs-0abc1234:/'
const EFS_OPTIONS = 'tls,iam,mounttargetip=10.0.0.20,_netdev'

// The double's build-deb.sh: the same interface as Amazon's (run in the unpacked tree, leaves
// build/amazon-efs-utils-VERSION-1_all.deb). Its mount.efs is the EFS double.
const BUILD_DEB = `#!/bin/sh
# TEST DOUBLE of efs-utils' build-deb.sh.
set -e
root=build/debbuild
rm -rf "$root" && mkdir -p "$root/DEBIAN" "$root/sbin"
cat >"$root/DEBIAN/control" <<CONTROL
Package: amazon-efs-utils
Version: ${VERSION}-1
Architecture: all
Maintainer: citc tests <root@localhost>
Depends: nfs-common, stunnel4, openssl, python3, util-linux
Description: TEST DOUBLE of Amazon's EFS mount helper
CONTROL
cat >"$root/sbin/mount.efs" <<'MOUNT'
#!/bin/sh
# TEST DOUBLE of mount.efs: records how mount(8) called it, then binds the stand-in of the file system.
echo "$@" >/var/log/citc-test-mount-efs.args
exec mount --bind /srv/efs-export "$2"
MOUNT
chmod 755 "$root/sbin/mount.efs"
dpkg-deb --root-owner-group --build "$root" build/amazon-efs-utils-${VERSION}-1_all.deb
`

let work: string
let net: ClusterNetwork | undefined
let machine: Machine | undefined
let sha256: string
const holders: number[] = []

function playbook(vars: Record<string, unknown>, name: string) {
  const known = join(work, 'known_hosts')
  writeFileSync(known, `${machine!.address} ${machine!.hostKey}\n`)
  const play = join(work, 'filesystem.yml')
  writeFileSync(play, '- hosts: all\n  gather_facts: true\n  gather_subset: [min]\n  roles: [filesystem]\n')
  const varsFile = join(work, `${name}.json`)
  const all = {
    ansible_ssh_common_args: `-o IdentitiesOnly=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile=${known}`,
    shared_fs_mount_retries: 1,
    shared_fs_mount_delay: 1,
    efs_utils_url: `file://${TARBALL}`,
    efs_utils_sha256: sha256,
    ...vars,
  }
  writeFileSync(varsFile, JSON.stringify(all), {mode: 0o600})
  const r = spawnSync(
    'ansible-playbook',
    ['-i', `${machine!.address},`, '-c', 'ssh', '-u', 'root', '--private-key', join(work, 'id'), play, '-e', `@${join(PLAYBOOKS, 'group_vars', 'all.yml')}`, '-e', `@${varsFile}`],
    {encoding: 'utf8', env, timeout: 600_000},
  )
  return {status: r.status, out: `${r.stdout}${r.stderr}`}
}

const inside = (cmd: string[]) => machine!.exec(cmd, {timeoutMs: 60_000})
const efsVars = {mgmt_shared_fs_source: EFS_SOURCE, mgmt_shared_fs_type: 'efs', mgmt_shared_fs_mount_options: EFS_OPTIONS}
const installed = () => inside(['dpkg-query', '-W', '-f=${Version}', 'amazon-efs-utils']).stdout
const recap = (out: string) => out.match(/: ok=\d+\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)/)

describe("the AWS management node's EFS mount: Amazon's helper built from its pinned source, tls,iam", () => {
  beforeAll(async () => {
    if (process.getuid?.() !== 0) throw new Error('this test needs root (namespaces, a bridge): bash .ci/run runs it so')
    work = mkdtempSync(join(tmpdir(), 'citc-efs-utils-'))
    // The source release double: efs-utils-VERSION/build-deb.sh in a tarball, as GitHub's archive is laid out.
    const tree = join(work, 'src', `efs-utils-${VERSION}`)
    mkdirSync(tree, {recursive: true})
    writeFileSync(join(tree, 'build-deb.sh'), BUILD_DEB)
    chmodSync(join(tree, 'build-deb.sh'), 0o755)
    execFileSync('tar', ['-czf', join(work, 'efs-utils.tar.gz'), '-C', join(work, 'src'), `efs-utils-${VERSION}`])
    const tarball = readFileSync(join(work, 'efs-utils.tar.gz'))
    sha256 = createHash('sha256').update(tarball).digest('hex')
    const rootfs = await machineRootfs()
    net = await clusterNetwork()
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-efs-utils-test', '-f', join(work, 'id')])
    machine = await startMachine({net, name: 'efsmgmt', index: 1, rootfs, authorizedKey: readFileSync(join(work, 'id.pub'), 'utf8')})
    machine.exec(['sh', '-c', `base64 -d >${TARBALL} && mkdir -p /srv/efs-export /srv/plain-export`], {input: tarball.toString('base64')})
  }, 1_600_000)

  afterAll(async () => {
    for (const pid of holders) machine?.exec(['kill', String(pid)])
    await machine?.destroy().catch((e: unknown) => console.error(e))
    await net?.close()
    if (work) rmSync(work, {recursive: true, force: true})
  }, 120_000)

  it('a node mounting as the nodes do (plain, before the move) gets no EFS helper', () => {
    const r = playbook({shared_fs_host: '', shared_fs_path: '/srv/plain-export', shared_fs_type: 'none', shared_fs_mount_options: 'bind'}, 'plain')
    expect(recap(r.out)?.slice(2), r.out).toEqual(['0', '0'])
    expect(r.out).toMatch(/TASK \[filesystem : Amazon's EFS mount helper\][^\n]*\nskipping/)
    expect(installed()).toBe('')
    expect(inside(['findmnt', '-n', '-o', 'SOURCE', '/mnt/shared']).stdout).toContain('/srv/plain-export')
  }, 600_000)

  it('refuses a source whose SHA-256 is not the pinned one: nothing built, installed, or mounted differently', () => {
    const r = playbook({...efsVars, efs_utils_sha256: 'a'.repeat(64)}, 'bad-checksum')
    expect(recap(r.out)?.[3]).toBe('1')
    expect(r.out).toMatch(/Download amazon-efs-utils[^\n]*\n(?:[^\n]*\n)*?[^\n]*[Cc]hecksum/)
    expect(r.out).not.toContain('TASK [filesystem : Build the package')
    expect(installed()).toBe('')
    expect(inside(['cat', '/etc/fstab']).stdout).not.toContain('efs')
    expect(inside(['findmnt', '-n', '-o', 'SOURCE', '/mnt/shared']).stdout).toContain('/srv/plain-export')
  }, 600_000)

  it('builds and installs it, then moves the running mount to efs tls,iam while a process holds the old one', () => {
    // A shell with its working directory on the old mount, as a logged-in user's would be.
    const holder = inside(['sh', '-c', 'cd /mnt/shared && setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!'])
    holders.push(Number(holder.stdout.trim()))
    const r = playbook(efsVars, 'efs')
    expect(recap(r.out)?.slice(2), r.out).toEqual(['0', '0'])
    expect(installed()).toBe(`${VERSION}-1`)
    expect(inside(['cat', '/etc/fstab']).stdout).toContain(`${EFS_SOURCE} /mnt/shared efs ${EFS_OPTIONS} 0 0`)
    // mount(8) called Amazon's helper with the IAM and TLS options.
    const args = inside(['cat', '/var/log/citc-test-mount-efs.args']).stdout
    expect(args).toMatch(new RegExp(`^${EFS_SOURCE} /mnt/shared -o \\S*tls,iam,mounttargetip=10\\.0\\.0\\.20`))
    expect(inside(['findmnt', '-n', '-o', 'SOURCE', '/mnt/shared']).stdout).toContain('/srv/efs-export')
    // The layout went onto the new mount.
    expect(inside(['test', '-d', '/srv/efs-export/home']).status).toBe(0)
  }, 900_000)

  it('a second run builds nothing and changes nothing', () => {
    const r = playbook(efsVars, 'efs-again')
    expect(recap(r.out)?.slice(1), r.out).toEqual(['0', '0', '0'])
    expect(r.out).toMatch(/TASK \[filesystem : Build the package \(build-deb\.sh\)\][^\n]*\nskipping/)
  }, 600_000)
})
