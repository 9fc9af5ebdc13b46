import {Flags} from '@oclif/core'

import {BaseCommand, waitFlag} from '../lib/base-command.js'
import {PROVIDER_NAMES} from '../lib/providers/registry.js'

export default class Finish extends BaseCommand<typeof Finish> {
  static summary = 'Turn limits.yaml into the cluster’s nodes and partitions (slurm.conf), safely'

  static description = `Reads limits.yaml (which shapes, how many nodes at most), generates the node and partition section of slurm.conf and gres.conf, shows what changes, and applies it: upload, validate with Slurm, back up, rename each file into place, reconfigure or restart slurmctld, verify — and roll back if the controller does not come up. Running nodes that leave the configuration, or whose definition changes, are drained and powered down first.

limits.yaml takes CitC's format as it is ("shape: count", or on Oracle "shape: {AD: count}") or an extended form with "shapes:", "partitions:" and "slurm:" (your own slurm.conf settings).

GPU shapes whose nodes would boot an image without the GPU driver (the cluster's first GPU shape, before \`citc rebuild-image\`) are named in the plan; with --yes, finish refuses them (exit 3, nothing changed) unless --without-gpu-image is given: apply, then run citc rebuild-image.

With --dry-run and --provider, no cluster is needed: the configuration is printed.`

  static examples = [
    {description: 'Preview the configuration for AWS shapes, no cluster needed', command: '<%= config.bin %> finish --dry-run --provider aws --cluster-id demo --limits examples/limits-aws.yaml'},
    {description: 'The same as one JSON document (nodes, partitions, slurmConf)', command: '<%= config.bin %> finish --dry-run --provider aws --cluster-id demo --limits examples/limits-aws.yaml --json'},
    {description: 'Show what would change on a registered cluster', command: '<%= config.bin %> finish -c mycluster --dry-run'},
    {description: 'Apply ./limits.yaml to the only cluster, without asking', command: '<%= config.bin %> finish --yes'},
  ]

  static flags = {
    limits: Flags.string({char: 'l', description: 'limits file', default: 'limits.yaml'}),
    'dry-run': Flags.boolean({description: 'show the configuration (or, on a cluster, the changes) and change nothing', default: false}),
    provider: Flags.option({char: 'p', options: PROVIDER_NAMES, description: 'with --dry-run: preview for this provider without a cluster'} as const)(),
    'cluster-id': Flags.string({description: 'with --provider: the cluster id used in node names', default: 'citc'}),
    'mgmt-shape': Flags.string({description: 'oracle preview: the management node’s shape, subtracted once from the limits'}),
    'mgmt-ad': Flags.integer({description: 'oracle preview: the management node’s availability domain', min: 1}),
    'output-dir': Flags.string({description: 'with --provider: write slurm.conf and gres.conf into this directory instead of printing'}),
    force: Flags.boolean({
      description: 'cancel the jobs of nodes that leave or change in the configuration, and go on when slurmctld is down although nodes leave (default: refuse both)',
      default: false,
    }),
    'without-gpu-image': Flags.boolean({
      description: 'apply with --yes although GPU shapes would boot an image without the GPU driver (then run citc rebuild-image; default: refuse, exit 3)',
      default: false,
    }),
    wait: waitFlag,
  }

  async run() {
    const {runFinish} = await import('../lib/tasks/finish/finish-workflow.js')
    const f = this.flags
    return runFinish(
      this.io(),
      {
        cluster: f.cluster,
        limitsFile: f.limits,
        dryRun: f['dry-run'],
        preview: f.provider ? {provider: f.provider, clusterId: f['cluster-id'], mgmtShape: f['mgmt-shape'], mgmtAd: f['mgmt-ad']} : undefined,
        outputDir: f['output-dir'],
        force: f.force,
        wait: f.wait,
        withoutGpuImage: f['without-gpu-image'],
      },
      this.config.dataDir,
    )
  }
}
