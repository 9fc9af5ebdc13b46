// What a cluster's local Terraform state says it manages: destroy reports what remains from it, leaves
// the instances it knows to Terraform, and trusts an empty one (with the journal) that nothing was made.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

type StateFile = {resources?: Array<{mode?: string; type?: string; name?: string; module?: string; instances?: Array<{attributes?: {id?: unknown; name?: unknown}}>}>}

function readState(terraformDir: string): StateFile | undefined {
  const file = join(terraformDir, 'terraform.tfstate')
  if (!existsSync(file)) return {}
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StateFile
  } catch {
    return undefined
  }
}

/** Managed resources in a local Terraform state file ("aws_instance.mgmt", …); [] without one. */
export function stateResources(terraformDir: string): string[] {
  const state = readState(terraformDir)
  if (!state) return ['(terraform.tfstate could not be read)']
  return (state.resources ?? [])
    .filter((r) => r.mode === 'managed' && r.type && r.name)
    .map((r) => `${r.module ? `${r.module}.` : ''}${r.type}.${r.name}`)
    .sort()
}

/**
 * The cloud ids and names of everything the state manages (AWS i-…, an OCID, a Google name or
 * ".../instances/NAME"): the early sweep of compute instances must leave those to Terraform.
 */
export function stateIds(terraformDir: string): Set<string> {
  const ids = new Set<string>()
  for (const r of readState(terraformDir)?.resources ?? []) {
    for (const i of r.instances ?? []) {
      for (const v of [i.attributes?.id, i.attributes?.name]) {
        if (typeof v !== 'string' || v === '') continue
        ids.add(v)
        ids.add(v.slice(v.lastIndexOf('/') + 1))
      }
    }
  }
  return ids
}
