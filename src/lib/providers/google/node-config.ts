// Google Cloud's section of /etc/citc/cluster.json: what the node driver needs to create compute
// nodes, from templates/terraform/google/outputs.tf. The management node's service account may create
// and delete only instances named <cluster>-… (iam.tf).
import {z} from 'zod'

import {cloudFieldsFromOutputs, cloudNodeConfigFields, outputObject, text, type TerraformOutputValues} from '../cloud-node-config.js'

const schema = z.object({
  ...cloudNodeConfigFields,
  project: text,
  zone: text,
  /** Self links. */
  network: text,
  subnetwork: text,
  /** The network tag compute nodes get (the firewall lets cluster traffic in by it). */
  networkTag: text,
  /** The management node's service account (e-mail): what the node programs run as. */
  serviceAccount: text,
  /** The management node's image; compute images are built from the same family. */
  baseImage: z.object({
    selfLink: text,
    os: text,
    project: text.optional(),
    family: text.optional(),
  }),
})
export type GoogleNodeConfig = z.output<typeof schema>

function fromOutputs(o: TerraformOutputValues): unknown {
  const image = outputObject(o, 'base_image')
  return {
    ...cloudFieldsFromOutputs(o),
    project: o.project,
    zone: o.zone,
    network: o.network,
    subnetwork: o.subnetwork,
    networkTag: o.compute_network_tag,
    serviceAccount: o.node_service_account,
    baseImage: {selfLink: image.self_link, os: image.os, project: image.project, family: image.family},
  }
}

/** The provider's section of cluster.json, and how it is made from Terraform's outputs. */
export const googleNodeConfig = {provider: 'google', schema, fromOutputs} as const
