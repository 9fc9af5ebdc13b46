// Whether a cluster has monitoring (issue #21): `citc create --no-monitoring` records
// `settings.monitoring: off` in cluster.yaml; absent means on (clusters made before #21 get it on their
// next create run). The management playbook takes it as citc_monitoring. Fixed once the cluster is made.
export const MONITORING_OFF = 'off'

/** The loopback ports of the management node's Prometheus and node-exporter (group_vars/all.yml citc_prometheus_port and citc_node_exporter_port say the same). */
export const MONITORING_PORTS = {prometheus: 9090, nodeExporter: 9100} as const

export function monitoringOn(record: {settings?: Record<string, string | number>}): boolean {
  return record.settings?.monitoring !== MONITORING_OFF
}

/** What a new cluster's record keeps of create's --monitoring/--no-monitoring (nothing for the default, on). */
export const monitoringSettings = (monitoring: boolean | undefined): {monitoring?: string} => (monitoring === false ? {monitoring: MONITORING_OFF} : {})
