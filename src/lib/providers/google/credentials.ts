// Which Google Cloud credentials this machine has: a key file named by GOOGLE_APPLICATION_CREDENTIALS,
// credentials in GOOGLE_CREDENTIALS, and gcloud's application default credentials file; the project,
// region and zone from the environment, the key file or gcloud's active configuration. Files and
// environment only: whether the credentials still work is found out by `terraform plan`.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expandHome, parseIni, tildePath, type CredentialSource, type DiscoveryContext} from '../cloud-inputs.js'

interface KeyFile {
  type?: string
  project_id?: string
  client_email?: string
  quota_project_id?: string
}

function readJson(file: string): KeyFile | undefined {
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as unknown
    return typeof json === 'object' && json !== null ? (json as KeyFile) : undefined
  } catch {
    return undefined
  }
}

/** gcloud's directory: $CLOUDSDK_CONFIG or ~/.config/gcloud. */
/** gcloud's application default credentials (`gcloud auth application-default login`), in its config dir. */
export const ADC_FILE = 'application_default_credentials.json'

export function gcloudDir(ctx: DiscoveryContext): string {
  return ctx.env.CLOUDSDK_CONFIG ? expandHome(ctx.env.CLOUDSDK_CONFIG, ctx.home) : join(ctx.home, '.config', 'gcloud')
}

/** Project, account, region and zone of gcloud's active configuration (empty if none). */
function gcloudConfig(ctx: DiscoveryContext): {project?: string; account?: string; region?: string; zone?: string} {
  const dir = gcloudDir(ctx)
  let active = ctx.env.CLOUDSDK_ACTIVE_CONFIG_NAME
  if (!active) {
    try {
      active = readFileSync(join(dir, 'active_config'), 'utf8').trim() || 'default'
    } catch {
      active = 'default'
    }
  }
  let ini: Map<string, Record<string, string>>
  try {
    ini = parseIni(readFileSync(join(dir, 'configurations', `config_${active}`), 'utf8'))
  } catch {
    return {}
  }
  return {
    project: ini.get('core')?.project,
    account: ini.get('core')?.account,
    region: ini.get('compute')?.region,
    zone: ini.get('compute')?.zone,
  }
}

export function discoverGoogleCredentials(ctx: DiscoveryContext): CredentialSource[] {
  const {env, home} = ctx
  const gcloud = gcloudConfig(ctx)
  const envProject = env.GOOGLE_CLOUD_PROJECT || env.GOOGLE_PROJECT || env.GCLOUD_PROJECT || env.CLOUDSDK_CORE_PROJECT || undefined
  const region = env.GOOGLE_REGION || env.CLOUDSDK_COMPUTE_REGION || gcloud.region
  const zone = env.GOOGLE_ZONE || env.CLOUDSDK_COMPUTE_ZONE || gcloud.zone
  const sources: CredentialSource[] = []

  // The provider's own order: GOOGLE_CREDENTIALS (and its aliases), then ADC (which is
  // GOOGLE_APPLICATION_CREDENTIALS, then gcloud's file).
  const inline = env.GOOGLE_CREDENTIALS || env.GOOGLE_CLOUD_KEYFILE_JSON || env.GCLOUD_KEYFILE_JSON
  if (inline) {
    const asFile = inline.trim().startsWith('{') ? undefined : expandHome(inline, home)
    const key = asFile ? readJson(asFile) : (() => {
      try {
        return JSON.parse(inline) as KeyFile
      } catch {
        return undefined
      }
    })()
    sources.push({
      provider: 'google',
      id: 'env',
      label: `${key?.client_email ?? 'credentials'} from the environment (GOOGLE_CREDENTIALS)`,
      kind: 'environment',
      account: key?.client_email,
      project: envProject ?? key?.project_id ?? gcloud.project,
      region,
      zone,
      isDefault: true,
      problem: key ? undefined : 'GOOGLE_CREDENTIALS is neither a readable key file nor JSON',
    })
  }

  const adcEnv = env.GOOGLE_APPLICATION_CREDENTIALS ? expandHome(env.GOOGLE_APPLICATION_CREDENTIALS, home) : undefined
  if (adcEnv) {
    const key = readJson(adcEnv)
    sources.push({
      provider: 'google',
      id: `file:${adcEnv}`,
      label: `${key?.client_email ?? key?.type ?? 'key file'} from ${tildePath(adcEnv, home)} (GOOGLE_APPLICATION_CREDENTIALS)`,
      kind: 'key-file',
      file: adcEnv,
      account: key?.client_email,
      project: envProject ?? key?.project_id ?? key?.quota_project_id ?? gcloud.project,
      region,
      zone,
      isDefault: sources.length === 0,
      problem: !existsSync(adcEnv) ? `${tildePath(adcEnv, home)} does not exist` : key ? undefined : `${tildePath(adcEnv, home)} is not a JSON credentials file`,
    })
  }

  const adcFile = join(gcloudDir(ctx), ADC_FILE)
  if (existsSync(adcFile)) {
    const key = readJson(adcFile)
    sources.push({
      provider: 'google',
      id: 'gcloud-adc',
      label: `gcloud application default credentials${gcloud.account ? ` (${gcloud.account})` : ''} in ${tildePath(adcFile, home)}`,
      kind: 'gcloud-adc',
      file: adcFile,
      account: key?.client_email ?? gcloud.account,
      project: envProject ?? key?.quota_project_id ?? gcloud.project,
      region,
      zone,
      isDefault: sources.length === 0,
      problem: key ? undefined : `${tildePath(adcFile, home)} is not a JSON credentials file: run \`gcloud auth application-default login\``,
    })
  }
  return sources
}

/** A key file given with --credentials: its account and project, read from it. */
export function googleKeySource(file: string, ctx: DiscoveryContext): CredentialSource {
  let key: {client_email?: string; project_id?: string} = {}
  let problem: string | undefined
  try {
    key = JSON.parse(readFileSync(file, 'utf8')) as typeof key
  } catch (error) {
    problem = `cannot read it as a JSON key file (${(error as NodeJS.ErrnoException).code ?? 'not JSON'})`
  }
  return {
    provider: 'google',
    id: `file:${file}`,
    label: `${key.client_email ?? 'key file'} from ${tildePath(file, ctx.home)} (--credentials)`,
    kind: 'key-file',
    file,
    account: key.client_email,
    project: key.project_id,
    isDefault: true,
    problem,
  }
}
