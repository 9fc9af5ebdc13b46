import {Args, Flags} from '@oclif/core'

import {BaseCommand, waitFlag} from '../lib/base-command.js'

export default class RebuildImage extends BaseCommand<typeof RebuildImage> {
  static summary = 'Build a new compute-node image and make it the one new nodes start from'

  static description = `Packer runs on the management node (this machine for the local provider) with citc's template
(templates/packer/) and the compute playbook (playbooks/compute.yml): slurmd at exactly the controller's
Slurm version, munge, users from the cluster's directory, the shared filesystem, and /etc/citc/image.json.
The image is named citc-slurm-compute-<cluster>-v<YYYYMMDDhhmmss> (UTC). Packer's and Ansible's full
output is in the cluster's logs/.

--script FILE runs FILE as root inside the image, last (CitC's compute_image_extra.sh). It is kept with
the cluster and runs again in every later build until replaced, or removed with --script none.

New nodes start from the new image; nodes running now keep theirs until they power down. Images beyond
--keep are deleted, never the current one nor one a running node uses (those are named, with --json in
"spared"; a later build deletes them once neither holds). A failed or interrupted build
changes nothing: the current image stays current and the partial output is removed (exit 4 names the
failing step and shows its last lines; Ctrl-C exits 130).

--list shows every image, with the GPU driver it carries (GPU DRIVER: "580", "535 (Debian 12)", none, or ?
when built before citc recorded it; --json: gpuDriver); --rollback makes the previous image (or the
VERSION given) current again.`

  static examples = [
    '<%= config.bin %> rebuild-image',
    {description: 'Install extra software on every node', command: '<%= config.bin %> rebuild-image --script compute_image_extra.sh --yes'},
    {description: 'Stop running the stored script', command: '<%= config.bin %> rebuild-image --script none'},
    {description: 'Which images exist, which one is current, how many nodes run each', command: '<%= config.bin %> rebuild-image --list --json'},
    {description: 'Back to the image before the current one', command: '<%= config.bin %> rebuild-image --rollback'},
    {description: 'Back to a named version', command: '<%= config.bin %> rebuild-image --rollback 20261123134502'},
  ]

  static args = {
    version: Args.string({description: 'with --rollback: the version to make current (default: the one before the current)'}),
  }

  static flags = {
    script: Flags.string({description: 'customisation script run as root inside the image (kept for later builds); "none" removes it'}),
    list: Flags.boolean({default: false, description: 'list the images: version, date, size, architecture, GPU driver, current, nodes'}),
    rollback: Flags.boolean({default: false, description: 'make the previous image (or VERSION) current again'}),
    keep: Flags.integer({default: 3, min: 1, description: 'images to keep (older ones are deleted, never the current one nor one a node runs)'}),
    arch: Flags.string({options: ['x86_64', 'arm64'], description: 'architecture to build (default: the only one the provider builds, else x86_64; local: this machine’s; oracle: x86_64 only)'}),
    wait: waitFlag,
    // Tests only: a stand-in management node's imageRoot (its images.json and build files). docs/stand-ins.md, src/lib/stand-in.ts.
    'stand-in': Flags.string({hidden: true, description: 'a stand-in file (tests): clouds: its managementNode.imageRoot instead of the management node\'s /'}),
  }

  async run() {
    const {listImages, rebuildImage, rollbackImage} = await import('../lib/tasks/rebuild-image/rebuild-image.js')
    const {usageError} = await import('../lib/errors.js')
    const f = this.flags
    const {readStandInFile} = await import('../lib/stand-in.js')
    const nodeRoot = f['stand-in'] ? readStandInFile(f['stand-in']).managementNode?.imageRoot : undefined
    const exclusive = [f.list && '--list', f.rollback && '--rollback', f.script !== undefined && '--script'].filter(Boolean)
    if (exclusive.length > 1) throw usageError(`${exclusive.join(' and ')} cannot be combined`, 'give one of them')
    if (this.args.version !== undefined && !f.rollback) throw usageError(`unexpected argument ${this.args.version}`, 'a VERSION goes with --rollback')
    if (f.list) return listImages(this.io(), f.cluster, this.config.dataDir, nodeRoot)
    if (f.rollback) return rollbackImage(this.io(), {cluster: f.cluster, version: this.args.version, arch: f.arch, wait: f.wait, nodeRoot}, this.config.dataDir)
    return rebuildImage(this.io(), {cluster: f.cluster, script: f.script, keep: f.keep, arch: f.arch, wait: f.wait, nodeRoot}, this.config.dataDir)
  }
}
