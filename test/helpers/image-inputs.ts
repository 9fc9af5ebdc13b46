// inputsStep (tasks/rebuild-image/image-steps.ts) run against a management node double holding a
// slurm.conf: the variables compute.yml would get. For the tests of what reaches an image build.
import type {ClusterRecord} from '../../src/lib/cluster/schema.js'
import type {ImageBuilder} from '../../src/lib/providers/image-types.js'
import {type ImageContext, inputsStep} from '../../src/lib/tasks/rebuild-image/image-steps.js'
import {MemoryTransport} from '../doubles/memory-transport.js'

export const IMAGE_CONF = '/mnt/shared/etc/slurm/slurm.conf'

/** The build's variables for this slurm.conf (none: a cluster before its first finish). */
export async function imageBuildVars(conf: string | undefined, opts: {provider?: string; gpuDriverInImage?: boolean} = {}): Promise<Record<string, unknown>> {
  const provider = opts.provider ?? 'aws'
  const node = new MemoryTransport({files: conf === undefined ? {} : {[IMAGE_CONF]: conf}})
  node.on(['dpkg-query', '-W', '-f=${Version}', 'slurmctld'], {stdout: '22.05.8-4+deb12u3'})
  const builder = {gpuDriverInImage: opts.gpuDriverInImage ?? true, playbookVars: async () => ({provider, cluster_name: 'lab'})} as unknown as ImageBuilder
  const ctx = {
    record: {name: 'lab', provider, slurm: {confPath: IMAGE_CONF}} as unknown as ClusterRecord,
    management: node,
    builder,
    arch: 'x86_64',
    keep: 3,
  } as unknown as ImageContext
  await inputsStep<ImageContext>().run(ctx, {output: ''} as never)
  return ctx.playbookVars!
}
