// From a cluster record to a Transport that acts as root on the management node: this machine for
// the local provider, SSH with the pinned host key (and sudo where the login user is not root) for
// everything else. finish, add-user and status all need root there.
import type {Transport} from '../transport/types.js'
import {connectManagement} from './management.js'
import type {ClusterRecord} from './schema.js'

export function connectCluster(record: ClusterRecord, opts: {signal?: AbortSignal} = {}): Promise<Transport> {
  return connectManagement(record, {...opts, asRoot: true})
}
