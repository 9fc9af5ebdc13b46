import {Args} from '@oclif/core'

import {BaseCommand} from '../../lib/base-command.js'
import {usageError} from '../../lib/errors.js'

export default class ClusterRemove extends BaseCommand<typeof ClusterRemove> {
  static summary = 'Forget a registered cluster (the cluster itself keeps running)'
  static description = `Deletes citc's state for a cluster that was added with \`citc cluster add\`: its cluster.yaml,
its copy of the SSH key and its logs. Nothing on the cluster is touched. To take down a cluster citc
created, use \`citc destroy\`; one whose \`terraform apply\` never started (nothing was made in the
cloud) is forgotten here too.`

  static examples = ['<%= config.bin %> cluster remove prod', '<%= config.bin %> cluster remove prod --yes']
  static args = {name: Args.string({required: true, description: 'the cluster to forget'})}

  async run() {
    const {clusterRegistry} = await import('../../lib/cluster/registry.js')
    const {withLock} = await import('../../lib/cluster/lock.js')
    const {confirmByTyping} = await import('../../lib/io.js')
    const {applyNeverStarted, forgetNeverApplied} = await import('../../lib/tasks/destroy/never-applied.js')
    const registry = clusterRegistry(this.config.dataDir)
    const record = registry.get(this.args.name)
    if (record.origin === 'created') {
      if (applyNeverStarted(record, registry.paths(record.name))) {
        await confirmByTyping(this.io(), record.name, `forgetting ${record.name}`)
        await forgetNeverApplied(this.io(), record.name, this.config.dataDir, 'citc cluster remove')
        return {removed: record.name}
      }
      throw usageError(`${record.name} was created by citc: forgetting it would leave its machines running`, `citc destroy ${record.name} takes them down and then forgets it`)
    }
    await confirmByTyping(this.io(), record.name, `forgetting ${record.name}`)
    await withLock(registry.paths(record.name).dir, 'citc cluster remove', () => registry.remove(record.name))
    this.log(`Forgot ${record.name}. The cluster itself was not touched.`)
    return {removed: record.name}
  }
}
