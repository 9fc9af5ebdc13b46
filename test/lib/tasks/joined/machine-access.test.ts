// How citc reaches a joining machine: ssh with the pinned keys only (a changed key refused by ssh
// itself), sudo for a non-root login, and the Ansible inventory that carries the same rules.
import {describe, expect, it} from 'vitest'

import {inventory, sshCommonArgs} from '../../../../src/lib/tasks/joined/joined-playbooks.js'
import {checkPinned, machineArgv, pinHostKeys, unpinHostKey} from '../../../../src/lib/tasks/joined/machine-access.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const login = {host: '10.0.0.2', port: 22, user: 'root', keyPath: '/root/.ssh/lab', knownHosts: '/tmp/run/known_hosts'}

describe('machine access', () => {
  it('runs commands with the pinned keys only, never asking, as root or through sudo -n', () => {
    const argv = machineArgv(login, 'ssh-ed25519', ['sh', '-s', '--', '10.0.0.1'])
    expect(argv.slice(0, 1)).toEqual(['ssh'])
    expect(argv).toEqual(expect.arrayContaining(['StrictHostKeyChecking=yes', 'UserKnownHostsFile=/tmp/run/known_hosts', 'GlobalKnownHostsFile=/dev/null', 'BatchMode=yes', 'HostKeyAlgorithms=ssh-ed25519', '/root/.ssh/lab', 'root@10.0.0.2']))
    expect(argv.at(-1)).toBe("sh -s -- 10.0.0.1")
    expect(machineArgv({...login, user: 'admin'}, undefined, ['unmunge']).at(-1)).toBe('sudo -n unmunge')
  })

  it('refuses a host key other than the pinned one', () => {
    const key = {algorithm: 'ssh-ed25519', blob: 'AAAA', fingerprint: 'SHA256:' + 'B'.repeat(43)}
    expect(() => checkPinned(login, key, 'SHA256:' + 'A'.repeat(43))).toThrow(/does not match the pinned key/)
    expect(() => checkPinned(login, key, key.fingerprint)).not.toThrow()
  })

  it('pins keys by host and port, replacing only that line, and unpins them', async () => {
    const t = new MemoryTransport({dirs: ['/tmp/run']})
    const key = (b: string) => ({algorithm: 'ssh-ed25519', blob: b, fingerprint: 'x'})
    await pinHostKeys(t, '/etc/citc/joined/known_hosts', [{host: '10.0.0.2', port: 22, key: key('A1')}, {host: '10.0.0.3', port: 2222, key: key('B1')}])
    await pinHostKeys(t, '/etc/citc/joined/known_hosts', [{host: '10.0.0.2', port: 22, key: key('A2')}])
    expect((await t.readFile('/etc/citc/joined/known_hosts'))!.toString()).toBe('[10.0.0.3]:2222 ssh-ed25519 B1\n10.0.0.2 ssh-ed25519 A2\n')
    await unpinHostKey(t, {host: '10.0.0.3', port: 2222})
    expect((await t.readFile('/etc/citc/joined/known_hosts'))!.toString()).toBe('10.0.0.2 ssh-ed25519 A2\n')
    // A run's own copy (keys confirmed, machines not joined yet): citc's file stays as it was.
    await pinHostKeys(t, '/tmp/run/known_hosts', [{host: '10.0.0.9', port: 22, key: key('C1')}])
    expect((await t.readFile('/tmp/run/known_hosts'))!.toString()).toBe('10.0.0.2 ssh-ed25519 A2\n10.0.0.9 ssh-ed25519 C1\n')
    expect((await t.readFile('/etc/citc/joined/known_hosts'))!.toString()).toBe('10.0.0.2 ssh-ed25519 A2\n')
  })

  it('gives Ansible one line per machine with its login and own variables, become only when not root', () => {
    const text = inventory([
      {name: 'ws1', login, slurmPackage: '22.05.8-4+deb12u3', shared: 'none'},
      {name: 'ws2', login: {...login, host: '10.0.0.3', user: 'admin', port: 2222}, slurmPackage: '', shared: 'none'},
    ])
    expect(text).toBe(
      '[joined]\n' +
        '10.0.0.2 ansible_port=22 ansible_user=root ansible_ssh_private_key_file=/root/.ssh/lab joined_name=ws1 joined_address=10.0.0.2 slurm_version=22.05.8-4+deb12u3\n' +
        '10.0.0.3 ansible_port=2222 ansible_user=admin ansible_ssh_private_key_file=/root/.ssh/lab joined_name=ws2 joined_address=10.0.0.3 slurm_version="" ansible_become=true\n',
    )
    expect(sshCommonArgs('/k')).toBe('-o StrictHostKeyChecking=yes -o UserKnownHostsFile=/k -o GlobalKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o BatchMode=yes')
  })
})
