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
import {parse} from 'yaml'

import {ROOT} from '../helpers/cli.js'

const ROLE = join(ROOT, 'playbooks', 'roles', 'nvidia_gpu')
const dir = mkdtempSync(join(tmpdir(), 'citc-nvidia-role-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const env = {...process.env, ANSIBLE_CONFIG: join(ROOT, 'playbooks', 'ansible.cfg'), ANSIBLE_ROLES_PATH: join(ROOT, 'playbooks', 'roles')}
const play = (file: string, text: string, args: string[] = []) => {
  writeFileSync(join(dir, file), text)
  return execFileSync('ansible-playbook', ['-i', 'localhost,', '-c', 'local', ...args, join(dir, file)], {encoding: 'utf8', env})
}

/** Renders the role's templates (and variables) with its defaults and these extra vars into out/. */
const render = (name: string, vars: Record<string, string>, templates: Record<string, string>, values: Record<string, string> = {}) => {
  const out = join(dir, name)
  play(
    `${name}.yml`,
    [
      '- hosts: all',
      '  gather_facts: false',
      '  vars:',
      `    out: ${out}`,
      '  tasks:',
      `    - ansible.builtin.include_vars: ${join(ROLE, 'defaults', 'main.yml')}`,
      ...Object.entries(vars).map(([k, v]) => `    - ansible.builtin.set_fact: {${k}: ${JSON.stringify(v)}}`),
      '    - ansible.builtin.file: {path: "{{ out }}", state: directory}',
      ...Object.entries(templates).map(([src, dest]) => `    - ansible.builtin.template: {src: ${join(ROLE, 'templates', src)}, dest: "{{ out }}/${dest}"}`),
      ...Object.entries(values).map(([expr, dest]) => `    - ansible.builtin.copy: {content: "{{ ${expr} | to_json }}", dest: "{{ out }}/${dest}"}`),
      '',
    ].join('\n'),
  )
  return (file: string) => readFileSync(join(out, file), 'utf8')
}

interface Task {
  name: string
  when?: string
  'ansible.builtin.apt'?: {name: string}
  'ansible.builtin.template'?: {src: string; dest: string}
  loop?: Array<{src: string; dest: string}>
  block?: Task[]
}
const tasks = (parse(readFileSync(join(ROLE, 'tasks', 'main.yml'), 'utf8')) as Task[]).flatMap((t) => [t, ...(t.block ?? [])])
const task = (name: string) => {
  const found = tasks.find((t) => t.name === name)
  if (!found) throw new Error(`no task "${name}" in the nvidia_gpu role`)
  return found
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

describe('nvidia_gpu role: NVIDIA Fabric Manager for NVSwitch shapes', () => {
  it('installs nvidia-fabricmanager-<driver branch> only when compute_gpu_nvswitch is set', () => {
    const install = task('Install NVIDIA Fabric Manager (NVSwitch shapes)')
    expect(install.when).toBe('compute_gpu_nvswitch | bool')
    expect(install['ansible.builtin.apt']!.name).toBe('{{ nvidia_fabricmanager_packages }}')
    // Inside the block that keeps package scripts from starting services (no NVSwitch on a build machine).
    expect(tasks.find((t) => t.block?.includes(install))?.name).toBe('Install the driver without starting any service')
    const defaults = parse(readFileSync(join(ROLE, 'defaults', 'main.yml'), 'utf8')) as Record<string, unknown>
    expect(defaults.compute_gpu_nvswitch).toBe(false)
    // The package follows the driver branch, as ansible resolves it.
    const get = render('fm-packages', {nvidia_driver_branch: '570'}, {}, {nvidia_fabricmanager_packages: 'packages.json', nvidia_ubuntu_packages: 'driver.json'})
    expect(JSON.parse(get('packages.json'))).toEqual(['nvidia-fabricmanager-570'])
    expect(JSON.parse(get('driver.json'))).toEqual(['nvidia-driver-570-server', 'nvidia-utils-570-server'])
    const ordering = task('Start Fabric Manager before slurmd, on NVSwitch nodes only')
    expect(ordering.when).toBe('compute_gpu_nvswitch | bool')
    expect(ordering.loop!.map((l) => l.src)).toEqual(['fabricmanager-citc.conf.j2', 'slurmd-fabricmanager.conf.j2'])
    expect(task('Enable Fabric Manager at boot').when).toContain('compute_gpu_nvswitch | bool')
  }, 60_000)

  it('renders the drop-ins: Fabric Manager before slurmd, skipped without NVSwitches; slurmd wants it', () => {
    const get = render('fm-dropins', {}, {'fabricmanager-citc.conf.j2': 'fm.conf', 'slurmd-fabricmanager.conf.j2': 'slurmd.conf'})
    expect(get('fm.conf')).toMatch(/^\[Unit\]\nBefore=slurmd\.service\n\n\[Service\]\nExecCondition=\/usr\/local\/sbin\/citc-gpu-check --has-nvswitch\n$/m)
    // Wants=, never Requires=: a failed Fabric Manager must not keep slurmd's citc-gpu-check from reporting it.
    expect(get('slurmd.conf')).toMatch(/^\[Unit\]\nWants=nvidia-fabricmanager\.service\nAfter=nvidia-fabricmanager\.service\n$/m)
    expect(get('slurmd.conf')).not.toMatch(/^Requires=/m)
  }, 60_000)

  it('stops a Debian image build for NVSwitch shapes, saying why and what to do (Debian has no Fabric Manager)', () => {
    // The role itself, run by ansible-playbook: its asserts come before any task that changes the
    // machine, and --check keeps any later task from changing this one should they ever not stop it.
    let failure = ''
    try {
      play(
        'debian-nvswitch.yml',
        ['- hosts: all', '  gather_facts: false', '  vars: {ansible_distribution: Debian, ansible_distribution_version: "12", compute_gpu_nvswitch: true}', '  roles: [nvidia_gpu]', ''].join('\n'),
        ['--check'],
      )
    } catch (error) {
      failure = String((error as {stdout?: string}).stdout)
    }
    expect(failure).toContain('Refuse NVSwitch shapes on Debian, which has no Fabric Manager')
    expect(failure).toContain('Debian 12 packages no Fabric Manager')
    expect(failure).toContain('citc create --image-os ubuntu-24.04')
    expect(failure).toMatch(/failed=1/)
  }, 60_000)
})
