// The variables a cloud cluster's playbooks get on its management node: management.yml at create
// (tasks/create/cloud-management-node-steps.ts) and compute.yml when an image is built there
// (providers/cloud-image-builder.ts) — one tree, so a compute image is configured with exactly what the
// management node was (group_vars/all.yml documents the common ones).
import type {ClusterView} from './cluster-view.js'
import {monitoringOn} from './monitoring-setting.js'
import {nodeDriverVars} from './node-driver-vars.js'
import {MGMT_SHARED_FS_OUTPUTS} from './terraform-io.js'

export function cloudPlaybookVars(record: ClusterView): Record<string, unknown> {
  const outputs = record.terraform?.outputs ?? {}
  return {
    provider: record.provider,
    cluster_name: record.name,
    citc_bin: record.cloud?.citcBin,
    citc_node_bin: record.cloud?.nodeBin,
    mgmt_hostname: record.mgmt.hostname ?? 'mgmt',
    // The cluster network's side of the management node: where slapd listens for the compute nodes.
    mgmt_private_ip: outputs.mgmt_private_ip,
    // The filesystem role mounts it at /mnt/shared (and records it in /etc/fstab).
    shared_fs_host: outputs.shared_fs_host,
    shared_fs_path: outputs.shared_fs_path,
    shared_fs_type: outputs.shared_fs_type,
    shared_fs_mount_options: outputs.shared_fs_mount_options,
    // …or, where the provider says so (AWS), the management node's own way to mount it (absent: the above).
    ...Object.fromEntries(MGMT_SHARED_FS_OUTPUTS.filter((k) => outputs[k] !== undefined).map((k) => [k, outputs[k]])),
    // The provider's section of /etc/citc/cluster.json: what its node driver needs (subnet, image, zone…).
    citc_node_driver: nodeDriverVars(record.provider, outputs, record.name),
    citc_monitoring: monitoringOn(record),
  }
}
