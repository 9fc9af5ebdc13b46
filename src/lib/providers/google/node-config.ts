// Google Cloud's section of /etc/citc/cluster.json: what the node driver needs to create compute
// nodes, from templates/terraform/google/outputs.tf. The management node's service account may create
// and delete only instances named <cluster>-… (iam.tf).
import type {z as Zod} from 'zod'

import {cloudFieldsFromOutputs, cloudNodeConfigFields, outputObject, text, type TerraformOutputValues} from '../cloud-node-config.js'
import type {NodeConfigSection} from '../module.js'

function schema(z: typeof Zod) {
  return z.object({
    ...cloudNodeConfigFields(z),
    project: text(z),
    zone: text(z),
    /** Self links. */
    network: text(z),
    subnetwork: text(z),
    /** The network tag compute nodes get (the firewall lets cluster traffic in by it). */
    networkTag: text(z),
    /** The management node's service account (e-mail): what the node programs run as. */
    serviceAccount: text(z),
    /** The management node's image; compute images are built from the same family. */
    baseImage: z.object({
      selfLink: text(z),
      os: text(z),
      project: text(z).optional(),
      family: text(z).optional(),
    }),
  })
}
export type GoogleNodeConfig = Zod.output<ReturnType<typeof schema>>

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
export const googleNodeConfig = {schema, fromOutputs} satisfies Required<NodeConfigSection<GoogleNodeConfig>>
