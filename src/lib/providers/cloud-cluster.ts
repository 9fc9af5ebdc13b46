// A cloud cluster's record (cluster.yaml's `cloud:` section) turned back into what the workflows need:
// the inputs to render its Terraform directory, the environment that makes Terraform (and the sweep's
// CLI) use the credentials chosen at create time, and the sweeper of leftovers.
import {readFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {join} from 'node:path'

import type {ClusterPaths} from '../cluster/registry.js'
import type {ClusterRecord} from '../cluster/schema.js'
import {CitcError} from '../errors.js'
import {awsSweeper} from './aws/sweep.js'
import {CLOUD_PROVIDERS, cloudProvider, type CloudInputs, type CloudProvider, type CredentialSource, type ImageOs} from './cloud.js'
import {ADC_FILE, gcloudDir} from './google/credentials.js'
import {googleSweeper} from './google/sweep.js'
import {oracleSweeper} from './oracle/sweep.js'
import type {CloudSweeper, SweepContext} from './sweep.js'

export type CloudSettings = NonNullable<ClusterRecord['cloud']>

/** Where citc keeps a cluster's generated keys (in keys/, mode 0600). */
export const KEY_FILES = {
  admin: 'admin_ed25519',
  adminPublic: 'admin_ed25519.pub',
  hostKey: 'mgmt_host_ed25519',
  hostKeyPublic: 'mgmt_host_ed25519.pub',
  knownHosts: 'known_hosts',
} as const

/** The address of a management node Terraform has not made yet (.invalid never resolves: RFC 2606). */
export const PENDING_HOST = 'pending.invalid'

/** The login user the image has before Terraform says (cloud-init authorizes the admin key for it). */
export function defaultMgmtUser(imageOs: ImageOs | undefined): string {
  return imageOs === 'debian-12' ? 'admin' : 'ubuntu'
}

export function isCloud(provider: string): provider is CloudProvider {
  return (CLOUD_PROVIDERS as readonly string[]).includes(provider)
}

export function cloudOf(record: ClusterRecord): {provider: CloudProvider; cloud: CloudSettings} {
  if (!isCloud(record.provider) || !record.cloud) {
    throw new CitcError('usage', `${record.name} is not a cloud cluster made by citc create (provider ${record.provider}${record.cloud ? '' : ', no cloud section in cluster.yaml'})`, {
      hint: record.origin === 'registered' ? `it was registered with \`citc cluster add\`: \`citc cluster remove ${record.name}\` forgets it (nothing on the cluster changes)` : undefined,
    })
  }
  return {provider: record.provider, cloud: record.cloud}
}

export interface ClusterKeys {
  /** The admin's public key line. */
  sshPublicKey: string
  /** The management node's host private key (OpenSSH PEM). */
  sshHostKey: string
  sshHostKeyPublic: string
}

/** The cluster's keys from keys/. */
export function readClusterKeys(paths: ClusterPaths): ClusterKeys {
  const key = (f: string) => readFileSync(join(paths.keysDir, f), 'utf8')
  return {sshPublicKey: key(KEY_FILES.adminPublic).trim(), sshHostKey: key(KEY_FILES.hostKey), sshHostKeyPublic: key(KEY_FILES.hostKeyPublic).trim()}
}

/** The Terraform inputs for a cluster: its recorded settings and its keys. */
export function cloudInputsFor(record: ClusterRecord, keys: ClusterKeys): CloudInputs {
  const {provider, cloud} = cloudOf(record)
  const common = {
    clusterId: record.name,
    region: cloud.region,
    mgmtShape: cloud.mgmtShape,
    imageOs: cloud.imageOs,
    sshCidr: cloud.sshCidr,
    ...keys,
  }
  switch (provider) {
    case 'aws':
      return {provider, ...common, zone: cloud.zone ?? ''}
    case 'google':
      return {provider, ...common, zone: cloud.zone ?? '', project: cloud.project ?? ''}
    case 'oracle':
      return {
        provider,
        ...common,
        tenancyOcid: cloud.tenancyOcid ?? '',
        compartmentOcid: cloud.compartmentOcid ?? cloud.tenancyOcid ?? '',
        availabilityDomain: Number(cloud.zone ?? '1'),
        configFileProfile: cloud.profile,
        userOcid: cloud.userOcid,
        fingerprint: cloud.fingerprint,
        privateKeyPath: cloud.privateKeyPath,
      }
  }
}

/** The credential source recorded for the cluster, as the provider's terraformEnv() takes it. */
export function credentialSourceOf(provider: CloudProvider, cloud: CloudSettings): CredentialSource | undefined {
  const base = {provider, label: '', isDefault: true}
  if (provider === 'aws' && cloud.profile) return {...base, id: `profile:${cloud.profile}`, kind: 'profile', profile: cloud.profile}
  if (provider === 'google' && cloud.credentialsFile) return {...base, id: `file:${cloud.credentialsFile}`, kind: 'key-file', file: cloud.credentialsFile}
  if (provider === 'google' && cloud.credentials === 'gcloud-adc') return {...base, id: 'gcloud-adc', kind: 'gcloud-adc'}
  if (cloud.credentials === 'env') return {...base, id: 'env', kind: 'environment'}
  return undefined
}

/** Environment for Terraform: the credentials chosen at create time. */
export function terraformEnvFor(record: ClusterRecord): Record<string, string | undefined> {
  const {provider, cloud} = cloudOf(record)
  return cloudProvider(provider).terraformEnv(credentialSourceOf(provider, cloud))
}

/** The sweeper of leftovers tagged with the cluster, using the same credentials as Terraform. */
export function sweeperFor(record: ClusterRecord, opts: {logFile?: string; signal?: AbortSignal} = {}): CloudSweeper {
  const {provider, cloud} = cloudOf(record)
  const env = terraformEnvFor(record)
  const ctx: SweepContext = {clusterId: record.name, region: cloud.region, zone: cloud.zone, project: cloud.project, env, logFile: opts.logFile, signal: opts.signal}
  switch (provider) {
    case 'aws':
      return awsSweeper(ctx)
    case 'google': {
      // Terraform read gcloud's application default credentials; gcloud itself would use its active
      // login, possibly another account: hand it the same file.
      const adc = cloud.credentials === 'gcloud-adc' ? {CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: join(gcloudDir({env: process.env, home: homedir()}), ADC_FILE)} : {}
      return googleSweeper({...ctx, env: {...env, ...adc}})
    }
    case 'oracle': {
      // The profile when it lives in the default ~/.oci/config; else the key's fields for the CLI.
      const keyEnv = cloud.profile
        ? {}
        : {OCI_CLI_USER: cloud.userOcid, OCI_CLI_FINGERPRINT: cloud.fingerprint, OCI_CLI_KEY_FILE: cloud.privateKeyPath, OCI_CLI_TENANCY: cloud.tenancyOcid, OCI_CLI_REGION: cloud.region}
      return oracleSweeper({...ctx, env: {...env, ...keyEnv}, compartment: cloud.compartmentOcid, profile: cloud.profile})
    }
  }
}
