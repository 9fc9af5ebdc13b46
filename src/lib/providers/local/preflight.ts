// Before the local provider turns this machine into a management node: refuse clearly what would
// fail later or break something that is not ours.
import {existsSync, readFileSync} from 'node:fs'
import {connect} from 'node:net'

import {CitcError} from '../../errors.js'
import {MONITORING_PORTS} from '../monitoring-setting.js'

export interface PreflightFacts {
  uid: number
  osRelease: string
  aptGet: boolean
  /** The cluster citc's management playbook set up here, if any (/etc/citc/cluster.json). */
  citcCluster?: string
  /** Slurm's ports already taken on this machine. */
  busyPorts: number[]
  /** The monitoring ports (Prometheus, node-exporter on loopback) already taken on this machine. */
  busyMonitoringPorts: number[]
}

const SLURM_PORTS = [6817, 6819]

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({host: '127.0.0.1', port})
    const done = (open: boolean) => {
      s.destroy()
      resolve(open)
    }
    s.setTimeout(1000, () => done(false))
    s.once('connect', () => done(true))
    s.once('error', () => done(false))
  })
}

/**
 * The facts of this machine. `whoseMachine` names the citc cluster whose management node this machine
 * is, if any: the workflow hands in the reader of its cluster.json (cluster/management-contract.ts
 * clusterOnThisMachine), which sits above the provider modules.
 */
export async function gatherFacts(whoseMachine: () => string | undefined): Promise<PreflightFacts> {
  const citcCluster = whoseMachine()
  const busy: number[] = []
  for (const p of SLURM_PORTS) if (await portOpen(p)) busy.push(p)
  const busyMonitoring: number[] = []
  for (const p of Object.values(MONITORING_PORTS)) if (await portOpen(p)) busyMonitoring.push(p)
  return {
    uid: process.getuid?.() ?? -1,
    osRelease: existsSync('/etc/os-release') ? readFileSync('/etc/os-release', 'utf8') : '',
    aptGet: existsSync('/usr/bin/apt-get'),
    citcCluster,
    busyPorts: busy,
    busyMonitoringPorts: busyMonitoring,
  }
}

/** Pure: the refusals, given the facts. Returns notes to show when all is well. */
export function checkPreflight(f: PreflightFacts, cluster: string, force: boolean, monitoring = true): string[] {
  if (f.uid !== 0) {
    throw new CitcError('invalidInput', 'the local provider makes this machine a Slurm management node, which needs root', {
      hint: 'run it as root (e.g. sudo citc create --provider local)',
    })
  }
  const id = /^ID=(.*)$/m.exec(f.osRelease)?.[1]?.replace(/"/g, '')
  const like = /^ID_LIKE=(.*)$/m.exec(f.osRelease)?.[1] ?? ''
  if (!f.aptGet || !(id === 'debian' || id === 'ubuntu' || /debian/.test(like))) {
    throw new CitcError('invalidInput', `the local provider needs an apt-based system (Debian 12 or Ubuntu 24.04); this is ${id ?? 'unknown'}`)
  }
  if (f.citcCluster && f.citcCluster !== cluster) {
    throw new CitcError('invalidInput', `this machine is already the management node of citc cluster "${f.citcCluster}"`, {
      hint: `one local cluster per machine: citc destroy ${f.citcCluster} first`,
    })
  }
  if (f.busyPorts.length > 0 && f.citcCluster !== cluster && !force) {
    throw new CitcError('invalidInput', `a Slurm controller or slurmdbd that citc did not make is running here (port ${f.busyPorts.join(', ')} is taken)`, {
      hint: 'stop it first, or pass --force to let citc take over this machine’s Slurm configuration',
    })
  }
  // Another program's Prometheus or node-exporter: citc's could not listen (and --force cannot take it over).
  if (monitoring && f.busyMonitoringPorts.length > 0 && f.citcCluster !== cluster) {
    throw new CitcError('invalidInput', `port ${f.busyMonitoringPorts.join(' and ')} on this machine is taken (another Prometheus or node-exporter?): citc's monitoring listens on 127.0.0.1:${MONITORING_PORTS.prometheus} and :${MONITORING_PORTS.nodeExporter}`, {
      hint: 'stop what listens there, or create the cluster with --no-monitoring',
    })
  }
  const notes = []
  const version = /^VERSION_ID="?([^"\n]*)/m.exec(f.osRelease)?.[1]
  if (!(id === 'debian' && version === '12')) {
    notes.push(`note: citc's tests run on Debian 12; this is ${id} ${version ?? ''}`)
  }
  return notes
}
