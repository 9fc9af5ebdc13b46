// nodes.json: Prometheus's file_sd list of the compute nodes to scrape (their node_exporter), from
// Slurm's own view: a node is a target while its power is on and it has an address, so powered-down
// nodes are never scraped and no target outlives its node (monitoring-notes, complaint 5). Written by
// every collector cycle and at once by the node programs after they act; Prometheus rereads it on change.
import {join} from 'node:path'

import type {NodeState} from '../slurm/controller.js'
import {featureValue} from '../slurm/nodes.js'
import {writeAtomic} from './write.js'
import {isJoinedMachine, powerOf} from './power.js'

export const NODES_FILE = 'nodes.json'

export interface FileSdGroup {
  targets: string[]
  labels: {node: string; partition: string; shape: string}
}

/**
 * The targets, one group per node, by name. Empty without a port (the provider's images run no
 * node_exporter: local nodes share this machine's kernel). Joined machines are left out: they are the
 * user's own, citc installs no node_exporter on them, and a target that never answers is noise. Pure.
 */
export function fileSdTargets(nodes: readonly NodeState[], port: number | undefined): FileSdGroup[] {
  if (port === undefined) return []
  return nodes
    .filter((n) => powerOf(n) === 'on' && !isJoinedMachine(n) && n.address)
    .map((n) => ({targets: [`${hostPort(n.address!, port)}`], labels: {node: n.name, partition: n.partitions ?? '', shape: featureValue(n.features, 'shape') ?? ''}}))
    .sort((a, b) => (a.labels.node < b.labels.node ? -1 : a.labels.node > b.labels.node ? 1 : 0))
}

/** An IPv6 address goes in brackets (host:port must stay one). */
const hostPort = (address: string, port: number) => (address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`)

/** The file's text: one group per line, so a diff of two versions reads. Pure. */
export function renderFileSd(groups: readonly FileSdGroup[]): string {
  return groups.length === 0 ? '[]\n' : `[\n${groups.map((g) => JSON.stringify(g)).join(',\n')}\n]\n`
}

/** Write <dir>/nodes.json atomically (mode 0644: Prometheus's user reads it); returns the number of targets. */
export function writeNodesFile(dir: string, nodes: readonly NodeState[], port: number | undefined): number {
  const groups = fileSdTargets(nodes, port)
  writeAtomic(join(dir, NODES_FILE), renderFileSd(groups))
  return groups.length
}
