// How citc reaches a cluster's Prometheus from where it runs: the `prometheusUrl` of the cluster's
// management contract (cluster.json, monitoring section). A local cluster's management node is this
// machine: its file, its loopback URL. A cloud one's Prometheus listens on the node's loopback only:
// the file is read over SSH as the login user (cluster.json is world-readable) and the same
// connection carries a local port forward to that URL's port — pinned host key, as every connection.
import {managedHere} from '../cluster/management-node.js'
import {sshTargetOf} from '../cluster/management.js'
import {CLUSTER_JSON, readManagementContract, readManagementContractFile, type ManagementContract} from '../cluster/management-contract.js'
import {clusterRegistry} from '../cluster/registry.js'
import {PENDING_HOST, type ClusterRecord} from '../cluster/schema.js'
import {CitcError} from '../errors.js'
import {connectSsh} from '../transport/ssh/index.js'

export interface PrometheusReach {
  cluster: string
  /** Where to send Prometheus's HTTP API, from this machine (no trailing slash). */
  baseUrl: string
  /** For messages: the URL as the management node knows it, and how it is reached. */
  description: string
  /** Close the tunnel and its SSH connection (nothing to do on local clusters). */
  close(): Promise<void>
}

export interface ReachOptions {
  signal?: AbortSignal
  /** cluster.json's path (tests; on clouds the same path on the management node). */
  contractFile?: string
  readyTimeoutMs?: number
}

/** The cluster record of `-c NAME` (or the only cluster). */
export function clusterRecord(dataDir: string, name?: string): ClusterRecord {
  const registry = clusterRegistry(dataDir)
  return registry.get(registry.resolveName(name))
}

/** The monitoring section, or why there is none and what to do. */
export function prometheusUrlOf(contract: ManagementContract, cluster: string): URL {
  if (!contract.monitoring) {
    throw new CitcError('usage', `cluster ${cluster} was created with --no-monitoring: its management node runs no Prometheus (cluster.json has no "monitoring" section)`, {
      hint: `to add monitoring, re-run \`citc create --name ${cluster}\` without --no-monitoring where the cluster was created (its management playbook installs Prometheus); \`citc status -c ${cluster}\` works without it`,
    })
  }
  return new URL(contract.monitoring.prometheusUrl)
}

const trimSlash = (s: string) => s.replace(/\/+$/, '')

export async function reachPrometheus(record: ClusterRecord, o: ReachOptions = {}): Promise<PrometheusReach> {
  const file = o.contractFile ?? CLUSTER_JSON
  if (managedHere(record)) {
    const url = prometheusUrlOf(readManagementContractFile(file), record.name)
    const baseUrl = trimSlash(url.href)
    return {cluster: record.name, baseUrl, description: `${baseUrl} (this machine)`, close: async () => {}}
  }
  if (record.mgmt.host === PENDING_HOST) {
    throw new CitcError('usage', `cluster ${record.name} has no management node yet: its create stopped before Terraform made it`, {
      hint: `continue it with \`citc create --name ${record.name} --resume\``,
    })
  }
  const ssh = await connectSsh({...sshTargetOf(record), readyTimeoutMs: o.readyTimeoutMs ?? 20_000, signal: o.signal})
  try {
    const url = prometheusUrlOf(await readManagementContract(ssh, file), record.name)
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
    const tunnel = await ssh.forwardLocal(url.hostname.replace(/^\[|\]$/g, ''), port)
    const baseUrl = trimSlash(`${url.protocol}//127.0.0.1:${tunnel.port}${url.pathname}`)
    return {
      cluster: record.name,
      baseUrl,
      description: `${trimSlash(url.href)} on ${ssh.description}, through an SSH tunnel`,
      async close() {
        await tunnel.close()
        await ssh.close()
      },
    }
  } catch (error) {
    await ssh.close().catch(() => {})
    throw error
  }
}
