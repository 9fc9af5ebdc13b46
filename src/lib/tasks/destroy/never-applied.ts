// A cloud cluster whose `terraform apply` never started (create stopped at init or plan, or
// --plan-only; the journal knows) has nothing in the cloud: destroy and `cluster remove` forget it
// without Terraform, the cloud CLI or credentials, and say so.
import {Journal} from '../../cluster/journal.js'
import {withLock} from '../../cluster/lock.js'
import {clusterRegistry, type ClusterPaths} from '../../cluster/registry.js'
import {PENDING_HOST, type ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import type {Io} from '../../io.js'
import {APPLY_STARTED} from '../create/cloud-terraform-steps.js'
import {stateResources} from './terraform-state.js'

/**
 * Did Terraform never start to apply for this cluster? Then nothing of it exists in the cloud. Only
 * when everything agrees: create did not finish, no address or outputs were recorded, the journal
 * has no apply (started or done), and no Terraform state holds a resource (a run by an older citc,
 * which did not journal the start, may have left one).
 */
export function applyNeverStarted(record: ClusterRecord, paths: ClusterPaths): boolean {
  if (!record.cloud || record.phase !== 'creating' || record.mgmt.host !== PENDING_HOST || record.terraform) return false
  const journal = new Journal(paths.journal).load()
  if (journal.done(APPLY_STARTED) || journal.done('apply')) return false
  return stateResources(paths.terraformDir).length === 0
}

/** Forget a cluster whose apply never started (see applyNeverStarted), under its lock. */
export async function forgetNeverApplied(io: Io, name: string, dataDir: string, command: string): Promise<string> {
  const registry = clusterRegistry(dataDir)
  const paths = registry.paths(name)
  await withLock(paths.dir, command, () => {
    // Checked again under the lock: a create may have got further meanwhile.
    if (!applyNeverStarted(registry.get(name), paths)) {
      throw new CitcError('usage', `${name}: terraform apply has started since`, {hint: `citc destroy ${name}`})
    }
    registry.remove(name)
  })
  const message = `Forgot ${name}: terraform apply never started for it, so nothing was made in the cloud; no Terraform, cloud CLI or credentials were needed.`
  io.log(message)
  return message
}
