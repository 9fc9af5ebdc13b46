// What every cloud shares before any machine exists, without zod or execa (the provider modules import
// it, and every command imports the modules): the common inputs and their checks, the common tfvars,
// credential sources, and the INI/path helpers the credential discoveries read files with.
import {join} from 'node:path'

import {CLUSTER_NAME} from '../cluster-name.js'
import type {InputProblem} from '../errors.js'
import type {CloudProvider} from './registry.js'

export type ImageOs = 'ubuntu-24.04' | 'debian-12'
export type MgmtArch = 'x86_64' | 'arm64'

/** What every cloud needs from the wizard / flags / cluster config. */
export interface CommonCloudInputs {
  /** The cluster's name (CLUSTER_NAME), its id in every tag and node name. */
  clusterId: string
  region: string
  /** The management node's shape; the provider's default when absent. */
  mgmtShape?: string
  /** Architecture of mgmtShape; looked up in the shape catalogue when absent (x86_64 if unknown). */
  mgmtArch?: MgmtArch
  /** The admin's SSH public key (one OpenSSH line). */
  sshPublicKey: string
  /** The management node's ed25519 host private key citc generated (OpenSSH PEM). Secret. */
  sshHostKey: string
  /** Its public part, "ssh-ed25519 AAAA…". */
  sshHostKeyPublic: string
  /** Default ubuntu-24.04; debian-12 on AWS only. */
  imageOs?: ImageOs
  /** Who may reach SSH on the management node. Default DEFAULT_SSH_CIDR (create warns about it). */
  sshCidr?: string
}

/**
 * Who may reach SSH on a cloud management node when no --ssh-cidr is given: the whole internet, as
 * before the wizard asked. `citc create` says so out loud (tasks/create/ssh-cidr.ts sshExposureWarning).
 */
export const DEFAULT_SSH_CIDR = '0.0.0.0/0'

/** Where a set of cloud credentials was found on this machine. */
export interface CredentialSource {
  provider: CloudProvider
  /** Stable key, e.g. "env", "profile:research", "file:/home/me/key.json", "gcloud-adc". */
  id: string
  /** For the wizard: "AWS profile research (~/.aws/credentials)". */
  label: string
  kind: 'environment' | 'profile' | 'key-file' | 'gcloud-adc'
  profile?: string
  file?: string
  /** Region / zone / project the source itself names, as defaults for the next questions. */
  region?: string
  zone?: string
  project?: string
  /** Google: the service account or user; Oracle: the user OCID. */
  account?: string
  /** Oracle: from the profile (never the key itself). */
  tenancy?: string
  fingerprint?: string
  keyFile?: string
  /** What the cloud's own tools would use without being told. */
  isDefault: boolean
  /** Why it may not work (a missing key file, an SSO session to refresh…), for the wizard to show. */
  problem?: string
}

export interface DiscoveryContext {
  env: Record<string, string | undefined>
  /** The user's home directory. */
  home: string
}

export interface ProviderDefaults {
  region: string
  /** Zone (aws, google) or availability domain number as a string (oracle). */
  zone: string
  mgmtShape: string
}

/**
 * The fields every cloud cluster's `cloud:` section of cluster.yaml has (cluster/schema.ts holds their
 * zod schema; each provider adds its own). Never a secret: credentials are named, not copied.
 */
export interface CommonCloudSettings {
  region: string
  /** AWS/Google: the zone; Oracle: the availability domain number. */
  zone?: string
  /** The credential source chosen (CredentialSource.id, e.g. "profile:research", "env", "gcloud-adc"). */
  credentials?: string
  mgmtShape: string
  imageOs?: ImageOs
  sshCidr?: string
  /** citc as installed on the management node (bin/run.js) and the node binary that runs it. */
  citcBin?: string
  nodeBin?: string
}

export type {CloudInputs} from './registry.js'

const SSH_PUBLIC_KEY = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh\.com) [A-Za-z0-9+/]+={0,3}( .*)?$/
const ED25519_PUBLIC_KEY = /^ssh-ed25519 [A-Za-z0-9+/]+={0,3}( .*)?$/
const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/

export function isCidr(text: string): boolean {
  const m = CIDR.exec(text)
  return m !== null && m.slice(1, 5).every((o) => Number(o) <= 255) && Number(m[5]) <= 32
}

/** Problems common to every cloud, located by flag. */
export function checkCommonInputs(inputs: CommonCloudInputs): InputProblem[] {
  const problems: InputProblem[] = []
  if (!CLUSTER_NAME.test(inputs.clusterId)) {
    problems.push({where: '--name', message: `"${inputs.clusterId}" must start with a lower-case letter and have at most 31 of a-z, 0-9 and "-"`})
  }
  if (!inputs.region) problems.push({where: '--region', message: 'is required'})
  if (!SSH_PUBLIC_KEY.test(inputs.sshPublicKey.trim())) problems.push({where: 'admin key', message: 'is not one OpenSSH public key line'})
  if (!ED25519_PUBLIC_KEY.test(inputs.sshHostKeyPublic.trim())) problems.push({where: 'host key', message: 'the public part is not an ssh-ed25519 key'})
  if (!inputs.sshHostKey.includes('-----BEGIN OPENSSH PRIVATE KEY-----')) problems.push({where: 'host key', message: 'is not an OpenSSH private key'})
  if (inputs.sshCidr !== undefined && !isCidr(inputs.sshCidr)) problems.push({where: '--ssh-cidr', message: `"${inputs.sshCidr}" is not an IPv4 CIDR block`})
  return problems
}

/** tfvars every provider shares (defaults filled in). */
export function commonTfvars(inputs: CommonCloudInputs, defaults: ProviderDefaults): Record<string, string> {
  return {
    cluster_id: inputs.clusterId,
    region: inputs.region,
    mgmt_shape: inputs.mgmtShape ?? defaults.mgmtShape,
    ssh_public_key: inputs.sshPublicKey.trim(),
    ssh_host_key: inputs.sshHostKey.endsWith('\n') ? inputs.sshHostKey : `${inputs.sshHostKey}\n`,
    ssh_host_key_public: inputs.sshHostKeyPublic.trim(),
    image_os: inputs.imageOs ?? 'ubuntu-24.04',
    ssh_cidr: inputs.sshCidr ?? DEFAULT_SSH_CIDR,
  }
}

/**
 * An INI file as AWS and OCI write them: "[section]", "key = value", comments with # or ;,
 * indented continuation lines (AWS nested settings) skipped. Section and key names are kept as written.
 */
export function parseIni(text: string): Map<string, Record<string, string>> {
  const sections = new Map<string, Record<string, string>>()
  let current: Record<string, string> | undefined
  for (const raw of text.split(/\r?\n/)) {
    if (/^\s/.test(raw) && current && raw.trim() !== '' && !raw.trim().startsWith('[')) continue // nested value
    const line = raw.trim()
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue
    const section = /^\[([^\]]+)\]$/.exec(line)
    if (section) {
      const name = section[1].trim()
      current = sections.get(name) ?? {}
      sections.set(name, current)
      continue
    }
    const eq = line.indexOf('=')
    if (eq <= 0 || !current) continue
    current[line.slice(0, eq).trim()] = line.slice(eq + 1).trim()
  }
  return sections
}

/** "~/x" → "<home>/x". */
export function expandHome(path: string, home: string): string {
  return path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path
}

/** Show a path under the home directory as ~/… */
export function tildePath(path: string, home: string): string {
  return home && path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path
}
