// Cloud compute nodes run node-exporter on their private address only (issue #21): the launcher the
// compute_exporter role bakes into images, run for real in a network namespace of the test's own (a
// dummy link with a private address and a default route through it, as a cloud VM has): it listens
// on that address and port, on nothing else, and serves node metrics there. Its systemd drop-in and
// the role pass ansible-playbook's syntax check as compute.yml runs them. Needs root (unshare --net).
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'

const ROLE = join(ROOT, 'playbooks', 'roles', 'compute_exporter')
const LAUNCHER = join(ROLE, 'files', 'citc-node-exporter')
const dir = mkdtempSync(join(tmpdir(), 'citc-compute-exporter-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

// Everything happens inside one unnamed network namespace, which dies with its last process: the
// exporter is stopped by its PID before the script ends, and no link outlives the test.
const IN_NAMESPACE = String.raw`set -u
ip link set lo up
ip link add citc-v0 type veth peer name citc-v1
ip addr add 10.77.0.5/24 dev citc-v0
ip link set citc-v0 up
ip link set citc-v1 up
ip route add default via 10.77.0.1 dev citc-v0
"$LAUNCHER" 19100 2>"$DIR/exporter.err" &
pid=$!
i=0
until ss -Hltn 'sport = :19100' | grep -q . || [ $i -ge 100 ]; do sleep 0.1; i=$((i + 1)); done
echo "LISTEN $(ss -Hltn 'sport = :19100' | awk '{print $4}' | tr '\n' ' ')"
"$NODE" -e '
  const get = (h) => fetch("http://" + h + ":19100/metrics", {signal: AbortSignal.timeout(5000)}).then((r) => r.text()).then((t) => (t.match(/^node_uname_info\{/m) ? "metrics" : "other"), (e) => "refused");
  Promise.all([get("10.77.0.5"), get("127.0.0.1")]).then(([a, b]) => console.log("PRIVATE " + a + "\nLOOPBACK " + b));
'
kill "$pid"
wait "$pid" 2>/dev/null
true
`

describe('compute_exporter: node-exporter on the private address', () => {
  it('listens on the address of the default route and port, and nowhere else', () => {
    const r = spawnSync('unshare', ['--net', 'sh', '-c', IN_NAMESPACE], {encoding: 'utf8', timeout: 60_000, env: {...process.env, LAUNCHER, DIR: dir, NODE: process.execPath}})
    expect(r.status, `${r.stdout}\n${r.stderr}\n${readFileSync(join(dir, 'exporter.err'), 'utf8')}`).toBe(0)
    expect(r.stdout).toContain('LISTEN 10.77.0.5:19100 \n')
    expect(r.stdout).toContain('PRIVATE metrics')
    expect(r.stdout).toContain('LOOPBACK refused')
  }, 60_000)

  it('the role and its drop-in: syntax-checked in a play as compute.yml runs it; ExecStart replaced by the launcher', () => {
    const env = {...process.env, ANSIBLE_CONFIG: join(ROOT, 'playbooks', 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(ROOT, 'playbooks', 'roles')}
    writeFileSync(join(dir, 'play.yml'), '- hosts: all\n  roles:\n    - role: compute_exporter\n      when: citc_monitoring | bool and (citc_compute_exporter_port | string | length > 0)\n')
    expect(execFileSync('ansible-playbook', ['-i', 'localhost,', '-c', 'local', '--syntax-check', join(dir, 'play.yml')], {encoding: 'utf8', env})).toContain('play.yml')
    const out = join(dir, 'drop-in.conf')
    writeFileSync(
      join(dir, 'render.yml'),
      `- hosts: all\n  gather_facts: false\n  vars: {citc_compute_exporter_port: 9100}\n  tasks:\n    - ansible.builtin.template: {src: ${join(ROLE, 'templates', 'citc-private-address.conf.j2')}, dest: ${out}}\n`,
    )
    execFileSync('ansible-playbook', ['-i', 'localhost,', '-c', 'local', join(dir, 'render.yml')], {encoding: 'utf8', env})
    expect(readFileSync(out, 'utf8')).toMatch(/\[Service\]\nExecStart=\nExecStart=\/usr\/local\/libexec\/citc\/citc-node-exporter 9100\n/)
  }, 60_000)
})
