// Oracle Cloud's section of /etc/citc/cluster.json: what the node driver needs to launch compute
// nodes, from templates/terraform/oracle/outputs.tf. The management node acts as an instance
// principal (its dynamic group, iam.tf), limited to the compartment, not to the cluster: the driver
// must check the cluster tag itself before terminating anything.
import type {z as Zod} from 'zod'

import {cloudFieldsFromOutputs, cloudNodeConfigFields, outputObject, text, type TerraformOutputValues} from '../cloud-node-config.js'
import type {NodeConfigSection} from '../module.js'

function schema(z: typeof Zod) {
  return z.object({
    ...cloudNodeConfigFields(z),
    compartmentId: text(z),
    /** The availability domain's name, and its number (1-3) as limits.yaml and the node features say it. */
    availabilityDomain: text(z),
    adNumber: z.number().int().min(1).max(3),
    vcnId: text(z),
    subnetId: text(z),
    /** Host names in the subnet resolve as <hostname_label>.<dnsDomain>. */
    dnsDomain: text(z),
    /** The management node's image; compute images are built from the same OS and version. */
    baseImage: z.object({
      id: text(z),
      os: text(z),
      operatingSystem: text(z).optional(),
      operatingSystemVersion: text(z).optional(),
    }),
  })
}
export type OracleNodeConfig = Zod.output<ReturnType<typeof schema>>

function fromOutputs(o: TerraformOutputValues): unknown {
  const image = outputObject(o, 'base_image')
  return {
    ...cloudFieldsFromOutputs(o),
    compartmentId: o.compartment_id,
    availabilityDomain: o.availability_domain,
    adNumber: o.ad_number,
    vcnId: o.vcn_id,
    subnetId: o.subnet_id,
    dnsDomain: o.dns_domain,
    baseImage: {
      id: image.id,
      os: image.os,
      operatingSystem: image.operating_system,
      operatingSystemVersion: image.operating_system_version,
    },
  }
}

/** The provider's section of cluster.json, and how it is made from Terraform's outputs. */
export const oracleNodeConfig = {schema, fromOutputs} satisfies Required<NodeConfigSection<OracleNodeConfig>>
