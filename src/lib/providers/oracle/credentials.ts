// Which OCI API keys this machine has: the profiles of ~/.oci/config (or the file OCI_CLI_CONFIG_FILE
// names). Every profile inherits the DEFAULT profile's entries, as the OCI SDKs do. Files and
// environment only: whether the key is accepted is found out by `terraform plan`.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

import {expandHome, parseIni, tildePath, type CredentialSource, type DiscoveryContext} from '../cloud-inputs.js'
import type {OracleInputs} from './index.js'

function ociConfigFile(ctx: DiscoveryContext): string {
  const named = ctx.env.OCI_CLI_CONFIG_FILE || ctx.env.OCI_CONFIG_FILE
  return named ? expandHome(named, ctx.home) : join(ctx.home, '.oci', 'config')
}

export function discoverOracleCredentials(ctx: DiscoveryContext): CredentialSource[] {
  const file = ociConfigFile(ctx)
  let ini: Map<string, Record<string, string>>
  try {
    ini = parseIni(readFileSync(file, 'utf8'))
  } catch {
    return []
  }
  const selected = ctx.env.OCI_CLI_PROFILE || 'DEFAULT'
  const defaults = ini.get('DEFAULT') ?? {}
  const names = [...ini.keys()].sort((a, b) => (a === selected ? -1 : b === selected ? 1 : a === 'DEFAULT' ? -1 : b === 'DEFAULT' ? 1 : a.localeCompare(b)))
  return names.map((name) => {
    const p = {...defaults, ...ini.get(name)}
    const keyFile = p.key_file ? expandHome(p.key_file, ctx.home) : undefined
    const missing = ['user', 'fingerprint', 'key_file', 'tenancy', 'region'].filter((k) => !p[k])
    let problem: string | undefined
    if (p.security_token_file) problem = 'session-token profiles (oci session authenticate) are not supported: use an API key profile'
    else if (missing.length > 0) problem = `the profile lacks ${missing.join(', ')}`
    else if (keyFile && !existsSync(keyFile)) problem = `key_file ${tildePath(keyFile, ctx.home)} does not exist`
    return {
      provider: 'oracle' as const,
      id: `profile:${name}`,
      label: `OCI profile ${name} in ${tildePath(file, ctx.home)}${p.region ? ` (${p.region})` : ''}`,
      kind: 'profile' as const,
      profile: name,
      file,
      region: p.region,
      account: p.user,
      tenancy: p.tenancy,
      fingerprint: p.fingerprint,
      keyFile,
      isDefault: name === selected,
      problem,
    }
  })
}

/**
 * The OracleInputs fields for a discovered profile: the profile's name when it lives in the default
 * ~/.oci/config (the provider reads it there, passphrase included), else the key's three fields.
 */
export function oracleCredentialInputs(
  source: CredentialSource,
  ctx: DiscoveryContext,
): Pick<OracleInputs, 'tenancyOcid' | 'configFileProfile' | 'userOcid' | 'fingerprint' | 'privateKeyPath'> & {region?: string} {
  const tenancyOcid = source.tenancy ?? ''
  if (source.file === join(ctx.home, '.oci', 'config') && source.profile) {
    return {tenancyOcid, configFileProfile: source.profile, region: source.region}
  }
  return {tenancyOcid, userOcid: source.account, fingerprint: source.fingerprint, privateKeyPath: source.keyFile, region: source.region}
}
