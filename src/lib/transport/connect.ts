// From a cluster record to a Transport: this machine for the local provider, SSH with the pinned
// host key for everything else.
import type {ClusterRecord} from '../cluster/schema.js'
import {localTransport} from './local.js'
import {connectSsh} from './ssh.js'
import type {Transport} from './types.js'

export async function connectCluster(record: ClusterRecord, opts: {signal?: AbortSignal} = {}): Promise<Transport> {
  if (record.provider === 'local') return localTransport()
  return connectSsh({
    host: record.mgmt.host,
    port: record.mgmt.port,
    user: record.mgmt.user,
    privateKey: record.mgmt.keyPath!,
    hostKeyFingerprint: record.mgmt.hostKeyFingerprint!,
    readyTimeoutMs: 20_000,
    signal: opts.signal,
  })
}
