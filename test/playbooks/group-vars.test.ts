// Values group_vars/all.yml derives from what citc passes, as Ansible itself renders them (a tiny
// playbook beside a link to the real group_vars, run by the real ansible-playbook).
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'
import {MONITORING_PORTS} from '../../src/lib/providers/monitoring-setting.js'

const dir = mkdtempSync(join(tmpdir(), 'citc-group-vars-'))
symlinkSync(join(ROOT, 'playbooks', 'group_vars'), join(dir, 'group_vars'))
writeFileSync(
  join(dir, 'show.yml'),
  '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.debug:\n        msg: "VALUE<{{ lookup(\'vars\', wanted) }}>"\n',
)
afterAll(() => rmSync(dir, {recursive: true, force: true}))

function rendered(name: string, vars: Record<string, string>): string {
  const out = execFileSync('ansible-playbook', ['-i', 'localhost,', '-c', 'local', join(dir, 'show.yml'), '-e', JSON.stringify({...vars, wanted: name})], {
    encoding: 'utf8',
    env: {...process.env, ANSIBLE_NOCOLOR: '1'},
  })
  return /VALUE<(.*)>/.exec(out)![1]
}

describe('group_vars/all.yml', () => {
  it.each([
    [{provider: 'local'}, 'ldap://127.0.0.1/ ldapi:///'],
    // Clouds: the cluster network's address (Terraform's mgmt_private_ip) over TLS only, and plain
    // loopback; not every interface.
    [{provider: 'aws', mgmt_private_ip: '10.0.0.10'}, 'ldap://127.0.0.1/ ldaps://10.0.0.10/ ldapi:///'],
    [{provider: 'aws', mgmt_private_ip: '127.0.0.1'}, 'ldap://127.0.0.1/ ldapi:///'],
    [{provider: 'google'}, 'ldap://127.0.0.1/ ldaps:/// ldapi:///'], // the address unknown: TLS on every interface
  ])('ldap_listen_uris for %o', (vars, expected) => {
    expect(rendered('ldap_listen_uris', vars)).toBe(expected)
  }, 60_000)

  it("the monitoring ports are the ones the local preflight checks; compute nodes' exporter on clouds only", () => {
    expect(Number(rendered('citc_prometheus_port', {provider: 'local'}))).toBe(MONITORING_PORTS.prometheus)
    expect(Number(rendered('citc_node_exporter_port', {provider: 'local'}))).toBe(MONITORING_PORTS.nodeExporter)
    expect(rendered('citc_compute_exporter_port', {provider: 'local'})).toBe('')
    expect(rendered('citc_compute_exporter_port', {provider: 'aws'})).toBe('9100')
  }, 60_000)

  it('slurm_user is root on one machine, slurm on clouds', () => {
    expect(rendered('slurm_user', {provider: 'local'})).toBe('root')
    expect(rendered('slurm_user', {provider: 'oracle'})).toBe('slurm')
  }, 60_000)
})
