// citc's Terraform templates, read with HashiCorp's own HCL parser (@cdktf/hcl2json): they parse,
// they declare every variable citc writes and need no other, they have the outputs citc reads, they
// open only SSH to the world, they tag everything with the cluster, and the names they derive from a
// cluster id fit the clouds' limits. (No Terraform binary can run here: this is as far as the
// templates can be checked offline.)
import {execFileSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {parse} from '@cdktf/hcl2json'
import {parse as parseYaml} from 'yaml'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../src/lib/errors.js'
import type {OracleInputs} from '../../src/lib/providers/oracle/index.js'
import {
  CLOUD_INIT_TEMPLATE,
  CLOUD_PROVIDERS,
  COMMON_OUTPUTS,
  COMMON_VARIABLES,
  TEMPLATES_DIR,
  TFVARS_FILE,
  renderTerraformDir,
  tfvarsFor,
  type CloudInputs,
  type CloudProvider,
} from '../../src/lib/providers/cloud.js'
import {evaluateValue, loadModule, mentions, parseFile, renderTemplate, templateVariables, type Resource, type TfModule} from './hcl.js'
import {cloudModule} from '../../src/lib/providers/registry.js'

const work = mkdtempSync(join(tmpdir(), 'citc-tf-templates-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

// A real ed25519 key pair, as citc generates for the management node.
execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-host', '-f', join(work, 'host')])
const HOST_KEY = readFileSync(join(work, 'host'), 'utf8')
const HOST_KEY_PUBLIC = readFileSync(join(work, 'host.pub'), 'utf8').trim()
const ADMIN_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHhTq3nS8tY5H9uVv2m9Xg2mJ8bq1o7o4Q2bJ0dP6sGy admin@laptop'

const LONG_ID = 'a-very-long-cluster-name-2026-x' // 31 characters: the longest CLUSTER_NAME allows
const SHORT_ID = 'a'

/** The smallest inputs citc gives each provider (optional ones left out). */
function minimalInputs(provider: CloudProvider, clusterId = 'demo'): CloudInputs {
  const common = {clusterId, sshPublicKey: ADMIN_KEY, sshHostKey: HOST_KEY, sshHostKeyPublic: HOST_KEY_PUBLIC}
  switch (provider) {
    case 'aws':
      return {...common, provider, region: 'eu-west-2', zone: 'eu-west-2a'}
    case 'google':
      return {...common, provider, region: 'europe-west2', zone: 'europe-west2-b', project: 'citc-demo-123'}
    case 'oracle':
      return {
        ...common,
        provider,
        region: 'uk-london-1',
        availabilityDomain: 1,
        tenancyOcid: 'ocid1.tenancy.oc1..aaaaaaaatenancy',
        compartmentOcid: 'ocid1.compartment.oc1..aaaaaaaacompartment',
        configFileProfile: 'DEFAULT',
      }
  }
}

/** Every input citc can give (optional ones included). */
function fullInputs(provider: CloudProvider): CloudInputs {
  const base = {...minimalInputs(provider), imageOs: 'ubuntu-24.04' as const, sshCidr: '203.0.113.0/24', mgmtArch: 'x86_64' as const}
  if (provider === 'oracle') {
    return {
      ...(base as OracleInputs),
      configFileProfile: undefined,
      mgmtShape: 'VM.Standard.E4.Flex.2.32',
      userOcid: 'ocid1.user.oc1..aaaaaaaauser',
      fingerprint: '12:34:56:78:90:ab:cd:ef:12:34:56:78:90:ab:cd:ef',
      privateKeyPath: '/home/me/.oci/key.pem',
    }
  }
  return base
}

const TAG_ATTRIBUTE: Record<CloudProvider, string> = {aws: 'tags', google: 'labels', oracle: 'freeform_tags'}
const TAG_LOCAL: Record<CloudProvider, string> = {aws: 'tags', google: 'labels', oracle: 'tags'}

/** Resource types that cannot carry tags or labels (checked to exist, so the list cannot go stale). */
const UNTAGGABLE: Record<CloudProvider, string[]> = {
  aws: ['aws_route_table_association', 'aws_efs_mount_target', 'aws_iam_role_policy', 'aws_efs_file_system_policy'],
  google: [
    'google_compute_network',
    'google_compute_subnetwork',
    'google_compute_firewall',
    'google_compute_router',
    'google_compute_router_nat',
    'google_service_account',
    'google_project_iam_custom_role',
    'google_project_iam_member',
    'random_id',
  ],
  oracle: ['oci_core_network_security_group_security_rule', 'oci_file_storage_export'],
}

const INSTANCE: Record<CloudProvider, string> = {aws: 'aws_instance', google: 'google_compute_instance', oracle: 'oci_core_instance'}

const modules = {} as Record<CloudProvider, TfModule>
beforeAll(async () => {
  for (const p of CLOUD_PROVIDERS) modules[p] = await loadModule(join(TEMPLATES_DIR, 'terraform', p))
})

const scopeFor = (mod: TfModule, vars: Record<string, unknown>) => ({var: vars, locals: mod.locals})
const only = (mod: TfModule, type: string): Resource[] => mod.resources.filter((r) => r.type === type)

describe('the HCL parser', () => {
  it('rejects broken HCL (so a passing parse means something)', async () => {
    await expect(parse('broken.tf', 'resource "aws_vpc" "x" {\n  cidr_block = \n')).rejects.toThrow()
    await expect(parse('broken.tf', 'variable "x" {\n  default = "unterminated\n}\n')).rejects.toThrow()
  })
})

describe.each(CLOUD_PROVIDERS)('templates/terraform/%s', (provider) => {
  const spec = cloudModule(provider).cloud

  it('every .tf file parses, and the module has the usual files', async () => {
    const mod = modules[provider]
    expect(Object.keys(mod.files).sort()).toEqual(['iam.tf', 'main.tf', 'mgmt.tf', 'network.tf', 'outputs.tf', 'storage.tf', 'variables.tf', 'versions.tf'])
    for (const f of Object.keys(mod.files)) await expect(parseFile(join(mod.dir, f))).resolves.toBeTypeOf('object')
    expect(mod.resources.length).toBeGreaterThan(5)
  })

  it('requires Terraform >= 1.5 (OpenTofu accepted) and pins its providers to a major range', () => {
    const tf = modules[provider].terraform
    expect(tf.map((t) => t.required_version)).toEqual(['>= 1.5.0'])
    const required = tf[0].required_providers[0] as Record<string, {source: string; version: string}>
    for (const p of Object.values(required)) expect(p.version).toMatch(/^>= \d+\.\d+, < \d+\.0$/)
  })

  it('declares every variable citc writes, in variables.tf', () => {
    const declared = modules[provider].variables
    for (const name of spec.variables) expect(declared, `variable "${name}"`).toHaveProperty(name)
    expect(Object.keys(modules[provider].files['variables.tf'].variable).sort()).toEqual(Object.keys(declared).sort())
    for (const name of COMMON_VARIABLES) expect(spec.variables).toContain(name)
  })

  it('gets every variable without a default from citc, even from the smallest inputs', () => {
    const written = tfvarsFor(minimalInputs(provider))
    const required = Object.entries(modules[provider].variables)
      .filter(([, v]) => !('default' in v))
      .map(([name]) => name)
    expect(required.length).toBeGreaterThan(3)
    for (const name of required) expect(written, `required variable ${name}`).toHaveProperty(name)
  })

  it('writes only declared variables, and every variable on its list can be written', () => {
    const declared = Object.keys(modules[provider].variables)
    const minimal = Object.keys(tfvarsFor(minimalInputs(provider)))
    const full = Object.keys(tfvarsFor(fullInputs(provider)))
    for (const name of [...minimal, ...full]) {
      expect(declared).toContain(name)
      expect(spec.variables).toContain(name)
    }
    // Between the two, every variable citc lists is actually written by some input.
    const either = new Set([...minimal, ...full, ...(provider === 'oracle' ? ['config_file_profile'] : [])])
    expect([...spec.variables].filter((v) => !either.has(v))).toEqual([])
  })

  it('marks the host private key sensitive, and validates cheap things', () => {
    const vars = modules[provider].variables
    expect(vars.ssh_host_key.sensitive).toBe(true)
    for (const name of ['cluster_id', 'ssh_public_key', 'ssh_host_key', 'ssh_host_key_public', 'image_os', 'ssh_cidr', 'region']) {
      expect(vars[name].validation, `validation of ${name}`).toBeDefined()
    }
    expect(vars.ssh_cidr.default).toBe('0.0.0.0/0')
    expect(vars.image_os.default).toBe('ubuntu-24.04')
  })

  it('has every output citc reads', () => {
    const outputs = modules[provider].outputs
    for (const name of spec.outputs) expect(outputs, `output "${name}"`).toHaveProperty(name)
    for (const name of COMMON_OUTPUTS) expect(spec.outputs).toContain(name)
    // What a node driver needs later: where to launch and from which image.
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(['base_image', provider === 'google' ? 'subnetwork' : 'subnet_id']))
  })

  it('tags or labels every resource that can carry tags with cluster = var.cluster_id', async () => {
    const mod = modules[provider]
    const attr = TAG_ATTRIBUTE[provider]
    expect(mod.locals[TAG_LOCAL[provider]]).toEqual({cluster: '${var.cluster_id}'})
    const untaggable = UNTAGGABLE[provider]
    for (const type of untaggable) expect(only(mod, type).length, `${type} is in the templates`).toBeGreaterThan(0)
    const vars = {cluster_id: 'demo', region: 'r', zone: 'z', mgmt_shape: 's', mgmt_arch: 'x86_64', image_os: 'ubuntu-24.04'}
    let tagged = 0
    for (const r of mod.resources.filter((x) => !untaggable.includes(x.type))) {
      expect(r.body, `${r.address} has ${attr}`).toHaveProperty(attr)
      const value = (await evaluateValue(r.body[attr], scopeFor(mod, vars))) as Record<string, unknown>
      expect(value.cluster, `${r.address}.${attr}.cluster`).toBe('demo')
      tagged++
    }
    expect(tagged).toBeGreaterThanOrEqual(3)
    // Untaggable resources are named after the cluster instead (where they take a name).
    for (const r of mod.resources.filter((x) => untaggable.includes(x.type) && typeof x.body.name === 'string' && x.body.name.includes('$'))) {
      expect(String(await evaluateValue(r.body.name, scopeFor(mod, vars))), r.address).toContain('demo')
    }
  })

  it('opens only SSH (22) to the world, and only on the management node', () => {
    const mod = modules[provider]
    const world = (v: unknown) => mentions(v, 'var.ssh_cidr') || mentions(v, '0.0.0.0/0') || mentions(v, '::/0')
    let sshRules = 0
    if (provider === 'aws') {
      expect(only(mod, 'aws_security_group_rule')).toEqual([])
      expect(only(mod, 'aws_vpc_security_group_ingress_rule')).toEqual([])
      for (const sg of only(mod, 'aws_security_group')) {
        for (const rule of (sg.body.ingress ?? []) as Array<Record<string, unknown>>) {
          if (world(rule.cidr_blocks) || world(rule.ipv6_cidr_blocks)) {
            expect(rule, `${sg.address} ingress`).toMatchObject({protocol: 'tcp', from_port: 22, to_port: 22, cidr_blocks: ['${var.ssh_cidr}']})
            sshRules++
          } else {
            // Anything else comes only from members of the group itself.
            expect(rule, `${sg.address} ingress`).toMatchObject({self: true})
            expect(rule.cidr_blocks).toBeUndefined()
          }
        }
      }
      // The SSH group is on the management node only; the EFS mount target is in the cluster group alone.
      const sshGroups = only(mod, 'aws_security_group').filter((sg) => world((sg.body.ingress ?? []).map((i: Record<string, unknown>) => i.cidr_blocks)))
      expect(sshGroups.map((g) => g.address)).toEqual(['aws_security_group.ssh'])
      const users = mod.resources.filter((r) => r.type !== 'aws_security_group' && mentions(r.body, 'aws_security_group.ssh.'))
      expect(users.map((r) => r.address)).toEqual(['aws_instance.mgmt'])
    }
    if (provider === 'google') {
      for (const fw of only(mod, 'google_compute_firewall')) {
        expect(fw.body.direction).toBe('INGRESS')
        expect(fw.body.deny).toBeUndefined()
        if (world(fw.body.source_ranges)) {
          expect(fw.body.source_ranges).toEqual(['${var.ssh_cidr}'])
          expect(fw.body.allow).toEqual([{protocol: 'tcp', ports: ['22']}])
          expect(fw.body.target_tags).toEqual(['${local.mgmt_tag}'])
          sshRules++
        } else {
          expect(fw.body.source_ranges, fw.address).toEqual(['${var.subnet_cidr}'])
        }
      }
      // Only the management node has the tag the SSH rule targets, and a public address.
      const tagged = mod.resources.filter((r) => mentions(r.body.tags, 'local.mgmt_tag'))
      expect(tagged.map((r) => r.address)).toEqual(['google_compute_instance.mgmt'])
    }
    if (provider === 'oracle') {
      for (const sl of only(mod, 'oci_core_security_list')) {
        for (const rule of sl.body.ingress_security_rules as Array<Record<string, unknown>>) expect(rule.source, sl.address).toBe('${var.vcn_cidr}')
      }
      for (const rule of only(mod, 'oci_core_network_security_group_security_rule')) {
        if (rule.body.direction === 'INGRESS' && world(rule.body.source)) {
          expect(rule.body).toMatchObject({protocol: '6', source: '${var.ssh_cidr}', tcp_options: [{destination_port_range: [{min: 22, max: 22}]}]})
          sshRules++
        }
      }
      const users = mod.resources.filter((r) => r.type !== 'oci_core_network_security_group_security_rule' && mentions(r.body, 'oci_core_network_security_group.ssh.'))
      expect(users.map((r) => r.address)).toEqual(['oci_core_instance.mgmt'])
      // The export is for the VCN only: the management node's own address, then the VCN
      // (security-rules.test.ts checks the squash of each).
      expect(only(mod, 'oci_file_storage_export')[0].body.export_options.map((o: Record<string, unknown>) => o.source)).toEqual([
        '${oci_core_instance.mgmt.private_ip}/32',
        '${var.vcn_cidr}',
      ])
    }
    expect(sshRules).toBe(1)
  })

  it('gives the management node the cloud-init template with exactly the values it uses', () => {
    const mod = modules[provider]
    const [mgmt] = only(mod, INSTANCE[provider])
    const userData = provider === 'aws' ? mgmt.body.user_data : provider === 'google' ? mgmt.body.metadata['user-data'] : mgmt.body.metadata.user_data
    expect(userData).toContain('templatefile("${path.module}/' + CLOUD_INIT_TEMPLATE + '"')
    const passed = new Set([...String(userData).matchAll(/\b([a-z_]+)\s*=/g)].map((m) => m[1]))
    const template = readFileSync(join(TEMPLATES_DIR, CLOUD_INIT_TEMPLATE), 'utf8')
    expect(passed).toEqual(templateVariables(template))
    expect(userData).toMatch(/\bhost_key\s+= var\.ssh_host_key\n/)
    expect(userData).toMatch(new RegExp(`\\bdisable_gce_host_keys\\s+= ${provider === 'google'}\\n`))
  })

  it('builds the shared filesystem and mounts nothing itself (the playbook mounts /mnt/shared)', () => {
    const mod = modules[provider]
    const fs = {aws: 'aws_efs_file_system', google: 'google_filestore_instance', oracle: 'oci_file_storage_file_system'}[provider]
    expect(only(mod, fs)).toHaveLength(1)
    expect(mod.outputs.shared_fs_host.value).toBeTruthy()
  })

  it('gives the node programs an identity scoped to this cluster', () => {
    const mod = modules[provider]
    if (provider === 'aws') {
      const doc = mod.data.find((d) => d.address === 'data.aws_iam_policy_document.node_programs')!
      const statements = doc.body.statement as Array<Record<string, any>>
      // Instances are launched as compute nodes or as the image build's machine (type=image-build),
      // each only with the cluster's tag (test/lib/providers/aws/driver.test.ts checks the rest).
      const run = statements.filter((s) => s.actions.includes('ec2:RunInstances') && s.resources.some((r: string) => r.includes('instance/')))
      expect(run.map((s) => s.sid)).toEqual(['LaunchTaggedComputeNodes', 'LaunchTheImageBuildMachine'])
      expect(run[0].condition).toEqual(
        expect.arrayContaining([
          {test: 'StringEquals', variable: 'aws:RequestTag/cluster', values: ['${var.cluster_id}']},
          {test: 'StringEquals', variable: 'aws:RequestTag/type', values: ['compute']},
        ]),
      )
      const stop = statements.filter((s) => s.actions.includes('ec2:TerminateInstances'))
      expect(stop.map((s) => s.sid)).toEqual(['TerminateOnlyTheClusterComputeNodes', 'StopImageAndTerminateTheImageBuildMachine'])
      for (const s of run) expect(s.condition).toContainEqual({test: 'StringEquals', variable: 'aws:RequestTag/cluster', values: ['${var.cluster_id}']})
      for (const s of stop) expect(s.condition).toContainEqual({test: 'StringEquals', variable: 'aws:ResourceTag/cluster', values: ['${var.cluster_id}']})
      expect(stop[0].condition).toEqual(
        expect.arrayContaining([
          {test: 'StringEquals', variable: 'aws:ResourceTag/cluster', values: ['${var.cluster_id}']},
          {test: 'StringEquals', variable: 'aws:ResourceTag/type', values: ['compute']},
        ]),
      )
      const tag = statements.find((s) => s.actions.includes('ec2:CreateTags'))!
      expect(tag.condition).toEqual([{test: 'StringEquals', variable: 'ec2:CreateAction', values: ['RunInstances']}])
      // No wildcard action anywhere, and nothing outside EC2.
      for (const s of statements) for (const a of s.actions as string[]) expect(a).toMatch(/^ec2:[A-Z][A-Za-z]+$/)
    }
    if (provider === 'google') {
      const role = only(mod, 'google_project_iam_custom_role')[0]
      for (const p of role.body.permissions as string[]) expect(p).toMatch(/^compute\.[a-zA-Z]+\.[a-zA-Z]+$/)
      const binding = only(mod, 'google_project_iam_member')[0]
      expect(binding.body.condition[0].expression).toContain("startsWith('${var.cluster_id}-')")
      expect(binding.body.condition[0].expression).toContain("!resource.name.endsWith('/${var.cluster_id}-mgmt')")
    }
    if (provider === 'oracle') {
      const policy = only(mod, 'oci_identity_policy')[0]
      expect(policy.body.compartment_id).toBe('${var.compartment_ocid}')
      for (const s of policy.body.statements as string[]) expect(s).toMatch(/^Allow dynamic-group \$\{oci_identity_dynamic_group\.mgmt\.name\} to (use|manage|read) [a-z-]+ in compartment id \$\{var\.compartment_ocid\}$/)
      expect(only(mod, 'oci_identity_dynamic_group')[0].body.matching_rule).toBe("ALL {instance.id = '${oci_core_instance.mgmt.id}'}")
    }
  })
})

describe('names derived from the cluster id', () => {
  it.each([LONG_ID, SHORT_ID, 'abc-123'])('OCI DNS labels of "%s" are a letter and at most 14 letters or digits', async (id) => {
    const mod = modules.oracle
    const scope = scopeFor(mod, {cluster_id: id})
    const labels: string[] = []
    for (const r of mod.resources) {
      for (const key of ['dns_label']) if (key in r.body) labels.push(String(await evaluateValue(r.body[key], scope)))
      for (const vnic of (r.body.create_vnic_details ?? []) as Array<Record<string, unknown>>) labels.push(String(await evaluateValue(vnic.hostname_label, scope)))
      if ('hostname_label' in r.body) labels.push(String(await evaluateValue(r.body.hostname_label, scope)))
    }
    expect(labels.length).toBeGreaterThanOrEqual(4) // VCN, subnet, management node, mount target
    for (const label of labels) expect(label).toMatch(/^[a-z][a-z0-9]{0,14}$/)
    expect(await evaluateValue(mod.locals.vcn_dns_label, scope)).toBe(id.replaceAll('-', '').slice(0, 15))
  })

  it.each([LONG_ID, SHORT_ID])('the Google service account ID of "%s" fits (6-30, no trailing hyphen)', async (id) => {
    const mod = modules.google
    const value = String(await evaluateValue(mod.locals.service_account_id, scopeFor(mod, {cluster_id: id})))
    expect(value).toMatch(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/)
  })

  it.each([LONG_ID, SHORT_ID])('the Google custom role ID of "%s" is valid', async (id) => {
    const mod = modules.google
    const [role] = only(mod, 'google_project_iam_custom_role')
    const value = String(await evaluateValue(role.body.role_id.replace('${random_id.role.hex}', 'a1b2c3'), scopeFor(mod, {cluster_id: id})))
    expect(value).toMatch(/^[a-zA-Z0-9_.]{3,64}$/)
  })

  it.each(CLOUD_PROVIDERS)('%s resource names for the longest id stay within 63 characters', async (provider) => {
    const mod = modules[provider]
    const scope = scopeFor(mod, {cluster_id: LONG_ID})
    for (const r of mod.resources) {
      for (const key of ['name', 'display_name']) {
        if (typeof r.body[key] !== 'string' || r.address.startsWith('google_project_iam')) continue
        const value = String(await evaluateValue(r.body[key], scope))
        expect(value.length, `${r.address}.${key} = ${value}`).toBeLessThanOrEqual(63)
      }
    }
  })
})

describe('cloud-init: the management node first boot', () => {
  const template = readFileSync(join(TEMPLATES_DIR, CLOUD_INIT_TEMPLATE), 'utf8')
  const values = {hostname: 'mgmt', admin_key: `${ADMIN_KEY}\n`, host_key: HOST_KEY, host_key_public: `${HOST_KEY_PUBLIC}\n`}

  it.each([false, true])('renders to cloud-config YAML that installs the host key and the admin key (google: %s)', (gce) => {
    const text = renderTemplate(template, {...values, disable_gce_host_keys: gce})
    expect(text.startsWith('#cloud-config\n')).toBe(true)
    const doc = parseYaml(text) as Record<string, any>
    expect(doc.ssh_keys).toEqual({ed25519_private: HOST_KEY, ed25519_public: HOST_KEY_PUBLIC})
    expect(doc.ssh_authorized_keys).toEqual([ADMIN_KEY])
    expect(doc.ssh_deletekeys).toBe(true)
    expect(doc.ssh_genkeytypes).toEqual([])
    expect(doc.ssh_pwauth).toBe(false)
    expect(doc.hostname).toBe('mgmt')
    // Nothing heavy: no packages, no commands (citc runs its playbooks over SSH).
    for (const key of ['packages', 'runcmd', 'package_upgrade', 'bootcmd']) expect(doc).not.toHaveProperty(key)
    if (gce) expect(doc.write_files).toEqual([expect.objectContaining({path: '/etc/default/instance_configs.cfg', content: '[InstanceSetup]\nset_host_keys = false\n'})])
    else expect(doc.write_files).toBeUndefined()
  })

  it('keeps hostile values inside their YAML strings', () => {
    const evil = 'ssh-ed25519 AAAA x\nruncmd: [rm -rf /]\n"quoted" #comment'
    const doc = parseYaml(renderTemplate(template, {...values, admin_key: evil, disable_gce_host_keys: false})) as Record<string, any>
    expect(doc.ssh_authorized_keys).toEqual([evil.trim()])
    expect(doc).not.toHaveProperty('runcmd')
  })

  it('has no template construct the renderer above does not cover', () => {
    expect([...templateVariables(template)].sort()).toEqual(['admin_key', 'disable_gce_host_keys', 'host_key', 'host_key_public', 'hostname'])
  })
})

describe('renderTerraformDir', () => {
  it.each(CLOUD_PROVIDERS)('%s: copies the templates and cloud-init, writes the tfvars 0600 in a 0700 directory', async (provider) => {
    const dir = join(work, `render-${provider}`)
    const result = renderTerraformDir(dir, minimalInputs(provider))
    expect(result.tfvarsFile).toBe(join(dir, TFVARS_FILE))
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(result.tfvarsFile).mode & 0o777).toBe(0o600)
    expect(result.files).toEqual(expect.arrayContaining(['main.tf', 'variables.tf', 'outputs.tf', CLOUD_INIT_TEMPLATE, TFVARS_FILE]))
    expect(readFileSync(join(dir, CLOUD_INIT_TEMPLATE), 'utf8')).toBe(readFileSync(join(TEMPLATES_DIR, CLOUD_INIT_TEMPLATE), 'utf8'))
    const tfvars = JSON.parse(readFileSync(result.tfvarsFile, 'utf8')) as Record<string, unknown>
    expect(Object.keys(tfvars).sort()).toEqual([...result.variables].sort())
    expect(tfvars.ssh_host_key).toBe(HOST_KEY)
    expect(tfvars.cluster_id).toBe('demo')
    // The rendered directory is a module the parser reads like the templates.
    const rendered = await loadModule(dir)
    expect(Object.keys(rendered.variables).sort()).toEqual(Object.keys(modules[provider].variables).sort())
  })

  it('re-renders idempotently: stale templates go, Terraform state and plans stay', () => {
    const dir = join(work, 'rerender')
    renderTerraformDir(dir, minimalInputs('aws'))
    writeFileSync(join(dir, 'old-removed.tf'), '# a template an older citc shipped\n')
    writeFileSync(join(dir, 'terraform.tfstate'), '{"version":4}\n')
    writeFileSync(join(dir, 'citc.tfplan'), 'plan')
    mkdirSync(join(dir, '.terraform'))
    const again = renderTerraformDir(dir, {...minimalInputs('aws'), mgmtShape: 'c7g.large'})
    expect(existsSync(join(dir, 'old-removed.tf'))).toBe(false)
    expect(readFileSync(join(dir, 'terraform.tfstate'), 'utf8')).toBe('{"version":4}\n')
    expect(existsSync(join(dir, 'citc.tfplan'))).toBe(true)
    expect(existsSync(join(dir, '.terraform'))).toBe(true)
    const tfvars = JSON.parse(readFileSync(again.tfvarsFile, 'utf8')) as Record<string, unknown>
    expect(tfvars).toMatchObject({mgmt_shape: 'c7g.large', mgmt_arch: 'arm64'})
  })

  it('refuses bad inputs with every problem located by flag, writing nothing', () => {
    const dir = join(work, 'refused')
    const bad = {...minimalInputs('aws'), clusterId: 'Bad_Name', zone: 'eu-west-1a', sshPublicKey: 'not a key', sshCidr: '10.0.0.0/33'}
    let error: unknown
    try {
      renderTerraformDir(dir, bad)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).problems.map((p) => p.where).sort()).toEqual(['--name', '--ssh-cidr', '--zone', 'admin key'])
    expect(existsSync(dir)).toBe(false)
  })
})
