// Whether a machine may join, from what the probe found (probe.ts): every problem at once, each with
// what to do. Pure: the caller gathers the facts (the machine's, the management node's) and changes
// nothing until this returns no problem.
import {STATIC_NODE_NAME} from '../../config/limits-static.js'
import {SRUN_PORT_RANGE} from '../../slurm/render.js'
import type {MachineFacts, Reach} from './probe.js'

/** Slurm's major releases in order: slurmd may be up to two older than slurmctld, never newer. */
const RELEASES = ['17.02', '17.11', '18.08', '19.05', '20.02', '20.11', '21.08', '22.05', '23.02', '23.11', '24.05', '24.11', '25.05', '25.11']

/** Ports joined machines use (Slurm's defaults: hybrid-notes §2); srun's first port stands for its range (slurm.conf's SrunPortRange). */
export const PORTS = {slurmctld: 6817, slurmd: 6818, ldap: 636, nfs: 2049, srunFirst: Number(SRUN_PORT_RANGE.split('-')[0])} as const

/** Clocks further apart than this are refused: munge credentials live 300 s, and skew eats that window. */
export const MAX_SKEW_S = 60

/** RealMemory is this share of what the machine has: the OS and daemons keep the rest. */
export const MEMORY_SHARE = 0.95

export interface ControllerFacts {
  /** slurmctld's upstream version, e.g. "22.05.8". */
  version: string
  /** Its Debian package version, e.g. "22.05.8-4+deb12u3", when installed from a package. */
  packageVersion?: string
  /** The management node's clock at the middle of the probe, epoch seconds. */
  now: number
}

export interface PreflightInput {
  host: string
  name: string
  cluster: string
  facts: MachineFacts
  controller: ControllerFacts
  /** Every node name slurm.conf has now (elastic and joined). */
  nodeNames: ReadonlySet<string>
  /** Joined before under this name at this address: a re-run, not a clash. */
  rejoin: boolean
  /** Directory users: login → uid. */
  directory: ReadonlyMap<string, number>
  adopt: boolean
  shared: 'nfs' | 'none'
  controllerAddr: string
  /** The management node's TCP connect to the machine's slurmd port. */
  slurmdReach: Reach
}

export interface Problem {
  host: string
  message: string
  fix: string
}

/** The slurmd package version citc installs: the controller's own on Debian 12, else the distribution's. */
export function slurmdPackageFor(facts: MachineFacts, controller: Pick<ControllerFacts, 'packageVersion'>): string {
  return facts.osId === 'debian' && facts.osVersion === '12' && controller.packageVersion ? controller.packageVersion : ''
}

/** A machine's Slurm node name from its host name: lower case, Slurm-safe. */
export function defaultNodeName(hostname: string): string {
  return hostname.toLowerCase().replace(/[^a-z0-9-]/g, '-').replace(/^[^a-z]+/, '').slice(0, 40)
}

/** Files of /etc/slurm that mean a Slurm the machine already runs (the packages' own plugstack.conf does not). */
const ownConfig = (files: string[]) => files.filter((f) => !f.startsWith('plugstack.conf'))

const release = (version: string) => /^(\d+\.\d+)/.exec(version)?.[1] ?? version

export function preflight(i: PreflightInput): Problem[] {
  const f = i.facts
  const problems: Problem[] = []
  const add = (message: string, fix: string) => problems.push({host: i.host, message, fix})

  if (!['debian', 'ubuntu'].includes(f.osId)) {
    add(`${f.osName} is not supported: citc installs Slurm with apt`, 'join a Debian 12 machine (or Debian 11 / Ubuntu 22.04, whose Slurm is older but compatible)')
  }
  if (!['x86_64', 'aarch64'].includes(f.arch)) add(`architecture ${f.arch} is not supported`, 'join an x86_64 or aarch64 machine')
  if (!f.python3) add('python3 is missing (Ansible needs it on the machine)', `install it on ${i.host}: apt-get install python3`)
  if (f.uid !== 0 && f.sudo === false) add('the SSH user is not root and `sudo -n` asks for a password', 'log in as root (--user root), or give the user passwordless sudo')

  if (!STATIC_NODE_NAME.test(i.name)) {
    add(`"${i.name}" is not a usable Slurm node name`, 'pass --name with a lower-case letter first, then a-z, 0-9 or "-" (at most 40)')
  } else if (!i.rejoin && i.nodeNames.has(i.name)) {
    add(`the cluster already has a node called ${i.name}`, 'pass --name with another name')
  } else if (i.name.startsWith(`${i.cluster}-`)) {
    add(`"${i.name}" looks like one of the cluster's elastic nodes (${i.cluster}-…)`, 'pass --name with a name that does not start with the cluster name')
  }

  // What the machine runs already: only citc's own earlier join of this very node is not a clash.
  const ours = f.joinedMarker?.cluster === i.cluster && f.joinedMarker.name === i.name
  if (f.joinedMarker && !ours) {
    add(`the machine was joined to cluster ${f.joinedMarker.cluster} as ${f.joinedMarker.name}`, `remove it there first: citc node remove ${f.joinedMarker.name} -c ${f.joinedMarker.cluster}`)
  } else if (!ours && !i.adopt) {
    const found = [
      ...(f.slurmdRunning ? ['a running slurmd'] : []),
      ...(f.mungedRunning ? ['a running munged'] : []),
      ...(ownConfig(f.etcSlurm).length > 0 ? [`/etc/slurm (${ownConfig(f.etcSlurm).join(', ')})`] : []),
    ]
    if (found.length > 0) add(`the machine already has ${found.join(', ')}`, 'pass --adopt to take it over (citc keeps a copy of its configuration as /etc/citc-*.orig), or remove it first')
  }

  // Versions: slurmdbd ≥ slurmctld ≥ slurmd, at most two releases apart.
  const ctl = RELEASES.indexOf(release(i.controller.version))
  const debian12 = f.osId === 'debian' && f.osVersion === '12'
  const pinned = slurmdPackageFor(f, i.controller)
  const installed = f.slurmdVersion
  const candidate = installed ?? (debian12 ? undefined : f.aptVersions[0]?.replace(/^\d+:/, '').replace(/-.*$/, ''))
  if (candidate) {
    const node = RELEASES.indexOf(release(candidate))
    if (ctl >= 0 && node > ctl) {
      add(`slurmd ${candidate} is newer than the cluster's slurmctld ${i.controller.version}: it could not register`, installed ? 'remove that slurmd (or join another machine): a slurmd may be older than slurmctld, never newer' : `this OS ships a newer Slurm; join a Debian 12 machine (slurmd ${i.controller.version})`)
    } else if (ctl >= 0 && node >= 0 && node < ctl - 2) {
      add(`slurmd ${candidate} is more than two releases older than slurmctld ${i.controller.version}`, 'upgrade the machine (Debian 12 gets the controller\'s exact version)')
    } else if (ctl < 0 || node < 0) {
      add(`cannot compare slurmd ${candidate} with slurmctld ${i.controller.version}`, 'join a machine with Slurm 20.11 to 22.05 (Debian 11, Ubuntu 22.04 or Debian 12)')
    }
  } else if (debian12 && pinned && !f.aptVersions.includes(pinned)) {
    add(`apt on the machine cannot install slurmd ${pinned}, the controller's version (it offers ${f.aptVersions.join(', ') || 'none'})`, 'enable Debian 12\'s bookworm and bookworm-updates (or security) sources on the machine, run apt-get update, and try again')
  } else if (!debian12 && f.aptVersions.length === 0) {
    add('apt on the machine offers no slurmd package', 'enable the distribution\'s main/universe sources and run apt-get update')
  }
  if (installed && debian12 && pinned && f.slurmdPackage && f.slurmdPackage !== pinned && !ours && !i.adopt) {
    add(`slurmd ${f.slurmdPackage} is installed, not the controller's ${pinned}`, 'pass --adopt: citc then installs and holds the controller\'s version')
  }

  const skew = Math.abs(f.now - i.controller.now)
  if (skew > MAX_SKEW_S) {
    add(`the machine's clock is ${Math.round(skew)} s away from the management node's (munge refuses credentials beyond its window)`, 'synchronise both clocks (e.g. systemd-timesyncd or chrony) and try again')
  }

  const taken = [...f.passwd].filter(([name, uid]) => {
    const dirUid = i.directory.get(name)
    if (dirUid !== undefined) return dirUid !== uid
    return [...i.directory.values()].includes(uid)
  })
  if (taken.length > 0) {
    const show = taken.map(([name, uid]) => `${name} (uid ${uid})`).join(', ')
    add(`local accounts clash with the cluster's directory users: ${show}`, 'remove or renumber those local accounts (their files would belong to directory users on the cluster)')
  }

  const hardware = f.hardware
  if (hardware.cpus < 1 || hardware.memMiB < 256) add(`could not read the machine's CPUs and memory (${hardware.cpus} CPUs, ${hardware.memMiB} MiB)`, 'check that lscpu and /proc/meminfo work on the machine')

  // Reachability, both ways: a timeout is a firewall dropping the packets; a refusal means the path is open.
  const blocked = (r: Reach | undefined) => r !== 'open' && r !== 'refused'
  const toController: [number, string][] = [
    [PORTS.slurmctld, 'slurmctld'],
    [PORTS.ldap, 'the directory (LDAP over TLS)'],
    ...(i.shared === 'nfs' ? ([[PORTS.nfs, 'the shared filesystem (NFS)']] as [number, string][]) : []),
    [PORTS.srunFirst, `srun (ports ${SRUN_PORT_RANGE})`],
  ]
  for (const [port, what] of toController) {
    const r = f.reach.get(port)
    if (blocked(r)) {
      const range = port === PORTS.srunFirst ? SRUN_PORT_RANGE : String(port)
      add(`the machine cannot reach ${what} on ${i.controllerAddr}:${port} (${r ?? 'not tried'})`, `allow TCP from ${i.host} to ${i.controllerAddr} port ${range} on the management node's firewall (citc never changes firewall rules of yours)`)
    }
  }
  if (blocked(i.slurmdReach)) {
    add(`the management node cannot reach slurmd's port ${i.host}:${PORTS.slurmd} (${i.slurmdReach})`, `allow TCP from ${i.controllerAddr} to ${i.host} port ${PORTS.slurmd} on the machine's firewall (citc never changes firewall rules of yours)`)
  }
  return problems
}

/** The node's slurm.conf hardware: `slurmd -C` when slurmd is there, else lscpu; memory at 95 %. */
export function nodeHardware(f: MachineFacts): {sockets: number; coresPerSocket: number; threadsPerCore: number; realMemory: number} {
  const c = f.slurmdHardware ?? ''
  const get = (k: string) => Number(new RegExp(`\\b${k}=(\\d+)`).exec(c)?.[1] ?? Number.NaN)
  if (Number.isFinite(get('SocketsPerBoard')) && Number.isFinite(get('RealMemory'))) {
    return {sockets: get('SocketsPerBoard') * (get('Boards') || 1), coresPerSocket: get('CoresPerSocket'), threadsPerCore: get('ThreadsPerCore'), realMemory: Math.floor(get('RealMemory') * MEMORY_SHARE)}
  }
  const h = f.hardware
  return {sockets: h.sockets, coresPerSocket: h.coresPerSocket, threadsPerCore: h.threadsPerCore, realMemory: Math.floor(h.memMiB * MEMORY_SHARE)}
}
