// Google Cloud leftovers by label cluster=<id>: instances in any zone of the project and images of the
// project — through gcloud (with the key file Terraform used, when one was chosen).
import {homedir} from 'node:os'
import {join} from 'node:path'

import type {CloudSettings} from '../cluster-view.js'
import {parseToolJson, runTool, wants, type CloudSweeper, type LeftoverResource, type SweepContext} from '../sweep.js'
import {ADC_FILE, gcloudDir} from './credentials.js'

/** ".../zones/europe-west2-b" → "europe-west2-b". */
const lastSegment = (url: string | undefined) => (url ? url.slice(url.lastIndexOf('/') + 1) : undefined)

/** The sweep's context with the cluster's credentials for gcloud (also the image builder's). */
export async function googleToolContext(ctx: SweepContext, settings: CloudSettings): Promise<SweepContext> {
  // Terraform read gcloud's application default credentials; gcloud itself would use its active
  // login, possibly another account: hand it the same file.
  const adc = settings.credentials === 'gcloud-adc' ? {CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: join(gcloudDir({env: process.env, home: homedir()}), ADC_FILE)} : {}
  return {...ctx, env: {...ctx.env, ...adc}}
}

/** gcloud in the cluster's project, with the key file Terraform used and no prompts. */
export function gcloudTool(ctx: SweepContext): (args: string[]) => Promise<string> {
  const keyFile = ctx.env.GOOGLE_APPLICATION_CREDENTIALS
  const env = {...ctx.env, ...(keyFile ? {CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: keyFile} : {}), CLOUDSDK_CORE_DISABLE_PROMPTS: '1'}
  return (args) => runTool({...ctx, env}, 'gcloud', [...args, '--project', ctx.project ?? '', '--quiet'])
}

export function googleSweeper(ctx: SweepContext): CloudSweeper {
  const gcloud = gcloudTool(ctx)
  const filter = `--filter=labels.cluster=${ctx.clusterId}`
  return {
    tool: 'gcloud',
    async list(kinds) {
      const out: LeftoverResource[] = []
      if (wants(kinds, 'instance')) {
        const instances = parseToolJson('gcloud', await gcloud(['compute', 'instances', 'list', filter, '--format=json'])) as Array<{name: string; zone?: string}>
        for (const i of instances) out.push({kind: 'instance', id: i.name, location: lastSegment(i.zone)})
      }
      if (wants(kinds, 'image')) {
        const images = parseToolJson('gcloud', await gcloud(['compute', 'images', 'list', '--no-standard-images', filter, '--format=json'])) as Array<{name: string}>
        for (const i of images) out.push({kind: 'image', id: i.name})
      }
      return out
    },
    async delete(r) {
      if (r.kind === 'instance') await gcloud(['compute', 'instances', 'delete', r.id, '--zone', r.location ?? ctx.zone ?? ''])
      else if (r.kind === 'image') await gcloud(['compute', 'images', 'delete', r.id])
      else throw new Error(`citc does not know how to delete a Google Cloud ${r.kind}`)
    },
  }
}
