// From a cluster record to a Transport on its management node, as its provider module says it is
// reached (ManagementNodeKind): this machine, or over SSH with the pinned host key (and sudo where the
// login user is not root: cloud images) — management.ts. Here in cluster/, above the provider modules
// it asks, so that transport/ knows nothing of clusters or providers.
import {providerModule} from '../providers/registry.js'
import {localTransport} from '../transport/local.js'
import type {Transport} from '../transport/types.js'
import type {ManagementOptions} from './management.js'
import type {ClusterRecord} from './schema.js'

/** The cluster's management node is the machine citc runs on (nothing to reach over SSH). */
export function managedHere(record: {provider: string}): boolean {
  return providerModule(record.provider).managementNode === 'this-machine'
}

export async function connectManagement(record: ClusterRecord, opts: ManagementOptions = {}): Promise<Transport> {
  if (managedHere(record)) return localTransport()
  // Loaded only here: ssh2 and the rest of the SSH side cost a local cluster's commands (status,
  // nodes, finish) ~60 ms of CPU time at start-up for nothing.
  const {connectOverSsh} = await import('./management.js')
  return connectOverSsh(record, opts)
}
