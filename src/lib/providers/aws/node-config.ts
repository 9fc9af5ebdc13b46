// AWS's section of /etc/citc/cluster.json: what the node driver needs to launch compute nodes, from
// templates/terraform/aws/outputs.tf. Launching is fenced by the management node's role (iam.tf):
// only into this subnet and security group, only with the cluster's tags.
import {z} from 'zod'

import {cloudFieldsFromOutputs, cloudNodeConfigFields, outputObject, text, type TerraformOutputValues} from '../cloud-node-config.js'

const schema = z.object({
  ...cloudNodeConfigFields,
  zone: text,
  vpcId: text,
  subnetId: text,
  securityGroupId: text,
  /** The management node's own identity (its instance profile's role): what the node programs run as. */
  nodeRoleArn: text,
  /** The management node's image; compute images are built from the same (by its owner and name). */
  baseImage: z.object({
    id: text,
    os: text,
    owner: text.optional(),
    nameFilter: text.optional(),
    architecture: text.optional(),
  }),
})
export type AwsNodeConfig = z.output<typeof schema>

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
export const awsNodeConfig = {provider: 'aws', schema, fromOutputs} as const
