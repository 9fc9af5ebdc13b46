// What every cloud's section of /etc/citc/cluster.json holds (see cluster/management-contract.ts):
// the management node's address on the cluster network and the shared filesystem, both for the
// compute nodes' boot configuration, and how the management node's image was found. All of it comes
// from the Terraform outputs every template has (terraform-io.ts COMMON_OUTPUTS); nothing secret.
// Schemas are built with the zod the contract hands in: the provider modules load no zod (module.ts).
import type {z as Zod} from 'zod'

/** A string that must not be empty. */
export const text = (z: typeof Zod) => z.string().min(1, 'must not be empty')

/** The fields every cloud's section has. */
export function cloudNodeConfigFields(z: typeof Zod) {
  return {
    region: text(z),
    /** slurmctld, slapd and NFS clients of the compute nodes reach the management node here. */
    mgmtPrivateIp: text(z),
    /** What compute nodes mount at sharedDir: host:path, or path alone when host is empty. */
    sharedFs: z.object({
      host: z.string(),
      path: text(z),
      type: text(z),
      mountOptions: text(z),
    }),
  }
}

/** Terraform's outputs as cluster.yaml keeps them (plain values, sensitive ones left out). */
export type TerraformOutputValues = Record<string, unknown>

/** The outputs every cloud template has, in the section's names. */
export function cloudFieldsFromOutputs(o: TerraformOutputValues) {
  return {
    region: o.region,
    mgmtPrivateIp: o.mgmt_private_ip,
    sharedFs: {host: o.shared_fs_host, path: o.shared_fs_path, type: o.shared_fs_type, mountOptions: o.shared_fs_mount_options},
  }
}

/** An output that is an object (base_image): its fields, or none when it is missing or not an object. */
export function outputObject(o: TerraformOutputValues, key: string): Record<string, unknown> {
  const v = o[key]
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
}
