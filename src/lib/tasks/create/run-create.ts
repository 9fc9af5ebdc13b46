// `citc create` once its questions are answered: the workflow of the provider module's kind of
// management node (resolveCreate asked the module) — this machine, or a cloud VM Terraform makes.
// Each is imported only when it runs: the cloud one pulls in Terraform's and SSH's code.
import type {Io} from '../../io.js'
import type {CreatePlan} from './resolve-create.js'

export async function runCreate(io: Io, plan: CreatePlan, dataDir: string): Promise<object> {
  switch (plan.workflow) {
    case 'this-machine': {
      const {createLocal} = await import('./create-local.js')
      return createLocal(io, plan.local, dataDir)
    }
    case 'cloud-vm': {
      const {createCloud} = await import('./create-cloud.js')
      return createCloud(io, plan.cloud, dataDir)
    }
  }
}
