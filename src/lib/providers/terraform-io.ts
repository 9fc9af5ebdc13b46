// The Terraform variables and outputs every provider's templates share (each provider adds its own).
// A module of its own so the provider specs can spread them without importing cloud.ts (a cycle).

/** Outputs every provider has (create checks they are all there; cluster.yaml keeps them). */
export const COMMON_OUTPUTS = [
  'cluster_id',
  'mgmt_public_ip',
  'mgmt_private_ip',
  'mgmt_user',
  'mgmt_hostname',
  'mgmt_shape',
  'region',
  'base_image',
  'shared_fs_host',
  'shared_fs_path',
  'shared_fs_type',
  'shared_fs_mount_options',
] as const

/** Where a provider mounts the shared filesystem differently on the management node (AWS: EFS with
 *  Amazon's mount helper and the node's IAM role, the one client its file system policy lets be root).
 *  The filesystem role uses them instead of shared_fs_* when a provider outputs them. */
export const MGMT_SHARED_FS_OUTPUTS = ['mgmt_shared_fs_source', 'mgmt_shared_fs_type', 'mgmt_shared_fs_mount_options'] as const

/** Variables every provider declares and citc always writes. */
export const COMMON_VARIABLES = [
  'cluster_id',
  'region',
  'mgmt_shape',
  'ssh_public_key',
  'ssh_host_key',
  'ssh_host_key_public',
  'image_os',
  'ssh_cidr',
] as const
