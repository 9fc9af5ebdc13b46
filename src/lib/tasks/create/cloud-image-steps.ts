// Cloud create's compute-node image: the first one, or a new one when what goes into it changed
// (playbooks, template, the cluster's script, the Slurm version). Built on the management node over
// the root SSH transport with the provider's image builder, through the steps local create runs
// (createImageSteps: journaled "image", so --resume skips it once an image is current, and a plain
// re-run with nothing changed builds nothing). After finish: the build machine joins the cluster's
// network, which Terraform made, and compute.yml reads the variables management.yml got.
import {catalogueFor} from '../../providers/catalogues.js'
import type {Arch} from '../../shapes/types.js'
import type {ImageContext} from '../rebuild-image/image-steps.js'
import {createImageContext} from '../rebuild-image/rebuild-image.js'
import type {Workflow} from '../workflow.js'
import {type CloudCreateContext, connected} from './cloud-create-context.js'

/** The management node's architecture (its shape's), which its OS image and so the first compute image share. */
export function managementArch(ctx: Pick<CloudCreateContext, 'provider' | 'record'>): Arch {
  const shape = ctx.record().cloud?.mgmtShape
  return (shape && catalogueFor(ctx.provider).get(shape)?.arch) || 'x86_64'
}

/** The image steps' context on the management node's root, for its architecture (Oracle builds x86_64 only: an arm64 management node is exit 2 here). */
export function cloudImageContext(wf: Workflow, ctx: CloudCreateContext): Promise<ImageContext> {
  return createImageContext(wf, {record: ctx.record(), management: connected(ctx.node).root, clusterDir: ctx.paths.dir, arch: managementArch(ctx), nodeRoot: ctx.opts.standIn?.imageRoot})
}
