// What `citc node add` and `citc node remove` open on the management node, written once: the session
// (wf.connect: logged, closed with the workflow), the controller, and a work directory of the run's own
// for the playbooks' inventory and variables (0600 files: they name key paths), removed at the end.
import type {ClusterRecord} from '../../cluster/schema.js'
import {Controller} from '../../slurm/controller.js'
import type {Transport} from '../../transport/types.js'
import type {Workflow} from '../workflow.js'

export interface JoinedSession {
  transport: Transport
  controller: Controller
  workDir: string
  /** The run's full log (every command on the management node, Ansible's output). */
  log: string
}

export async function withJoinedSession<R>(wf: Workflow, record: ClusterRecord, kind: 'node-add' | 'node-remove', body: (s: JoinedSession) => Promise<R>): Promise<R> {
  const transport = await wf.connect(record)
  const controller = new Controller(transport, {confPath: record.slurm.confPath, restartCommand: record.slurm.restartCommand})
  const workDir = (await transport.check(['mktemp', '-d', `/tmp/citc-${kind}.XXXXXX`])).stdout.trim()
  try {
    return await body({transport, controller, workDir, log: wf.logFile(kind)})
  } finally {
    await transport.run(['rm', '-rf', workDir]).catch(() => undefined)
  }
}
