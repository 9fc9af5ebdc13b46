// cluster.json for the node programs' other readers (the watchdog, local destroy, tests), synchronously
// and checked on every read. The node programs themselves read it through node-programs.ts's
// configOrLog (checked once per content, without zod on their start).
import {CLUSTER_JSON} from '../../cluster/cluster-json.js'
import {readManagementContractFile} from '../../cluster/management-contract.js'
import type {StandIn} from '../../stand-in.js'
import type {NodeHostConfig} from './node-programs.js'

/** The node programs' cluster.json: /etc/citc/cluster.json, or a stand-in's (stand-in.ts). */
export function readNodeHostConfig(standIn?: StandIn): NodeHostConfig {
  return readManagementContractFile(standIn?.clusterJson ?? CLUSTER_JSON)
}
