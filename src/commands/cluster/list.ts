import {BaseCommand} from '../../lib/base-command.js'

export default class ClusterList extends BaseCommand<typeof ClusterList> {
  static summary = 'List the clusters citc knows'
  static examples = ['<%= config.bin %> cluster list', '<%= config.bin %> cluster list --json']

  async run() {
    const {clusterRegistry} = await import('../../lib/cluster/registry.js')
    const entries = clusterRegistry(this.config.dataDir).scan()
    const clusters = entries.map((e) =>
      e.record
        ? {name: e.name, provider: e.record.provider, origin: e.record.origin, phase: e.record.phase ?? 'ready', host: e.record.mgmt.host, createdAt: e.record.createdAt}
        : {name: e.name, error: e.error.message},
    )
    if (clusters.length === 0) this.log('No clusters. Make one with `citc create`, or register one with `citc cluster add`.')
    for (const c of clusters) {
      this.log('error' in c ? `${c.name}  (unreadable: ${c.error})` : `${c.name}  ${c.provider}  ${c.phase === 'creating' ? 'creating (not finished: citc create --resume)' : c.origin}  ${c.host}  ${c.createdAt}`)
    }
    return {clusters}
  }
}
