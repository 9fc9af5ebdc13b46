// Cloud create's compute-node image: the first one, or a new one when what goes into it changed
// (playbooks, template, the cluster's script, the Slurm version). Built on the management node over
// the root SSH transport with the provider's image builder, through the steps local create runs
// (createImageSteps: journaled "image", so --resume skips it once an image is current, and a plain
// re-run with nothing changed builds nothing). After finish: the build machine joins the cluster's
// network, which Terraform made, and compute.yml reads the variables management.yml got.
import {CitcError} from '../../errors.js'
import {providerModule} from '../../providers/registry.js'
import {catalogueFor} from '../../shapes/index.js'
import type {Arch} from '../../shapes/types.js'
import {storedScript} from '../rebuild-image/image-script.js'
import type {ImageContext} from '../rebuild-image/image-steps.js'
import {archFor, DEFAULT_KEEP} from '../rebuild-image/rebuild-image.js'
import type {Workflow} from '../workflow.js'
import {type CloudCreateContext, connected} from './cloud-create-context.js'

/** The management node's architecture (its shape's), which its OS image and so the first compute image share. */
export function managementArch(ctx: Pick<CloudCreateContext, 'provider' | 'record'>): Arch {
  const shape = ctx.record().cloud?.mgmtShape
  return (shape && catalogueFor(ctx.provider).get(shape)?.arch) || 'x86_64'
}

/** The image steps' context: the management node's root, the provider's builder, the cluster's stored script. */
export async function cloudImageContext(wf: Workflow, ctx: CloudCreateContext): Promise<ImageContext> {
  const record = ctx.record()
  const make = await providerModule(record.provider).imageBuilder()
  if (!make) throw new CitcError('usage', `citc cannot build images for provider ${record.provider} yet`)
  const management = connected(ctx.node).root
  const builder = make({record, management, signal: wf.signal, logFile: wf.logFile('create'), nodeRoot: ctx.opts.standIn?.imageRoot})
  return {
    ...wf.context,
    record,
    management,
    builder,
    // Oracle builds x86_64 only: a cluster whose management node is arm64 is told so (exit 2) here.
    arch: archFor(record, managementArch(ctx), builder.arches),
    script: storedScript(ctx.paths.dir),
    keep: DEFAULT_KEEP,
  }
}
