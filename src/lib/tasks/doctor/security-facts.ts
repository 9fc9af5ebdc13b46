// What `citc doctor --security` learns on a management node, as plain records (the collector,
// security-collect.ts, gathers them; the checks, security-checks.ts, judge them without a cluster).
// Also the parsers from the tools' own text: `ss -H -ltnup` lines, `ip -o addr` lines, exports(5).

/** One listening socket, from a line of `ss -H -ltnup`. */
export interface SocketFact {
  proto: 'tcp' | 'udp'
  /** The local address without brackets or %interface: "0.0.0.0", "::", "127.0.0.53", "10.0.0.5", "*". */
  address: string
  port: number
  /** The first process ss names (absent when ss cannot see it: another namespace, not root). */
  process?: string
  pid?: number
}

/** One file as `find -printf '%y %m %u %g %s %l %p'` sees it (lstat: a symlink is a symlink). */
export interface StatFact {
  path: string
  /** find's %y: f file, d directory, l symlink, … */
  type: string
  /** Permission bits (find's %m, octal), e.g. 0o600. */
  mode: number
  owner: string
  group: string
  size: number
  /** A symlink's target as written in it (readlink). */
  target?: string
}

export interface ExportsFile {
  file: string
  text: string
}

/** Everything the checks judge. Paths are as on the node (under the stand-in's root in tests). */
export interface SecurityFacts {
  /** The uid the collector ran as (0: it could read everything). */
  uid: number
  sockets: SocketFact[]
  /** Why the sockets could not be listed (ss missing or failing). */
  socketsError?: string
  /** The node's own addresses with their prefix length ("10.0.0.5/24"), and its host names. */
  addresses: string[]
  hostnames: string[]
  /** The secret files' table: lstat of each path that exists (secrets dir and its entries, munge.key, slurmdbd.conf). */
  secretFiles: StatFact[]
  /** What the symlinks among secretFiles resolve to (stat), by the link's path. */
  linkTargets: Map<string, StatFact>
  /** The homes' directory and each home in it (their own modes; never what is inside). */
  homes: StatFact[]
  /** Files and directories under the scanned roots (bounded: see scanned and capped). */
  scan: StatFact[]
  /** How many entries the scan looked at, and whether it stopped at its cap. */
  scanned: number
  capped: boolean
  cap: number
  /** Paths of readable files whose content holds one of the cluster's secrets. */
  holdingSecret: Set<string>
  /** How many secrets the contents were compared with. */
  secretsCompared: number
  exports: ExportsFile[]
  /** Plain ldap:// addresses slapd keeps for nodes set up before the directory went over TLS (/etc/citc/slapd-plain-uris). */
  plainLdap: string[]
  /** `nft list table inet citc_local_guard`, line by line; absent when the table is not loaded (or nft is missing). */
  guard?: string[]
}

const PROCESS_RE = /users:\(\("((?:[^"\\]|\\.)*)",pid=(\d+)/

/**
 * One line of `ss -H -ltnup` (Netid State Recv-Q Send-Q Local Peer [Process]), or undefined for a
 * line that is not a tcp/udp socket. Local is ADDR:PORT, [V6]:PORT, ADDR%IFACE:PORT or *:PORT.
 */
export function parseSsLine(line: string): SocketFact | undefined {
  const cols = line.trim().split(/\s+/)
  if (cols.length < 6) return undefined
  const proto = cols[0]
  if (proto !== 'tcp' && proto !== 'udp') return undefined
  const local = cols[4]
  const m = /^(?:\[([^\]]+)\]|(.*)):(\d+|\*)$/.exec(local)
  if (!m || m[3] === '*') return undefined
  const address = (m[1] ?? m[2]).replace(/%.*$/, '')
  const p = PROCESS_RE.exec(line)
  return {proto, address, port: Number(m[3]), ...(p ? {process: p[1], pid: Number(p[2])} : {})}
}

/** "10.0.0.5/24" from each `ip -o addr show` line (inet and inet6). */
export function parseIpAddrLine(line: string): string | undefined {
  return /\binet6?\s+(\S+\/\d+)/.exec(line)?.[1]
}

/** One client of one export: the line's path, the client as written, its options, where it is. */
export interface ExportEntry {
  file: string
  /** The physical line the client is on (1-based), for a sed fix. */
  line: number
  path: string
  client: string
  options: string[]
}

/**
 * exports(5): `PATH CLIENT(OPTS) CLIENT2(OPTS)…`, # comments, a backslash continues a line, a path may
 * be quoted. A client with no options (or a bare option list, "PATH (opts)": every host) is kept too.
 */
export function parseExports(f: ExportsFile): ExportEntry[] {
  const out: ExportEntry[] = []
  const lines = f.text.split('\n')
  let path: string | undefined
  // "-opts" after the path: default options for the clients that follow on that entry.
  let defaults: string[] = []
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].replace(/#.*$/, '')
    const continues = /\\\s*$/.test(raw)
    const body = raw.replace(/\\\s*$/, '')
    const tokens: string[] = body.match(/"[^"]*"|\S+/g) ?? []
    const first = tokens[0]
    let start = 0
    if (path === undefined && first !== undefined) {
      path = first.replace(/^"|"$/g, '')
      defaults = []
      start = 1
    }
    for (const tok of tokens.slice(start)) {
      if (tok.startsWith('-')) {
        defaults = [...defaults, ...tok.slice(1).split(',').filter(Boolean)]
        continue
      }
      const m = /^([^(]*)(?:\(([^)]*)\))?$/.exec(tok)
      if (!m) continue
      out.push({file: f.file, line: i + 1, path: path!, client: m[1] === '' ? '*' : m[1], options: [...defaults, ...(m[2] === undefined ? [] : m[2].split(',').map((o) => o.trim()).filter(Boolean))]})
    }
    if (!continues) path = undefined
  }
  return out
}

/** What citc's local guard (role local_guard) refuses: new TCP connections to these ports unless they come in on lo. */
export interface LocalGuard {
  /** Guarded port ranges, inclusive. */
  ports: Array<[number, number]>
  /** Ports also accepted from the joined machines' addresses (slurmctld's). */
  joinedPorts: number[]
}

/**
 * The guard as nft lists it: the `iifname != "lo" tcp dport { … } … reject` rule's ports, and the
 * ports of the `saddr { … } tcp dport N accept` rules. Undefined when no refusing rule is there (a
 * table emptied by hand guards nothing).
 */
export function parseLocalGuard(lines: string[]): LocalGuard | undefined {
  const ports: Array<[number, number]> = []
  const joinedPorts: number[] = []
  for (const l of lines) {
    const refuse = /iifname != "lo" tcp dport (\{[^}]*\}|\S+) .*reject/.exec(l)
    if (refuse) {
      for (const part of refuse[1].replace(/[{}]/g, '').split(',')) {
        const m = /^\s*(\d+)(?:-(\d+))?\s*$/.exec(part)
        if (m) ports.push([Number(m[1]), Number(m[2] ?? m[1])])
      }
    }
    const accept = /saddr .* tcp dport (\d+) accept/.exec(l)
    if (accept) joinedPorts.push(Number(accept[1]))
  }
  return ports.length > 0 ? {ports, joinedPorts: [...new Set(joinedPorts)]} : undefined
}

export const guardCovers = (g: LocalGuard, port: number) => g.ports.some(([lo, hi]) => port >= lo && port <= hi)
