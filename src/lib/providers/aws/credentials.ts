// Which AWS credentials this machine has: static keys in the environment, and the profiles of
// ~/.aws/credentials and ~/.aws/config (or the files AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE
// name). Files and environment only: whether the keys still work is found out by `terraform plan`,
// whose error citc explains.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expandHome, parseIni, tildePath, type CredentialSource, type DiscoveryContext} from '../cloud-inputs.js'

function readIni(file: string) {
  try {
    return parseIni(readFileSync(file, 'utf8'))
  } catch {
    return new Map<string, Record<string, string>>()
  }
}

export function discoverAwsCredentials(ctx: DiscoveryContext): CredentialSource[] {
  const {env, home} = ctx
  const credFile = env.AWS_SHARED_CREDENTIALS_FILE ? expandHome(env.AWS_SHARED_CREDENTIALS_FILE, home) : join(home, '.aws', 'credentials')
  const configFile = env.AWS_CONFIG_FILE ? expandHome(env.AWS_CONFIG_FILE, home) : join(home, '.aws', 'config')
  const credentials = readIni(credFile)
  const config = readIni(configFile)
  const envRegion = env.AWS_REGION || env.AWS_DEFAULT_REGION || undefined
  const selected = env.AWS_PROFILE || env.AWS_DEFAULT_PROFILE || 'default'
  const envKeys = Boolean(env.AWS_ACCESS_KEY_ID)

  const sources: CredentialSource[] = []
  if (envKeys) {
    sources.push({
      provider: 'aws',
      id: 'env',
      label: `access key ${mask(env.AWS_ACCESS_KEY_ID!)} from the environment (AWS_ACCESS_KEY_ID)`,
      kind: 'environment',
      region: envRegion,
      isDefault: true,
      problem: env.AWS_SECRET_ACCESS_KEY ? undefined : 'AWS_SECRET_ACCESS_KEY is not set',
    })
  }

  const names = new Set<string>(credentials.keys())
  for (const section of config.keys()) {
    if (section === 'default') names.add('default')
    else if (section.startsWith('profile ')) names.add(section.slice('profile '.length).trim())
  }
  const ordered = [...names].sort((a, b) => (a === selected ? -1 : b === selected ? 1 : a.localeCompare(b)))
  for (const name of ordered) {
    const keys = credentials.get(name) ?? {}
    const settings = config.get(name === 'default' ? 'default' : `profile ${name}`) ?? config.get(name) ?? {}
    const merged = {...settings, ...keys}
    const where = credentials.has(name) ? tildePath(credFile, home) : tildePath(configFile, home)
    let how = ''
    let problem: string | undefined
    if (merged.aws_access_key_id) how = `access key ${mask(merged.aws_access_key_id)}`
    else if (merged.sso_session || merged.sso_start_url) how = 'SSO'
    else if (merged.role_arn) how = `role ${merged.role_arn}`
    else if (merged.credential_process) how = 'credential_process'
    else if (merged.web_identity_token_file) how = 'web identity'
    else problem = 'the profile holds no credentials (no keys, SSO, role or credential_process)'
    if (merged.aws_access_key_id && !merged.aws_secret_access_key) problem = 'aws_secret_access_key is missing'
    if (how === 'SSO') problem = `if the SSO session has expired, run \`aws sso login --profile ${name}\``
    sources.push({
      provider: 'aws',
      id: `profile:${name}`,
      label: `AWS profile ${name}${how ? ` (${how})` : ''} in ${where}`,
      kind: 'profile',
      profile: name,
      file: credentials.has(name) ? credFile : configFile,
      region: envRegion ?? merged.region,
      isDefault: !envKeys && name === selected,
      problem,
    })
  }

  if (!envKeys && selected !== 'default' && !names.has(selected)) {
    sources.unshift({
      provider: 'aws',
      id: `profile:${selected}`,
      label: `AWS profile ${selected} (from AWS_PROFILE)`,
      kind: 'profile',
      profile: selected,
      region: envRegion,
      isDefault: true,
      problem: `profile ${selected} is in neither ${tildePath(credFile, home)} nor ${tildePath(configFile, home)}`,
    })
  }
  return sources
}

/** "AKIAIOSFODNN7EXAMPLE" → "AKIA…MPLE": enough to recognise, not a secret anyway, but kept short. */
function mask(keyId: string): string {
  return keyId.length > 8 ? `${keyId.slice(0, 4)}…${keyId.slice(-4)}` : keyId
}
