// The playbooks of joined machines (node.yml, node-remove.yml, joined-management.yml) read by the real
// ansible-playbook: they pass --syntax-check; the files they write render as citc needs them (the
// /etc/default/slurmd line, the fstab line, the exports file, slapd's addresses); and --check runs
// against this machine (which changes nothing: every task that would run anyway only reads) go
// through without a failure and show the changes node.yml would make, never the munge key. A live run
// against a real machine is the e2e test's (namespace machines).
import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'

const PLAYBOOKS = join(ROOT, 'playbooks')
const dir = mkdtempSync(join(tmpdir(), 'citc-node-playbooks-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const env = {...process.env, ANSIBLE_CONFIG: join(PLAYBOOKS, 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(PLAYBOOKS, 'roles'), ANSIBLE_NOCOLOR: '1', LC_ALL: 'C.UTF-8'}

function playbook(args: string[]) {
  const r = spawnSync('ansible-playbook', ['-i', 'localhost,', '-c', 'local', ...args], {encoding: 'utf8', env, timeout: 240_000})
  return {status: r.status, out: `${r.stdout}${r.stderr}`}
}

const varsFile = (name: string, vars: Record<string, unknown>) => {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify(vars), {mode: 0o600})
  return file
}

// A key whose text would show if Ansible ever printed it.
const KEY_TEXT = 'citc-test-munge-key-must-never-be-printed-'.repeat(30)
const keyFile = join(dir, 'munge.key')
writeFileSync(keyFile, KEY_TEXT, {mode: 0o600})

// The cluster's CA certificate on the management node (the nss role copies it to the machine).
const caFile = join(dir, 'cluster-ca.crt')
writeFileSync(caFile, '-----BEGIN CERTIFICATE-----\n(the cluster CA in a --check run)\n-----END CERTIFICATE-----\n')

const NODE_VARS = {
  citc_bin: '/opt/citc/bin/run.js',
  cluster_name: 'demo',
  joined_name: 'ws1',
  joined_address: '10.250.99.2',
  controller_addr: '10.250.99.1',
  slurmctld_port: 6817,
  slurm_version: '22.05.8-4+deb12u3',
  shared_mode: 'nfs',
  shared_dir: '/mnt/shared',
  adopt: false,
  munge_key_src: keyFile,
  ldap_uri: 'ldaps://10.250.99.1/',
  ldap_tls_ca_cert: caFile,
}

describe('the playbooks of joined machines', () => {
  it('pass --syntax-check, with compute.yml and management.yml whose roles they share', () => {
    const r = playbook(['--syntax-check', ...['node.yml', 'node-remove.yml', 'joined-management.yml', 'compute.yml', 'management.yml'].map((p) => join(PLAYBOOKS, p))])
    expect(r.out).not.toMatch(/ERROR/)
    expect(r.status).toBe(0)
  }, 120_000)

  it('render /etc/default/slurmd, the fstab line and the exports file as citc needs them', () => {
    const out = join(dir, 'out')
    mkdirSync(out, {recursive: true})
    const cases = {
      v4: {...NODE_VARS},
      v6: {...NODE_VARS, controller_addr: 'fd00::1', joined_name: 'gpu-2'},
    }
    const tasks = Object.entries(cases).flatMap(([name, vars]) => [
      `    - name: ${name}`,
      '      vars:',
      ...Object.entries(vars).map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`),
      '        citc_conf_server: "{{ controller_addr if \':\' in controller_addr else (controller_addr ~ \':\' ~ slurmctld_port) }}"',
      `      ansible.builtin.template: {src: ${join(PLAYBOOKS, 'roles', 'slurmd', 'templates', 'slurmd.default.j2')}, dest: ${out}/slurmd-${name}}`,
      `    - name: fstab ${name}`,
      '      vars:',
      ...Object.entries(vars).map(([k, v]) => `        ${k}: ${JSON.stringify(v)}`),
      `      ansible.builtin.copy: {content: "{{ node_fstab_line }}\\n", dest: ${out}/fstab-${name}}`,
    ])
    const render = join(dir, 'render.yml')
    writeFileSync(
      render,
      [
        '- hosts: all',
        '  gather_facts: false',
        '  tasks:',
        `    - ansible.builtin.include_vars: ${join(PLAYBOOKS, 'roles', 'compute_shared_fs', 'defaults', 'main.yml')}`,
        `    - ansible.builtin.include_vars: ${join(PLAYBOOKS, 'roles', 'slurmd', 'defaults', 'main.yml')}`,
        ...tasks,
        '    - name: exports',
        '      vars:',
        '        cluster_name: demo',
        '        shared_dir: /mnt/shared',
        '        joined_nfs_addresses: [10.250.99.2, 10.250.99.3]',
        '        nfs_export_options: rw,sync,no_subtree_check,root_squash',
        `      ansible.builtin.template: {src: ${join(PLAYBOOKS, 'templates', 'citc.exports.j2')}, dest: ${out}/citc.exports}`,
        '',
      ].join('\n'),
    )
    const r = playbook([render])
    expect(r.out).toContain('failed=0')
    expect(readFileSync(join(out, 'slurmd-v4'), 'utf8')).toMatch(/^SLURMD_OPTIONS="--conf-server 10\.250\.99\.1:6817 -N ws1"$/m)
    // Slurm would read an IPv6 address's colons as host:port: the address alone (the default port).
    expect(readFileSync(join(out, 'slurmd-v6'), 'utf8')).toMatch(/^SLURMD_OPTIONS="--conf-server fd00::1 -N gpu-2"$/m)
    // node-remove.yml recognises citc's file by this text.
    expect(readFileSync(join(out, 'slurmd-v4'), 'utf8')).toContain('citc node add')
    expect(readFileSync(join(out, 'fstab-v4'), 'utf8')).toBe('10.250.99.1:/mnt/shared /mnt/shared nfs _netdev,nofail,hard,timeo=600,retrans=3 0 0\n')
    expect(readFileSync(join(out, 'fstab-v6'), 'utf8')).toBe('[fd00::1]:/mnt/shared /mnt/shared nfs _netdev,nofail,hard,timeo=600,retrans=3 0 0\n')
    const exports = readFileSync(join(out, 'citc.exports'), 'utf8')
    expect(exports.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual([
      '/mnt/shared 10.250.99.2(rw,sync,no_subtree_check,root_squash)',
      '/mnt/shared 10.250.99.3(rw,sync,no_subtree_check,root_squash)',
    ])
  }, 120_000)

  it('node.yml --check: no failure, the configless slurmd line, the NFS mount, and never the munge key', () => {
    // As citc runs it: each machine's own variables in the inventory (which must win over the
    // playbook's defaults), the rest as extra variables. Two "machines", both this one.
    const inventory = join(dir, 'machines.ini')
    // adopt: this machine may run a cluster of its own now (a slurm.conf, which node.yml refuses
    // otherwise); --check copies and removes nothing either way.
    const {joined_name: _n, shared_mode: _s, slurm_version: _v, ...rest} = NODE_VARS
    const common = {...rest, adopt: true}
    writeFileSync(
      inventory,
      [
        '[joined]',
        'nfs-machine ansible_connection=local ansible_host=localhost joined_name=ws1 slurm_version=22.05.8-4+deb12u3 shared_mode=nfs',
        'plain-machine ansible_connection=local ansible_host=localhost joined_name=ws2 slurm_version="" shared_mode=none',
        '',
      ].join('\n'),
    )
    const r = spawnSync('ansible-playbook', ['-i', inventory, '--check', '--diff', join(PLAYBOOKS, 'node.yml'), '-e', `@${varsFile('node', common)}`], {encoding: 'utf8', env, timeout: 240_000})
    const out = `${r.stdout}${r.stderr}`
    for (const host of ['nfs-machine', 'plain-machine']) expect(out).toMatch(new RegExp(`${host}\\s+: ok=\\d+\\s+changed=\\d+\\s+unreachable=0\\s+failed=0`))
    expect(out).toContain('+SLURMD_OPTIONS="--conf-server 10.250.99.1:6817 -N ws1"')
    expect(out).toContain('+SLURMD_OPTIONS="--conf-server 10.250.99.1:6817 -N ws2"')
    expect(out).toContain('+uri ldaps://10.250.99.1/')
    expect(out).toContain('+tls_reqcert demand')
    // Pinned and held at the controller's version where it is given, the distribution's elsewhere.
    expect(out).toMatch(/TASK \[slurmd : Hold slurmd[^\n]*\n(?:[^\n]*\n)*?changed: \[nfs-machine\] => \(item=slurmd\)/)
    expect(out).toMatch(/skipping: \[plain-machine\] => \(item=slurmd\)/)
    // The NFS mount for the machine with shared_mode nfs only (its inventory variable, not a default).
    expect(out.split('+10.250.99.1:/mnt/shared /mnt/shared nfs _netdev,nofail,hard,timeo=600,retrans=3 0 0').length).toBe(2)
    expect(out).toMatch(/TASK \[compute_shared_fs : Record the mount in \/etc\/fstab \(mounted again at boot\)\][^\n]*\n(?:[^\n]*\n)*?skipping: \[plain-machine\]/)
    expect(out).not.toContain('citc-test-munge-key')
  }, 240_000)

  it('node.yml refuses variables citc would never pass, before touching anything', () => {
    const r = playbook(['--check', join(PLAYBOOKS, 'node.yml'), '-e', `@${varsFile('bad', {...NODE_VARS, joined_name: 'WS_1', shared_mode: 'sshfs'})}`])
    expect(r.status).not.toBe(0)
    expect(r.out).toContain('bad variables for node.yml: joined_name=WS_1')
    expect(r.out).not.toMatch(/TASK \[munge_key/)
  }, 120_000)

  it('node-remove.yml --check and keep_software: no failure; keep_software runs no task on the machine', () => {
    const r = playbook(['--check', join(PLAYBOOKS, 'node-remove.yml'), '-e', `@${varsFile('remove', NODE_VARS)}`])
    expect(r.out).toMatch(/localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    const keep = playbook(['--check', join(PLAYBOOKS, 'node-remove.yml'), '-e', `@${varsFile('keep', {...NODE_VARS, keep_software: true})}`])
    expect(keep.out).toMatch(/localhost\s+: ok=\d+\s+changed=0\s+unreachable=0\s+failed=0\s+skipped=0/)
    expect(keep.out).not.toContain('TASK [Stop slurmd')
  }, 240_000)

  it('joined-management.yml --check: slapd also on the controller address, the exports; none joined: neither', () => {
    const etc = join(dir, 'etc')
    mkdirSync(etc, {recursive: true})
    const base = {citc_bin: '/opt/citc/bin/run.js', cluster_name: 'demo', controller_addr: '10.250.99.1', shared_dir: '/mnt/shared', citc_etc_dir: etc}
    const joined = playbook(['--check', '--diff', join(PLAYBOOKS, 'joined-management.yml'), '-e', `@${varsFile('jm', {...base, joined_addresses: ['10.250.99.2', '10.250.99.3']})}`])
    expect(joined.out).toMatch(/localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    expect(joined.out).toMatch(/^\+SLAPD_SERVICES="ldap:\/\/127\.0\.0\.1\/ ldapi:\/\/\/ ldaps:\/\/10\.250\.99\.1\/"$/m)
    expect(joined.out).toContain('+/mnt/shared 10.250.99.2(rw,sync,no_subtree_check,root_squash)')
    const none = playbook(['--check', '--diff', join(PLAYBOOKS, 'joined-management.yml'), '-e', `@${varsFile('jm-none', {...base, joined_addresses: []})}`])
    expect(none.out).toMatch(/localhost\s+: ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=0/)
    expect(none.out).not.toContain('ldaps://10.250.99.1/')
    expect(none.out).not.toContain('TASK [Export the shared filesystem to the machines that joined]\n')
    expect(none.out).toMatch(/TASK \[Export the shared filesystem to the machines that joined\] \*+\nskipping/)
  }, 240_000)
})
