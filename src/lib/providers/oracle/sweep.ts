// Oracle Cloud leftovers by freeform tag cluster=<id>: instances and custom images, found with the
// resource search of the OCI CLI (with the ~/.oci/config profile, or the API key's fields through
// the OCI_CLI_* variables) and limited to the cluster's compartment.
import type {CloudSettings} from '../cluster-view.js'
import {parseToolJson, runTool, wants, type CloudSweeper, type LeftoverResource, type SweepContext} from '../sweep.js'

interface SearchItem {
  identifier: string
  'resource-type'?: string
  'display-name'?: string
  'lifecycle-state'?: string
  'compartment-id'?: string
}

const GONE = new Set(['TERMINATED', 'TERMINATING', 'DELETED', 'DELETING'])

/** The sweep's context with the cluster's credentials and compartment for the OCI CLI (also the image builder's). */
export function oracleToolContext(ctx: SweepContext, settings: CloudSettings): SweepContext {
  // The profile when it lives in the default ~/.oci/config; else the key's fields for the CLI.
  const keyEnv = settings.profile
    ? {}
    : {OCI_CLI_USER: settings.userOcid, OCI_CLI_FINGERPRINT: settings.fingerprint, OCI_CLI_KEY_FILE: settings.privateKeyPath, OCI_CLI_TENANCY: settings.tenancyOcid, OCI_CLI_REGION: settings.region}
  return {...ctx, env: {...ctx.env, ...keyEnv}, compartment: settings.compartmentOcid, profile: settings.profile}
}

/** The OCI CLI in the cluster's region (and profile), printing JSON. */
export function ociTool(ctx: SweepContext): (args: string[]) => Promise<string> {
  const common = ['--region', ctx.region, ...(ctx.profile ? ['--profile', ctx.profile] : [])]
  return (args) => runTool(ctx, 'oci', [...args, ...common, '--output', 'json'])
}

export function oracleSweeper(ctx: SweepContext): CloudSweeper {
  const oci = ociTool(ctx)
  return {
    tool: 'oci',
    async list(kinds) {
      const types = (['instance', 'image'] as const).filter((k) => wants(kinds, k))
      if (types.length === 0) return []
      const query = `query ${types.join(', ')} resources where (freeformTags.key = 'cluster' && freeformTags.value = '${ctx.clusterId.replace(/'/g, '')}')`
      const result = parseToolJson('oci', await oci(['search', 'resource', 'structured-search', '--query-text', query])) as {data?: {items?: SearchItem[]}}
      const out: LeftoverResource[] = []
      for (const item of result.data?.items ?? []) {
        if (GONE.has(item['lifecycle-state'] ?? '')) continue
        if (ctx.compartment && item['compartment-id'] && item['compartment-id'] !== ctx.compartment) continue
        const type = (item['resource-type'] ?? '').toLowerCase()
        if (type === 'instance') out.push({kind: 'instance', id: item.identifier, name: item['display-name']})
        else if (type === 'image') out.push({kind: 'image', id: item.identifier, name: item['display-name']})
      }
      return out
    },
    async delete(r) {
      if (r.kind === 'instance') await oci(['compute', 'instance', 'terminate', '--instance-id', r.id, '--force'])
      else if (r.kind === 'image') await oci(['compute', 'image', 'delete', '--image-id', r.id, '--force'])
      else throw new Error(`citc does not know how to delete an Oracle Cloud ${r.kind}`)
    },
  }
}
