// The security rules and shared-filesystem exports each cloud's templates render (issue #25: only
// what is needed is reachable; root on a node is not root on /mnt/shared). Every ingress rule of
// every kind the cloud has is read into one shape — who may send (the cluster's own network, or
// anything else), which protocol and ports — so a rule added in another resource type or block is
// seen too: SSH from var.ssh_cidr must be the only thing open to sources outside the cluster network,
// and Slurm, LDAP, NFS and node-exporter must be open only inside it. The exports must squash root
// for every client but the management node. (No Terraform runs here: this reads the HCL with
// HashiCorp's parser, as terraform.test.ts does, and evaluates the address arithmetic itself.)
import {join} from 'node:path'

import {beforeAll, describe, expect, it} from 'vitest'

import {CLOUD_PROVIDERS, TEMPLATES_DIR, type CloudProvider} from '../../src/lib/providers/cloud.js'
import {evaluateValue, loadModule, type Body, type Resource, type TfModule} from './hcl.js'

/* eslint-disable @typescript-eslint/no-explicit-any */

const modules = {} as Record<CloudProvider, TfModule>
beforeAll(async () => {
  for (const p of CLOUD_PROVIDERS) modules[p] = await loadModule(join(TEMPLATES_DIR, 'terraform', p))
})

const only = (mod: TfModule, type: string): Resource[] => mod.resources.filter((r) => r.type === type)

/** One ingress rule, whatever resource or block it came from. */
interface Ingress {
  where: string
  /** The sources as written (expressions kept, e.g. "${var.ssh_cidr}"). */
  sources: string[]
  /** The source is the cluster itself (its network, its security group or network tag). */
  inside: boolean
  protocol: 'tcp' | 'udp' | 'icmp' | 'all' | string
  /** Inclusive port range; [0, 65535] when the rule opens every port. */
  ports: [number, number]
}

const ALL_PORTS: [number, number] = [0, 65535]

/** Sources that are the cluster network itself, by cloud (anything else counts as outside). */
const INSIDE: Record<CloudProvider, string[]> = {
  aws: ['${var.vpc_cidr}', '${aws_subnet.cluster.cidr_block}', '${aws_security_group.cluster.id}'],
  google: ['${var.subnet_cidr}', '${local.cluster_tag}'],
  oracle: ['${var.vcn_cidr}', '${oci_core_subnet.cluster.cidr_block}'],
}

const insideOnly = (provider: CloudProvider, sources: string[]) => sources.length > 0 && sources.every((s) => INSIDE[provider].includes(s))

function awsProtocol(p: unknown): string {
  const s = String(p)
  return s === '-1' || s === 'all' ? 'all' : s === '6' ? 'tcp' : s === '17' ? 'udp' : s
}

function awsIngress(mod: TfModule): Ingress[] {
  const out: Ingress[] = []
  const add = (where: string, rule: Body) => {
    const sources = [
      ...((rule.cidr_blocks ?? []) as string[]),
      ...((rule.ipv6_cidr_blocks ?? []) as string[]),
      ...((rule.prefix_list_ids ?? []) as string[]),
      ...((rule.security_groups ?? []) as string[]),
      ...(rule.cidr_ipv4 ? [rule.cidr_ipv4 as string] : []),
      ...(rule.cidr_ipv6 ? [rule.cidr_ipv6 as string] : []),
      ...(rule.source_security_group_id ? [rule.source_security_group_id as string] : []),
      ...(rule.referenced_security_group_id ? [rule.referenced_security_group_id as string] : []),
      ...(rule.self === true ? ['${aws_security_group.cluster.id}'] : []),
    ]
    const protocol = awsProtocol(rule.protocol ?? rule.ip_protocol)
    const ports: [number, number] = protocol === 'all' ? ALL_PORTS : [Number(rule.from_port ?? 0), Number(rule.to_port ?? 65535)]
    out.push({where, sources, inside: insideOnly('aws', sources), protocol, ports})
  }
  for (const sg of only(mod, 'aws_security_group')) {
    for (const rule of (sg.body.ingress ?? []) as Body[]) {
      // "self" is the group itself: only the cluster group's own members may count as inside.
      if (rule.self === true && sg.name !== 'cluster') add(`${sg.address} ingress (self)`, {...rule, self: false, security_groups: [`\${${sg.address}.id}`]})
      else add(`${sg.address} ingress`, rule)
    }
  }
  for (const r of only(mod, 'aws_security_group_rule')) if (r.body.type === 'ingress') add(r.address, r.body)
  for (const r of only(mod, 'aws_vpc_security_group_ingress_rule')) add(r.address, r.body)
  return out
}

function googleIngress(mod: TfModule): Ingress[] {
  const out: Ingress[] = []
  for (const fw of only(mod, 'google_compute_firewall')) {
    if ((fw.body.direction ?? 'INGRESS') !== 'INGRESS') continue
    const sources = [...((fw.body.source_ranges ?? []) as string[]), ...((fw.body.source_tags ?? []) as string[]), ...((fw.body.source_service_accounts ?? []) as string[])]
    // A rule with no source at all applies to 0.0.0.0/0 (Google's default).
    const effective = sources.length > 0 ? sources : ['0.0.0.0/0']
    for (const allow of (fw.body.allow ?? []) as Body[]) {
      const protocol = String(allow.protocol) === 'all' ? 'all' : String(allow.protocol)
      const ranges = (allow.ports ?? []) as string[]
      if (protocol === 'all' || ranges.length === 0) {
        out.push({where: fw.address, sources: effective, inside: insideOnly('google', effective), protocol, ports: ALL_PORTS})
        continue
      }
      for (const r of ranges) {
        const [from, to] = String(r).split('-').map(Number)
        out.push({where: fw.address, sources: effective, inside: insideOnly('google', effective), protocol, ports: [from, to ?? from]})
      }
    }
  }
  return out
}

function ociProtocol(p: unknown): string {
  const s = String(p)
  return s === 'all' ? 'all' : s === '6' ? 'tcp' : s === '17' ? 'udp' : s === '1' ? 'icmp' : s
}

function ociPorts(rule: Body, protocol: string): [number, number] {
  const options = (protocol === 'tcp' ? rule.tcp_options : protocol === 'udp' ? rule.udp_options : undefined) as Body[] | undefined
  const range = options?.[0]?.destination_port_range?.[0] as Body | undefined
  return range ? [Number(range.min), Number(range.max)] : ALL_PORTS
}

function oracleIngress(mod: TfModule): Ingress[] {
  const out: Ingress[] = []
  for (const sl of only(mod, 'oci_core_security_list')) {
    for (const rule of (sl.body.ingress_security_rules ?? []) as Body[]) {
      const protocol = ociProtocol(rule.protocol)
      const sources = [String(rule.source)]
      out.push({where: `${sl.address} ingress`, sources, inside: insideOnly('oracle', sources), protocol, ports: ociPorts(rule, protocol)})
    }
  }
  for (const r of only(mod, 'oci_core_network_security_group_security_rule')) {
    if (r.body.direction !== 'INGRESS') continue
    const protocol = ociProtocol(r.body.protocol)
    const sources = [String(r.body.source)]
    out.push({where: r.address, sources, inside: insideOnly('oracle', sources), protocol, ports: ociPorts(r.body, protocol)})
  }
  // Rules written inside the NSG or the default security list would be missed above: there are none.
  expect(only(mod, 'oci_core_default_security_list')).toEqual([])
  return out
}

const INGRESS: Record<CloudProvider, (mod: TfModule) => Ingress[]> = {aws: awsIngress, google: googleIngress, oracle: oracleIngress}

/** What the cluster's daemons listen on (TCP): open inside the cluster network, never outside. */
const SERVICES: Array<{name: string; ports: [number, number]}> = [
  {name: 'Slurm (slurmctld, slurmd, slurmdbd)', ports: [6817, 6819]},
  {name: 'LDAP', ports: [389, 389]},
  {name: 'LDAPS', ports: [636, 636]},
  {name: 'NFS', ports: [2049, 2049]},
  {name: 'node-exporter', ports: [9100, 9100]},
]

const opens = (rule: Ingress, ports: [number, number]) =>
  (rule.protocol === 'all' || rule.protocol === 'tcp') && rule.ports[0] <= ports[1] && rule.ports[1] >= ports[0]

describe.each(CLOUD_PROVIDERS)('%s security rules', (provider) => {
  it('opens SSH (22/tcp) from var.ssh_cidr and nothing else to sources outside the cluster network', () => {
    const rules = INGRESS[provider](modules[provider])
    expect(rules.length).toBeGreaterThan(1)
    const outside = rules.filter((r) => !r.inside)
    expect(outside.map((r) => ({sources: r.sources, protocol: r.protocol, ports: r.ports}))).toEqual([
      {sources: ['${var.ssh_cidr}'], protocol: 'tcp', ports: [22, 22]},
    ])
  })

  it.each(SERVICES)('opens $name only inside the cluster network, and there', ({ports}) => {
    const rules = INGRESS[provider](modules[provider]).filter((r) => opens(r, ports))
    expect(rules.filter((r) => !r.inside).map((r) => `${r.where} from ${r.sources.join(', ')}`)).toEqual([])
    expect(rules.length).toBeGreaterThan(0)
  })
})

// ---------------------------------------------------------------------------------------------
// Root squash on the shared filesystem's exports

function cidrRange(cidr: string): [number, number] {
  const [ip, bits] = cidr.includes('/') ? cidr.split('/') : [cidr, '32']
  const n = ip.split('.').reduce((acc, o) => acc * 256 + Number(o), 0)
  const size = 2 ** (32 - Number(bits))
  expect(n % size, `${cidr} is a network address`).toBe(0)
  return [n, n + size - 1]
}

describe('google: Filestore squashes root for every address of the subnet but the management node', () => {
  const MGMT_IP = '${google_compute_instance.mgmt.network_interface[0].network_ip}'

  const filestoreOptions = () => {
    const [fs] = only(modules.google, 'google_filestore_instance')
    expect(fs.body.file_shares).toHaveLength(1)
    return fs.body.file_shares[0].nfs_export_options as Body[]
  }

  it.each([
    ['10.0.0.0/20', '10.0.0.2'],
    ['10.0.0.0/20', '10.0.13.77'],
    ['192.168.7.0/24', '192.168.7.254'],
    ['10.128.0.0/9', '10.200.31.5'],
    ['172.16.0.8/29', '172.16.0.10'],
  ])('subnet %s, management node %s: NO_ROOT_SQUASH for it alone, ROOT_SQUASH for the rest, no overlap, nothing outside', async (subnet, ip) => {
    const mod = modules.google
    const scope = {var: {subnet_cidr: subnet, cluster_id: 'demo'}, locals: mod.locals, known: {[MGMT_IP.slice(2, -1)]: ip}}
    const options: Body[] = await Promise.all(filestoreOptions().map(async (o) => ({...o, ip_ranges: (await evaluateValue(o.ip_ranges, scope)) as string[]})))

    const open = options.filter((o) => o.squash_mode !== 'ROOT_SQUASH')
    expect(open).toEqual([{ip_ranges: [ip], access_mode: 'READ_WRITE', squash_mode: 'NO_ROOT_SQUASH'}])
    for (const o of options.filter((x) => x.squash_mode === 'ROOT_SQUASH')) expect(o).toMatchObject({anon_uid: 65534, anon_gid: 65534})

    // Filestore refuses overlapping ranges (within and across options) and more than 64 per share;
    // together the ranges must be exactly the subnet, the management node's address in none but its own.
    const all = options.flatMap((o) => o.ip_ranges as string[]).map(cidrRange).sort((a, b) => a[0] - b[0])
    expect(all.length).toBeLessThanOrEqual(64)
    const [lo, hi] = cidrRange(subnet)
    expect(all[0][0]).toBe(lo)
    expect(all.at(-1)![1]).toBe(hi)
    for (let i = 1; i < all.length; i++) expect(all[i][0], 'ranges neither overlap nor leave a gap').toBe(all[i - 1][1] + 1)
    const mgmt = cidrRange(ip)[0]
    for (const o of options.filter((x) => x.squash_mode === 'ROOT_SQUASH')) {
      for (const r of (o.ip_ranges as string[]).map(cidrRange)) expect(mgmt < r[0] || mgmt > r[1], `${ip} squashed`).toBe(true)
    }
  })

  it("leaves unsquashed the management node's own address, nothing else", () => {
    const mod = modules.google
    expect(mod.locals.mgmt_private_ip).toBe(MGMT_IP)
    expect(filestoreOptions().filter((o) => o.squash_mode === 'NO_ROOT_SQUASH').map((o) => o.ip_ranges)).toEqual([['${local.mgmt_private_ip}']])
  })
})

describe('oracle: the FSS export squashes root for the VCN but the management node', () => {
  it('lists the management node first (NONE), then the VCN (ROOT to 65534), and nothing else', () => {
    const exports = only(modules.oracle, 'oci_file_storage_export')
    expect(exports).toHaveLength(1)
    // OCI applies to each request the first option whose source matches: order is the rule.
    const options = exports[0].body.export_options as Body[]
    expect(options).toEqual([
      {source: '${oci_core_instance.mgmt.private_ip}/32', access: 'READ_WRITE', identity_squash: 'NONE'},
      {source: '${var.vcn_cidr}', access: 'READ_WRITE', identity_squash: 'ROOT', anonymous_uid: 65534, anonymous_gid: 65534},
    ])
  })
})

describe('aws: EFS', () => {
  it('is reachable only through the mount target in the cluster group', () => {
    for (const mt of only(modules.aws, 'aws_efs_mount_target')) expect(mt.body.security_groups).toEqual(['${aws_security_group.cluster.id}'])
  })

  it("squashes root for every client but the management node's role: its file system policy", () => {
    const mod = modules.aws
    const policies = only(mod, 'aws_efs_file_system_policy')
    expect(policies.map((p) => [p.body.file_system_id, p.body.policy])).toEqual([['${aws_efs_file_system.shared.id}', '${data.aws_iam_policy_document.shared_fs.json}']])
    const doc = mod.data.find((d) => d.address === 'data.aws_iam_policy_document.shared_fs')!
    const statements = doc.body.statement as Array<Record<string, any>>
    const principals = (s: Record<string, any>) => (s.principals as Array<Record<string, any>>).flatMap((p) => p.identifiers as string[])
    for (const s of statements) {
      expect(s.effect).toBe('Allow')
      expect(s.resources).toEqual(['${aws_efs_file_system.shared.arn}'])
    }
    // Root only for the management node's role, nobody else.
    const root = statements.filter((s) => (s.actions as string[]).some((a) => a === 'elasticfilesystem:ClientRootAccess' || a.endsWith(':*') || a === '*'))
    expect(root.map(principals)).toEqual([['${aws_iam_role.mgmt.arn}']])
    // Everyone else (anonymous NFS clients: the compute nodes) may mount and write, through a mount target only.
    const everyone = statements.filter((s) => principals(s).includes('*'))
    expect(everyone.map((s) => [...(s.actions as string[])].sort())).toEqual([['elasticfilesystem:ClientMount', 'elasticfilesystem:ClientWrite']])
    expect(everyone[0].condition).toEqual([{test: 'Bool', variable: 'elasticfilesystem:AccessedViaMountTarget', values: ['true']}])
  })

  it("the management node alone mounts with Amazon's helper and its IAM role (tls,iam): the nodes mount plain NFS", () => {
    const outputs = (name: string) => modules.aws.outputs[name]?.value
    expect(outputs('mgmt_shared_fs_type')).toBe('efs')
    expect(outputs('mgmt_shared_fs_source')).toBe('${aws_efs_file_system.shared.id}:/')
    expect(String(outputs('mgmt_shared_fs_mount_options')).split(',').slice(0, 2)).toEqual(['tls', 'iam'])
    expect(outputs('shared_fs_type')).toBe('nfs4')
  })
})
