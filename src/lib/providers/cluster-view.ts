// What a provider reads of a cluster's record. cluster/schema.ts's ClusterRecord (cluster.yaml) is one;
// it is named here by the fields the providers use because cluster/ sits above providers/: its
// schemas are made from the provider modules' own parts (test/lib/import-layers.test.ts).
import type {CommonCloudSettings} from './cloud-inputs.js'
import type {ProviderSettings} from './registry.js'

/** Every cloud cluster's settings (cluster.yaml's `cloud:`): the common fields and its provider's (all optional here). */
export type CloudSettings = CommonCloudSettings & Partial<ProviderSettings>

export interface ClusterView {
  name: string
  provider: string
  /** created: made by `citc create`; registered: added with `citc cluster add`. */
  origin: 'created' | 'registered'
  mgmt: {user: string; hostname?: string}
  /** Terraform's outputs as cluster.yaml keeps them. */
  terraform?: {outputs: Record<string, unknown>}
  cloud?: CloudSettings
  /** Settings chosen at create time (suspendTime, monitoring: providers/monitoring-setting.ts). */
  settings?: Record<string, string | number>
}
