// The provider's section (`driver`) of the management node's /etc/citc/cluster.json for a cloud cluster:
// made from Terraform's outputs and checked against the section's schema (nodeConfig, in
// providers/<name>/node-config.ts), the playbooks write it there from the variable `citc_node_driver`.
// cluster/management-contract.ts reads it back (the node programs do not load this file).
import {z} from 'zod'

import {CitcError} from '../errors.js'
import type {TerraformOutputValues} from './cloud-node-config.js'
import {providerModule} from './registry.js'

/**
 * The playbook variable `citc_node_driver` for a cloud cluster: its provider's section of cluster.json,
 * made from Terraform's outputs (as cluster.yaml keeps them) and checked against the section's schema,
 * so a missing output fails the create, not the first node start.
 */
export function nodeDriverVars(provider: string, outputs: TerraformOutputValues, cluster = '<cluster>'): Record<string, unknown> {
  // local: no Terraform, and the driver's defaults (its section holds overrides only).
  const {fromOutputs, schema} = providerModule(provider).nodeConfig
  if (!fromOutputs) return {}
  const r = schema(z).safeParse(fromOutputs(outputs))
  if (!r.success) {
    const fields = r.error.issues.map((i) => ['driver', ...i.path].join('.'))
    throw new CitcError('invalidInput', `the Terraform outputs of this ${provider} cluster do not give its node driver what it needs: ${r.error.issues.map((i, n) => `${fields[n]}: ${i.message}`).join('; ')}`, {
      hint: `the outputs are in cluster.yaml (terraform.outputs); re-run \`citc create --name ${cluster}\` to read them again after an apply`,
      details: {fields},
    })
  }
  return r.data as Record<string, unknown>
}
