// `citc doctor --security`'s judgements: pure functions over what the collector found on the
// management node (security-facts.ts), so each rule is tested without a cluster. Every finding says
// what is wrong and the command that fixes it; nothing here ever holds a secret's value (the collector
// compares contents on the node and reports only which files matched).
import {posix} from 'node:path'

import {shellQuote} from '../../shell-quote.js'
import {type ExportEntry, guardCovers, parseExports, parseLocalGuard, type SecurityFacts, type SocketFact, type StatFact} from './security-facts.js'

export interface SecurityItem {
  /** False: a finding (something to fix). */
  ok: boolean
  /** What it is about: a path, "tcp 0.0.0.0:389", "FILE:LINE CLIENT". */
  subject: string
  summary: string
  /** The exact command that fixes a finding (run on the management node, as root, unless it is a citc command). */
  fix?: string
}

export interface SecurityCheck {
  name: 'collector' | 'sockets' | 'directory' | 'readable files' | 'secret files' | 'homes' | 'exports'
  ok: boolean
  summary: string
  items: SecurityItem[]
  notes: string[]
}

/** Where the node keeps what is checked (under the stand-in's root in tests). */
export interface SecurityLayout {
  etcCitc: string
  etcSlurm: string
  secretsDir: string
  mungeKey: string
  /** /etc/slurm/slurmdbd.conf: where slurmdbd reads it. */
  slurmdbdConf: string
  sharedDir: string
  /** The old place, on the shared filesystem (<shared>/etc/slurm/slurmdbd.conf). */
  sharedSlurmdbdConf: string
  homeDir: string
}

export interface SecurityContext {
  cluster: string
  provider: string
  /** The management node is this machine (the local provider: its own sockets face the user's network). */
  thisMachine: boolean
  /** Machines joined with `citc node add` (they reach the node over the cluster network). */
  joined: boolean
  /** The user slurmdbd runs as, who owns slurmdbd.conf (root on local clusters, slurm on clouds). */
  slurmUser: string
  /** The shared filesystem is the cloud's own, made by Terraform (clusters citc created on a cloud). */
  cloudSharedFs?: boolean
  layout: SecurityLayout
}

const octal = (mode: number, width = 4) => mode.toString(8).padStart(width, '0')
const q = (path: string) => shellQuote([path])
const check = (name: SecurityCheck['name'], summary: string, items: SecurityItem[], notes: string[] = []): SecurityCheck => ({name, ok: items.every((i) => i.ok), summary, items, notes})
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

// ---------------------------------------------------------------------------------------------
// Listening sockets

export type Reach = 'loopback' | 'cluster network' | 'every interface' | 'a public address'

function v4(address: string): number[] | undefined {
  const a = address.replace(/^::ffff:/i, '')
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a)
  return m ? m.slice(1).map(Number) : undefined
}

/** Who can reach a socket bound to this address. Private ranges (RFC 1918, CGNAT, link-local, ULA) are the cluster's network. */
export function reachOf(address: string): Reach {
  if (address === '*' || address === '0.0.0.0' || address === '::') return 'every interface'
  const b = v4(address)
  if (b) {
    if (b[0] === 127) return 'loopback'
    const [x, y] = b
    const isPrivate = x === 10 || (x === 172 && y >= 16 && y < 32) || (x === 192 && y === 168) || (x === 100 && y >= 64 && y < 128) || (x === 169 && y === 254)
    return isPrivate ? 'cluster network' : 'a public address'
  }
  const a = address.toLowerCase()
  if (a === '::1') return 'loopback'
  if (/^f[cd]/.test(a) || /^fe[89ab]/.test(a)) return 'cluster network'
  return 'a public address'
}

/** The cluster network's CIDR: the first private IPv4 address of the node, as a network ("10.0.0.0/24"). */
export function clusterCidr(addresses: readonly string[]): string | undefined {
  for (const a of addresses) {
    const [addr, len] = a.split('/')
    const b = v4(addr)
    const n = Number(len)
    if (!b || reachOf(addr) !== 'cluster network' || !(n >= 8 && n <= 32)) continue
    const value = ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0
    const mask = n === 32 ? 0xffffffff : (~((1 << (32 - n)) - 1)) >>> 0
    const net = (value & mask) >>> 0
    return `${[net >>> 24, (net >>> 16) & 255, (net >>> 8) & 255, net & 255].join('.')}/${n}`
  }
  return undefined
}

const who = (s: SocketFact) => (s.process ? `${s.process} (pid ${s.pid})` : 'a process ss cannot name')
const where = (s: SocketFact) => `${s.proto} ${s.address.includes(':') ? `[${s.address}]` : s.address}:${s.port}`

/** Reachable from everywhere on purpose: the way in (SSH), and the DHCP client the node's own address comes from. */
function expectedEverywhere(s: SocketFact): string | undefined {
  if (s.proto === 'tcp' && s.port === 22 && (s.process === undefined || s.process === 'sshd')) return 'SSH, the way in'
  if (s.proto === 'udp' && (s.port === 68 || s.port === 546)) return 'the DHCP client'
  return undefined
}

/** The firewall rule that leaves the port to loopback (and the cluster network when given). */
function firewallFix(s: SocketFact, cidr: string | undefined): string {
  const v6 = s.address.includes(':') && !/^::ffff:/i.test(s.address)
  const tool = v6 ? 'ip6tables' : 'iptables'
  return [tool, '-I', 'INPUT', '-p', s.proto, '--dport', String(s.port), '!', '-i', 'lo', ...(cidr && !v6 ? ['!', '-s', cidr] : []), '-j', 'DROP'].join(' ')
}

/**
 * Each listening socket and who can reach it. A cloud management node: anything on every interface (or
 * a public address) but SSH is a finding; the cluster network is where Slurm, LDAP, NFS and the
 * exporters belong. A local cluster: anything off loopback is a finding, unless machines joined it
 * (then the cluster network is where they reach it).
 */
export function socketsCheck(facts: Pick<SecurityFacts, 'sockets' | 'socketsError' | 'addresses' | 'guard'>, ctx: Pick<SecurityContext, 'thisMachine' | 'joined'> & {cluster?: string}): SecurityCheck {
  if (facts.socketsError !== undefined) {
    return check('sockets', 'cannot list the listening sockets', [{ok: false, subject: 'ss', summary: facts.socketsError, fix: 'apt-get install iproute2'}])
  }
  const cidr = clusterCidr(facts.addresses)
  const networkAllowed = !ctx.thisMachine || ctx.joined
  const guard = facts.guard ? parseLocalGuard(facts.guard) : undefined
  const items: SecurityItem[] = []
  const sorted = [...facts.sockets].sort((a, b) => a.proto.localeCompare(b.proto) || a.port - b.port || a.address.localeCompare(b.address))
  for (const s of sorted) {
    const reach = reachOf(s.address)
    const subject = where(s)
    if (reach === 'loopback') {
      items.push({ok: true, subject, summary: `${who(s)}: loopback only`})
      continue
    }
    if (reach === 'cluster network') {
      if (networkAllowed) items.push({ok: true, subject, summary: `${who(s)}: the cluster network`})
      else items.push({ok: false, subject, summary: `${who(s)}: the network, on a local cluster no machine joined (loopback is enough)`, fix: firewallFix(s, undefined)})
      continue
    }
    // Slurm's daemons cannot be told which address to bind: on a local cluster citc's guard refuses new
    // connections to their ports from anything but lo (and slurmctld's from the joined machines).
    if (guard && s.proto === 'tcp' && guardCovers(guard, s.port)) {
      const joinedToo = ctx.joined && guard.joinedPorts.includes(s.port) ? ' and the joined machines' : ''
      items.push({ok: true, subject, summary: `${who(s)}: ${reach}, but citc's local guard (nftables table inet citc_local_guard) refuses it to all but loopback${joinedToo}`})
      continue
    }
    const expected = expectedEverywhere(s)
    if (expected) {
      items.push({ok: true, subject, summary: `${who(s)}: ${reach} (${expected})`})
      continue
    }
    const belongs = networkAllowed ? `the cluster network${cidr ? ` (${cidr})` : ''}` : 'loopback'
    items.push({ok: false, subject, summary: `${who(s)}: ${reach}; it belongs on ${belongs}`, fix: firewallFix(s, networkAllowed ? cidr : undefined)})
  }
  const bad = items.filter((i) => !i.ok).length
  const summary = `${plural(items.length, 'listening socket')}${bad ? `, ${bad} reachable from further than ${networkAllowed ? 'the cluster network' : 'loopback'}` : ''}`
  const notes = ctx.thisMachine ? [ctx.joined ? 'machines joined this cluster: the cluster network may reach it' : 'no machine joined this cluster: everything but SSH should listen on loopback'] : []
  if (ctx.thisMachine && !guard) notes.push(`citc's local guard (nftables table inet citc_local_guard) is not loaded: run citc create --name ${ctx.cluster ?? 'NAME'} again to load it`)
  return check('sockets', summary, items, notes)
}

// ---------------------------------------------------------------------------------------------
// Files readable by others

/** A secret by its name: what citc keeps secret, and private keys by the usual names. */
export function secretByName(path: string, layout: Pick<SecurityLayout, 'secretsDir'>): string | undefined {
  const base = posix.basename(path)
  if (path.startsWith(`${layout.secretsDir}/`)) return `in ${layout.secretsDir}`
  if (base === 'munge.key') return 'the munge key'
  if (base === 'slurmdbd.conf') return 'it holds the accounting database password'
  if (/\.key$|_key$/.test(base)) return 'a private key by its name'
  if (/passw(or)?d/i.test(base)) return 'a password file by its name'
  return undefined
}

/** Who other than the owner can read `f`: others (o+r, every directory above it o+x), or a group other than root or the owner's own. */
export function readers(f: StatFact, dirs: ReadonlyMap<string, StatFact>): string[] {
  let othersThrough = true
  let anyoneThrough = true
  for (let d = posix.dirname(f.path); d !== posix.dirname(d); d = posix.dirname(d)) {
    const st = dirs.get(d)
    if (!st) continue // above the scanned roots: /etc, /mnt are open to all
    if ((st.mode & 0o001) === 0) othersThrough = false
    if ((st.mode & 0o011) === 0) anyoneThrough = false
  }
  const out: string[] = []
  if ((f.mode & 0o004) !== 0 && othersThrough) out.push('others')
  if ((f.mode & 0o040) !== 0 && anyoneThrough && f.group !== 'root' && f.group !== f.owner) out.push(`group ${f.group}`)
  return out
}

/**
 * Files under /etc/citc, /etc/slurm and the shared filesystem that others (or a foreign group) can
 * read and that are secret: by name, or because their content holds one of the cluster's secrets.
 */
export function readableFilesCheck(facts: Pick<SecurityFacts, 'scan' | 'scanned' | 'capped' | 'cap' | 'holdingSecret' | 'secretsCompared'>, layout: SecurityLayout): SecurityCheck {
  const dirs = new Map(facts.scan.filter((s) => s.type === 'd').map((s) => [s.path, s]))
  const items: SecurityItem[] = []
  for (const f of facts.scan) {
    if (f.type !== 'f') continue
    const by = readers(f, dirs)
    if (by.length === 0) continue
    const why = [secretByName(f.path, layout), facts.holdingSecret.has(f.path) ? "its content holds one of the cluster's secrets" : undefined].filter((x): x is string => x !== undefined)
    if (why.length === 0) continue
    items.push({ok: false, subject: f.path, summary: `readable by ${by.join(' and ')} (${octal(f.mode)} ${f.owner}:${f.group}): ${why.join('; ')}`, fix: `chmod go-rwx ${q(f.path)}`})
  }
  const roots = [layout.etcCitc, layout.etcSlurm, layout.sharedDir].join(', ')
  const notes = [`homes in ${layout.homeDir} are not looked inside (their modes are checked); files over 1 MiB are not read`]
  if (facts.capped) notes.unshift(`the scan stopped at its cap of ${facts.cap} entries: files beyond it were not checked`)
  const summary = items.length
    ? `${plural(items.length, 'secret file')} readable by others`
    : `none of ${plural(facts.scanned, 'entry', 'entries')} under ${roots} is a secret readable by others (contents compared with ${plural(facts.secretsCompared, 'secret')})`
  return check('readable files', summary, items, notes)
}

// ---------------------------------------------------------------------------------------------
// The secret files' modes and owners

/** No bit for group or others, and the right owner. */
const privateTo = (f: StatFact, owner: string) => (f.mode & 0o077) === 0 && f.owner === owner

function expectPrivate(f: StatFact | undefined, path: string, o: {type: 'f' | 'd'; owner: string; group: string; mode: number; what: string}): SecurityItem {
  const fix = `chown ${o.owner}:${o.group} ${q(path)} && chmod ${octal(o.mode)} ${q(path)}`
  if (!f) return {ok: true, subject: path, summary: `${o.what}: absent`}
  const seen = `${octal(f.mode)} ${f.owner}:${f.group}`
  if (f.type !== o.type) return {ok: false, subject: path, summary: `${o.what}: is ${f.type === 'l' ? `a symlink to ${f.target}` : `of type ${f.type}`}, not a ${o.type === 'd' ? 'directory' : 'file'}`, fix: `ls -la ${q(path)}`}
  if (privateTo(f, o.owner)) return {ok: true, subject: path, summary: `${o.what}: ${seen}`}
  return {ok: false, subject: path, summary: `${o.what}: ${seen}, should be ${octal(o.mode)} owned by ${o.owner} (no access for group or others)`, fix}
}

/** Whether `target` (a symlink's, relative to `link`'s directory) lies on the shared filesystem. */
const onShared = (link: string, target: string, sharedDir: string) => {
  const abs = posix.resolve(posix.dirname(link), target)
  return abs === sharedDir || abs.startsWith(`${sharedDir}/`)
}

/**
 * The table: /etc/citc/secrets 0700 root and every file in it 0600 root (the cluster CA's key too),
 * munge.key 0400 munge, /etc/slurm/slurmdbd.conf 0600 owned by the Slurm user and a file of its own —
 * not a link to the shared filesystem, where root on any node could read it; no copy left there.
 */
export function secretFilesCheck(facts: Pick<SecurityFacts, 'secretFiles' | 'linkTargets'>, ctx: Pick<SecurityContext, 'cluster' | 'slurmUser' | 'layout'>): SecurityCheck {
  const {layout} = ctx
  const at = new Map(facts.secretFiles.map((f) => [f.path, f]))
  const items: SecurityItem[] = [expectPrivate(at.get(layout.secretsDir), layout.secretsDir, {type: 'd', owner: 'root', group: 'root', mode: 0o700, what: "the cluster's secrets"})]
  for (const f of facts.secretFiles.filter((s) => posix.dirname(s.path) === layout.secretsDir).sort((a, b) => a.path.localeCompare(b.path))) {
    items.push(expectPrivate(f, f.path, {type: 'f', owner: 'root', group: 'root', mode: 0o600, what: 'secret'}))
  }
  items.push(expectPrivate(at.get(layout.mungeKey), layout.mungeKey, {type: 'f', owner: 'munge', group: 'munge', mode: 0o400, what: 'munge key'}))

  const dbd = at.get(layout.slurmdbdConf)
  const rerun = `citc create --name ${ctx.cluster}`
  const dbdRule = {type: 'f', owner: ctx.slurmUser, group: 'root', mode: 0o600, what: 'slurmdbd.conf'} as const
  const shared = at.get(layout.sharedSlurmdbdConf)
  if (dbd?.type === 'l' && dbd.target !== undefined && onShared(layout.slurmdbdConf, dbd.target, layout.sharedDir)) {
    items.push({ok: false, subject: layout.slurmdbdConf, summary: `slurmdbd.conf lives on the shared filesystem (a link to ${dbd.target}), where root on any node can read the database password: run citc create again to move it`, fix: rerun})
  } else {
    if (dbd?.type === 'l') {
      const target = facts.linkTargets.get(layout.slurmdbdConf)
      items.push({...expectPrivate(target, layout.slurmdbdConf, dbdRule), subject: `${layout.slurmdbdConf} -> ${dbd.target}`})
    } else items.push(expectPrivate(dbd, layout.slurmdbdConf, dbdRule))
    if (shared && shared.type !== 'd') {
      items.push({ok: false, subject: layout.sharedSlurmdbdConf, summary: 'an old copy of slurmdbd.conf (the database password) is on the shared filesystem', fix: `rm -f ${q(layout.sharedSlurmdbdConf)}`})
    }
  }
  const bad = items.filter((i) => !i.ok).length
  return check('secret files', bad ? `${plural(bad, 'secret file')} with the wrong mode, owner or place` : `${plural(items.length, 'path')} as they should be`, items)
}

// ---------------------------------------------------------------------------------------------
// Homes

/** The homes' directory lets no one but root write in it; each home lets others neither read nor write (0700 or 0750). */
export function homesCheck(facts: Pick<SecurityFacts, 'homes'>, layout: Pick<SecurityLayout, 'homeDir'>): SecurityCheck {
  const base = facts.homes.find((h) => h.path === layout.homeDir)
  if (!base) return check('homes', `no homes' directory at ${layout.homeDir}`, [])
  const items: SecurityItem[] = []
  if ((base.mode & 0o022) !== 0) items.push({ok: false, subject: base.path, summary: `writable by ${(base.mode & 0o002) !== 0 ? 'others' : `group ${base.group}`} (${octal(base.mode)}): anyone could make or replace a home`, fix: `chmod go-w ${q(base.path)}`})
  const homes = facts.homes.filter((h) => h.path !== layout.homeDir && h.type === 'd')
  for (const h of homes.sort((a, b) => a.path.localeCompare(b.path))) {
    if ((h.mode & 0o006) === 0) continue
    const what = [(h.mode & 0o004) !== 0 ? 'readable' : '', (h.mode & 0o002) !== 0 ? 'writable' : ''].filter(Boolean).join(' and ')
    items.push({ok: false, subject: h.path, summary: `${what} by others (${octal(h.mode)} ${h.owner}): a home should be 0700 or 0750`, fix: `chmod 0700 ${q(h.path)}`})
  }
  return check('homes', items.length ? `${plural(items.length, 'finding')} among ${plural(homes.length, 'home')}` : `${plural(homes.length, 'home')}, none open to others`, items)
}

// ---------------------------------------------------------------------------------------------
// NFS exports

/** The clients that are the management node itself: loopback, its names and addresses. */
function isSelf(client: string, facts: Pick<SecurityFacts, 'addresses' | 'hostnames'>): boolean {
  const c = client.toLowerCase()
  if (c === 'localhost' || c === '::1' || /^127\./.test(c)) return true
  if (facts.hostnames.some((h) => h.toLowerCase() === c)) return true
  return facts.addresses.some((a) => a.split('/')[0] === c || a === c)
}

/**
 * /etc/exports and /etc/exports.d/*.exports: every client but the management node itself has root
 * squashed (root on a node is nobody on the shared filesystem). A cloud's own shared filesystem is
 * configured by Terraform and checked in its templates, not from here.
 */
export function exportsCheck(facts: Pick<SecurityFacts, 'exports' | 'addresses' | 'hostnames'>, ctx: Pick<SecurityContext, 'cloudSharedFs' | 'provider'>): SecurityCheck {
  const entries: ExportEntry[] = facts.exports.flatMap(parseExports)
  const items: SecurityItem[] = entries.map((e) => {
    const subject = `${e.file}:${e.line} ${e.path} ${e.client}`
    const open = e.options.includes('no_root_squash')
    if (!open) return {ok: true, subject, summary: e.options.includes('all_squash') ? 'squashes every user' : 'squashes root'}
    if (isSelf(e.client, facts)) return {ok: true, subject, summary: 'no_root_squash for the management node itself (it makes the homes)'}
    return {ok: false, subject, summary: `no_root_squash: root on ${e.client} is root on ${e.path}`, fix: `sed -i '${e.line}s/\\bno_root_squash\\b/root_squash/' ${q(e.file)} && exportfs -ra`}
  })
  const notes = ctx.cloudSharedFs
    ? [`the shared filesystem is the cloud's own (EFS, Filestore or OCI File Storage): its export options are set by Terraform (templates/terraform/${ctx.provider}/storage.tf) and checked there, not from this node`]
    : []
  const bad = items.filter((i) => !i.ok).length
  const summary = entries.length === 0 ? 'no NFS exports on this node' : bad ? `${plural(bad, 'export')} let a node's root act as root` : `${plural(entries.length, 'export')}, each squashing root`
  return check('exports', summary, items, notes)
}

// ---------------------------------------------------------------------------------------------

/** The collector ran as root (else it saw only what its user may: said, and a finding). */
export function collectorCheck(facts: Pick<SecurityFacts, 'uid'>, cluster: string): SecurityCheck | undefined {
  if (facts.uid === 0) return undefined
  return check('collector', `ran as uid ${facts.uid}, not root: what that user cannot read was not checked`, [{ok: false, subject: 'uid', summary: 'run as root on the management node', fix: `sudo citc doctor --security -c ${cluster}`}])
}

/**
 * Plain LDAP kept beyond loopback for the nodes of a cluster made before the directory went over TLS
 * (the ldap role's slapd-plain-uris): a finding until they have moved. Absent: no check (nothing kept).
 */
export function directoryCheck(facts: Pick<SecurityFacts, 'plainLdap'>, cluster: string): SecurityCheck | undefined {
  if (facts.plainLdap.length === 0) return undefined
  const items = facts.plainLdap.map((uri) => ({
    ok: false,
    subject: uri,
    summary: 'slapd still serves plain LDAP here for nodes and machines set up before the directory went over TLS: their users and groups travel in clear text',
    fix: `once every node runs an image built since (citc rebuild-image -c ${cluster}) and each joined machine was added again (citc node add -c ${cluster} …): rm /etc/citc/slapd-plain-uris && citc create --name ${cluster}`,
  }))
  return check('directory', `plain LDAP kept beyond loopback on ${plural(items.length, 'address', 'addresses')}`, items)
}

/** Every check, in the report's order. */
export function securityChecks(facts: SecurityFacts, ctx: SecurityContext): SecurityCheck[] {
  const collector = collectorCheck(facts, ctx.cluster)
  return [
    ...(collector ? [collector] : []),
    socketsCheck(facts, ctx),
    ...[directoryCheck(facts, ctx.cluster)].filter((c) => c !== undefined),
    readableFilesCheck(facts, ctx.layout),
    secretFilesCheck(facts, ctx),
    homesCheck(facts, ctx.layout),
    exportsCheck(facts, ctx),
  ]
}
