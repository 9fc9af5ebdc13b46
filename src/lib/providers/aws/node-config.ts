// AWS's section of /etc/citc/cluster.json: what the node driver needs to launch compute nodes, from
// templates/terraform/aws/outputs.tf. Launching is fenced by the management node's role (iam.tf):
// only into this subnet and security group, only with the cluster's tags.
import type {z as Zod} from 'zod'

import {cloudFieldsFromOutputs, cloudNodeConfigFields, outputObject, text, type TerraformOutputValues} from '../cloud-node-config.js'
import type {NodeConfigSection} from '../module.js'

function schema(z: typeof Zod) {
  return z.object({
    ...cloudNodeConfigFields(z),
    zone: text(z),
    vpcId: text(z),
    subnetId: text(z),
    securityGroupId: text(z),
    /** The management node's own identity (its instance profile's role): what the node programs run as. */
    nodeRoleArn: text(z),
    /** The management node's image; compute images are built from the same (by its owner and name). */
    baseImage: z.object({
      id: text(z),
      os: text(z),
      owner: text(z).optional(),
      nameFilter: text(z).optional(),
      architecture: text(z).optional(),
    }),
  })
}
export type AwsNodeConfig = Zod.output<ReturnType<typeof schema>>

function fromOutputs(o: TerraformOutputValues): unknown {
  const image = outputObject(o, 'base_image')
  return {
    ...cloudFieldsFromOutputs(o),
    zone: o.zone,
    vpcId: o.vpc_id,
    subnetId: o.subnet_id,
    securityGroupId: o.compute_security_group_id,
    nodeRoleArn: o.node_role_arn,
    baseImage: {id: image.id, os: image.os, owner: image.owner, nameFilter: image.name_filter, architecture: image.architecture},
  }
}

/** The provider's section of cluster.json, and how it is made from Terraform's outputs. */
export const awsNodeConfig = {schema, fromOutputs} satisfies Required<NodeConfigSection<AwsNodeConfig>>
