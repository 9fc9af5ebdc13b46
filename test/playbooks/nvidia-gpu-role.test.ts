// The nvidia_gpu role (playbooks/roles/nvidia_gpu) read by the real ansible-playbook: a play applying
// it passes --syntax-check, and its two templates — Debian's extra apt components and slurmd's drop-in
// that runs citc-gpu-check — render with the role's defaults as the role writes them. The role itself
// installs the NVIDIA driver, which cannot be tried here (no GPU, and an image build is another
// test's); this file checks what can be checked without it.
import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'

const ROLE = join(ROOT, 'playbooks', 'roles', 'nvidia_gpu')
const dir = mkdtempSync(join(tmpdir(), 'citc-nvidia-role-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const env = {...process.env, ANSIBLE_CONFIG: join(ROOT, 'playbooks', 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(ROOT, 'playbooks', 'roles')}
const play = (file: string, text: string, args: string[] = []) => {
  writeFileSync(join(dir, file), text)
  return execFileSync('ansible-playbook', ['-i', 'localhost,', '-c', 'local', ...args, join(dir, file)], {encoding: 'utf8', env})
}

describe('nvidia_gpu role', () => {
  it('passes ansible-playbook --syntax-check in a play, as compute.yml runs it', () => {
    const out = play('compute-like.yml', '- hosts: all\n  roles:\n    - role: nvidia_gpu\n      when: compute_gpu | default(false)\n', ['--syntax-check'])
    expect(out).toContain('compute-like.yml')
  }, 60_000)

  it('renders the apt components and the slurmd drop-in from its defaults', () => {
    const out = join(dir, 'out')
    play(
      'render.yml',
      [
        '- hosts: all',
        '  gather_facts: false',
        '  vars:',
        '    ansible_distribution_release: bookworm',
        `    out: ${out}`,
        '  tasks:',
        `    - ansible.builtin.include_vars: ${join(ROLE, 'defaults', 'main.yml')}`,
        '    - ansible.builtin.file: {path: "{{ out }}", state: directory}',
        `    - ansible.builtin.template: {src: ${join(ROLE, 'templates', 'citc-nvidia.sources.j2')}, dest: "{{ out }}/citc-nvidia.sources"}`,
        `    - ansible.builtin.template: {src: ${join(ROLE, 'templates', 'slurmd-gpu-check.conf.j2')}, dest: "{{ out }}/citc-gpu-check.conf"}`,
        '',
      ].join('\n'),
    )
    const sources = readFileSync(join(out, 'citc-nvidia.sources'), 'utf8')
    // nvidia-driver is in non-free, and its dependencies nvidia-support, nvidia-installer-cleanup and
    // glx-alternative-nvidia are in contrib (apt refuses the install without contrib).
    expect(sources).toContain('Suites: bookworm bookworm-updates\nComponents: contrib non-free non-free-firmware\n')
    expect(sources).toContain('Suites: bookworm-security\nComponents: contrib non-free non-free-firmware\n')
    expect(readFileSync(join(out, 'citc-gpu-check.conf'), 'utf8')).toMatch(
      /^\[Service\]\nEnvironment=CITC_GRES_CONF=\/etc\/slurm\/gres\.conf\nExecStartPre=\/usr\/local\/sbin\/citc-gpu-check\nTimeoutStartSec=300\n$/m,
    )
  }, 60_000)

  it('names the Ubuntu packages after nvidia_driver_branch, 580 unless told', () => {
    const defaults = readFileSync(join(ROLE, 'defaults', 'main.yml'), 'utf8')
    expect(defaults).toMatch(/^nvidia_driver_branch: "580"$/m)
    expect(defaults).toContain('- "nvidia-driver-{{ nvidia_driver_branch }}-server"\n  - "nvidia-utils-{{ nvidia_driver_branch }}-server"')
  })
})
