// templates/packer/cloud.pkr.hcl against the real Packer (Debian's 1.6.6, as on the management node):
// for each cloud, the variables its image builder gives (from a realistic cluster's Terraform outputs)
// plus the shared ones the build writes pass `packer validate` with -only=<its source>; a missing
// field fails with Packer's own message; and the local build of the same directory needs none of the
// cloud variables. Offline: validate makes no cloud call (oracle is given a PKCS#1 API key made here,
// the only format 1.6.6 reads; on the management node it uses the instance principal).
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parse as parseHcl} from '@cdktf/hcl2json'
import {afterAll, describe, expect, it} from 'vitest'
import {parse as parseYaml} from 'yaml'

import type {ImageBuilderContext} from '../../src/lib/providers/image-types.js'
import {HOST_KEYS_SCRIPT, type CloudImagePaths} from '../../src/lib/providers/cloud-image-builder.js'
import {createAwsImageBuilder} from '../../src/lib/providers/aws/image-builder.js'
import {createGoogleImageBuilder} from '../../src/lib/providers/google/image-builder.js'
import {createOracleImageBuilder} from '../../src/lib/providers/oracle/image-builder.js'
import type {CloudProvider} from '../../src/lib/providers/registry.js'
import {ROOT} from '../helpers/cli.js'
import {cloudRecord} from '../helpers/cloud-records.js'
import {MemoryTransport} from '../doubles/memory-transport.js'
import {readManagementContract} from '../../src/lib/cluster/management-contract.js'

const TEMPLATE_DIR = join(ROOT, 'templates', 'packer')
const work = mkdtempSync(join(tmpdir(), 'citc-packer-cloud-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

// What the management node holds: the playbooks, compute.yml's variables, the munge key, the host keys.
const playbooks = join(work, 'playbooks')
mkdirSync(playbooks)
writeFileSync(join(playbooks, 'compute.yml'), '- hosts: all\n  tasks: []\n')
const playbookVars = join(work, 'playbook-vars.json')
writeFileSync(playbookVars, '{"cluster_name": "demo"}\n')
const paths: CloudImagePaths = {workDir: join(work, 'builds'), stateFile: join(work, 'images.json'), hostKeysDir: join(work, 'host-keys'), mungeKeyFile: join(work, 'munge.key')}
mkdirSync(paths.hostKeysDir)
writeFileSync(paths.mungeKeyFile, Buffer.alloc(1024, 7), {mode: 0o400})
execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(paths.hostKeysDir, 'ssh_host_ed25519_key')])
const ociKey = join(work, 'oci_api_key.pem')
execFileSync('openssl', ['genrsa', '-traditional', '-out', ociKey, '2048'], {stdio: 'ignore'})

const FACTORIES = {aws: createAwsImageBuilder, google: createGoogleImageBuilder, oracle: createOracleImageBuilder}
const BUILD = {name: 'citc-slurm-compute-demo-v20260101120000', version: '20260101120000', arch: 'x86_64' as const}

/** The builder's var file for a build, as citc writes it (shared variables + the builder's). */
async function varFile(provider: CloudProvider, over: Record<string, unknown> = {}, drop: string[] = []): Promise<{file: string; only: string}> {
  const node = new MemoryTransport().on(['install']).on(['sh', '-c'])
  const ctx: ImageBuilderContext = {record: cloudRecord(provider), management: node, managementContract: () => readManagementContract(node), signal: new AbortController().signal, logFile: join(work, 'log')}
  const builder = FACTORIES[provider](ctx, paths)
  const build = {...BUILD, arch: (over.arch as typeof BUILD.arch | undefined) ?? BUILD.arch, slurmVersion: '22.05.8-4+deb12u3'}
  const vars: Record<string, unknown> = {
    cluster: 'demo',
    version: BUILD.version,
    image_name: BUILD.name,
    arch: build.arch,
    playbooks_dir: playbooks,
    playbook_vars_file: playbookVars,
    script: '',
    manifest: join(work, 'manifest.json'),
    ...(await builder.vars(build)),
    // Offline, oracle signs with an API key instead of the management node's instance principal.
    ...(provider === 'oracle'
      ? {oracle_region: 'eu-frankfurt-1', oracle_tenancy_ocid: 'ocid1.tenancy.oc1..aaaademo', oracle_user_ocid: 'ocid1.user.oc1..aaaademo', oracle_fingerprint: '12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0', oracle_key_file: ociKey}
      : {}),
    ...over,
  }
  for (const k of drop) delete vars[k]
  const file = join(work, `${provider}-${Object.keys(over).join('-')}${drop.join('-')}.pkrvars.json`)
  writeFileSync(file, JSON.stringify(vars, null, 2))
  return {file, only: builder.packerOnly}
}

function validate(only: string, file: string) {
  const r = spawnSync('packer', ['validate', `-only=${only}`, `-var-file=${file}`, TEMPLATE_DIR], {encoding: 'utf8', timeout: 60_000, env: {...process.env, CHECKPOINT_DISABLE: '1', HOME: work}})
  return {status: r.status, out: `${r.stdout}${r.stderr}`}
}

describe('templates/packer/cloud.pkr.hcl with the real packer validate', () => {
  for (const provider of ['aws', 'google', 'oracle'] as const) {
    it(`${provider}: the builder's variables validate`, async () => {
      const {file, only} = await varFile(provider)
      const r = validate(only, file)
      expect(r.out).toMatch(/configuration is valid|^\s*$/)
      expect(r.status, r.out).toBe(0)
    }, 30_000)
  }

  it('aws arm64: the other architecture by name pattern validates too', async () => {
    const {file, only} = await varFile('aws', {arch: 'arm64'})
    expect(readFileSync(file, 'utf8')).toMatch(/"aws_source_ami_name": "ubuntu\/images\/hvm-ssd-gp3\/ubuntu-noble-24.04-arm64-server-\*"/)
    const r = validate(only, file)
    expect(r.status, r.out).toBe(0)
  }, 30_000)

  it('with the user\'s script it validates (Packer checks the file exists)', async () => {
    const script = join(work, 'extra.sh')
    writeFileSync(script, '#!/bin/sh\napt-get install -y cowsay\n')
    const {file, only} = await varFile('google', {script})
    expect(validate(only, file).status).toBe(0)
  }, 30_000)

  it('a missing field fails with what is missing', async () => {
    const google = await varFile('google', {}, ['google_project'])
    const g = validate(google.only, google.file)
    expect(g.status).not.toBe(0)
    expect(g.out).toMatch(/a project_id must be specified/)

    const oracle = await varFile('oracle', {}, ['oracle_subnet_ocid'])
    const o = validate(oracle.only, oracle.file)
    expect(o.status).not.toBe(0)
    expect(o.out).toMatch(/'subnet_ocid' must be specified/)

    const aws = await varFile('aws', {}, ['cluster'])
    const a = validate(aws.only, aws.file)
    expect(a.status).not.toBe(0)
    expect(a.out).toMatch(/Unset variable "cluster"/)
  }, 60_000)

  it('the local build of the same directory needs none of the cloud variables', () => {
    const file = join(work, 'local.pkrvars.json')
    writeFileSync(file, JSON.stringify({cluster: 'demo', version: '1', image_name: 'x', playbooks_dir: playbooks, playbook_vars_file: playbookVars, manifest: join(work, 'm.json')}))
    const r = validate('local.null.local', file)
    expect(r.status, r.out).toBe(0)
  }, 30_000)

  it('is formatted as packer fmt writes it', () => {
    const r = spawnSync('packer', ['fmt', '-check', join(TEMPLATE_DIR, 'cloud.pkr.hcl')], {encoding: 'utf8'})
    expect(r.status, r.stdout).toBe(0)
  })
})

interface Provisioners {
  file: Array<{source: string; destination: string}>
  ansible: Array<{extra_arguments: string[]; ansible_env_vars: string[]}>
  shell: Array<{inline?: string[]}>
}

describe("cloud.pkr.hcl's provisioners and compute.yml's roles (read with HashiCorp's HCL parser)", () => {
  const template = readFileSync(join(TEMPLATE_DIR, 'cloud.pkr.hcl'), 'utf8')
  const provisioners = async () => ((await parseHcl('cloud.pkr.hcl', template)) as {build: Array<{provisioner: Provisioners}>}).build[0].provisioner
  const extraVars = (args: string[]) => Object.fromEntries(args.flatMap((a, i) => (args[i - 1] === '-e' && /^\w+=/.test(a) ? [a.split(/=(.*)/s).slice(0, 2)] : [])))
  const role = (name: string) => parseYaml(readFileSync(join(ROOT, 'playbooks', 'roles', name, 'tasks', 'main.yml'), 'utf8')) as Array<Record<string, unknown>>

  it('the munge key and host keys are installed by the roles, from where the file provisioners put them; the shell only cleans up', async () => {
    const p = await provisioners()
    const dest = Object.fromEntries(p.file.map((f) => [f.source, f.destination]))
    const vars = extraVars(p.ansible[0].extra_arguments)
    expect(vars.munge_key_src).toBe(dest['${var.munge_key_file}'])
    expect(vars.compute_host_keys_dir).toBe(dest['${var.host_keys_dir}/'])
    // No shell step installs a key any more: a --check run of compute.yml with these variables converges.
    const shell = p.shell.flatMap((s) => s.inline ?? []).join('\n')
    expect(shell).not.toMatch(/\/etc\/munge|\/etc\/ssh/)
    expect(shell).toContain('rm -rf ${local.staging}')
    // Host key checking is off only with the reason next to it.
    expect(p.ansible[0].ansible_env_vars).toContain('ANSIBLE_HOST_KEY_CHECKING=False')
    expect(template).toMatch(/ANSIBLE_HOST_KEY_CHECKING=False: the build machine is a fresh temporary VM/)
  })

  it('the roles copy on the build machine (remote_src) from those variables, every key type the management node makes', () => {
    const munge = role('munge_key').find((t) => t.name === "Install the cluster's munge key") as {'ansible.builtin.copy': Record<string, unknown>}
    expect(munge['ansible.builtin.copy']).toMatchObject({src: '{{ munge_key_src }}', dest: '/etc/munge/munge.key', remote_src: true, owner: 'munge', mode: '0400'})
    const hostKeys = role('ssh_host_keys')[0] as {'ansible.builtin.copy': Record<string, unknown>; loop: Array<{name: string; mode: string}>}
    expect(hostKeys['ansible.builtin.copy']).toMatchObject({src: '{{ compute_host_keys_dir }}/{{ item.name }}', remote_src: true})
    const types = /for t in ([\w ]+); do/.exec(HOST_KEYS_SCRIPT)![1].split(' ')
    expect(hostKeys.loop).toEqual(
      expect.arrayContaining(types.flatMap((t) => [{name: `ssh_host_${t}_key`, mode: '0600'}, {name: `ssh_host_${t}_key.pub`, mode: '0644'}])),
    )
  })
})
