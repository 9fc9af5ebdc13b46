// Google Cloud leftovers by label cluster=<id>: instances in any zone of the project and images of the
// project — through gcloud (with the key file Terraform used, when one was chosen).
import {parseToolJson, runTool, wants, type CloudSweeper, type LeftoverResource, type SweepContext} from '../sweep.js'

/** ".../zones/europe-west2-b" → "europe-west2-b". */
const lastSegment = (url: string | undefined) => (url ? url.slice(url.lastIndexOf('/') + 1) : undefined)

export function googleSweeper(ctx: SweepContext): CloudSweeper {
  const keyFile = ctx.env.GOOGLE_APPLICATION_CREDENTIALS
  const env = {...ctx.env, ...(keyFile ? {CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: keyFile} : {}), CLOUDSDK_CORE_DISABLE_PROMPTS: '1'}
  const gcloud = (args: string[]) => runTool({...ctx, env}, 'gcloud', [...args, '--project', ctx.project ?? '', '--quiet'])
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
