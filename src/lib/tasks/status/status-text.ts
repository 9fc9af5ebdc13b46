// `citc status` for people: the same text whether printed once or redrawn by `--watch`.
import {controllerInfoText, needsAdminText, type StatusDocument, waitingJobsText} from './cluster-status.js'
import {nodeTable} from './node-table.js'

export function statusText(doc: StatusDocument): string {
  const lines = [`Cluster ${doc.cluster} (${doc.provider}, ${doc.origin}) — management node: ${doc.managementNode}`]
  if (doc.cloud) {
    lines.push(
      `Cloud: ${doc.cloud.region}${doc.cloud.zone ? ` / ${doc.cloud.zone}` : ''}${doc.cloud.project ? ` (project ${doc.cloud.project})` : ''}, management shape ${doc.cloud.mgmtShape}${doc.phase === 'creating' ? ' — create has not finished (citc create --resume)' : ''}`,
    )
  }
  lines.push(`Controller: ${doc.controller.up ? 'UP' : 'NOT ANSWERING'}${doc.controllerInfo?.version ? `, Slurm ${doc.controllerInfo.version}` : ''} (${doc.controller.confPath})${doc.controller.error ? ` — ${doc.controller.error}` : ''}`)
  const s = doc.summary
  lines.push(`Nodes: ${doc.nodes.length} (${s.up} up, ${s['powering-up']} starting, ${s['powering-down']} stopping, ${s.down} powered down)\n`)
  lines.push(nodeTable(doc.nodes) + controllerInfoText(doc) + waitingJobsText(doc) + needsAdminText(doc))
  return lines.join('\n')
}
