// The cloud providers' side of `citc create` before any machine exists: what each cloud needs as
// input, the Terraform working directory rendered from the shipped templates, the outputs citc reads
// back, and which credentials this workstation has (read from files and the environment only: no
// network call).
//
// Per provider (aws/, google/, oracle/): defaults, the variables citc writes, the outputs it reads,
// tfvars from typed inputs (pure), credential discovery, and the environment Terraform needs to use
// the chosen credentials. Adding a cloud is adding one folder and one line in cloudProvider().
//
// The working directory: <state>/terraform/
//   *.tf                        the provider's templates (replaced on every render: they ship with citc)
//   cloud-init/mgmt.yaml.tftpl  the management node's first boot
//   citc.auto.tfvars.json       the inputs (mode 0600: it holds the management node's host private key)
//   terraform.tfstate, .terraform/, plan files: Terraform's own, never touched here.
// The directory is mode 0700: Terraform's state and plan files hold the host key too.
import {chmodSync, copyFileSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {CLUSTER_NAME} from '../cluster/schema.js'
import {InvalidInputError, remoteError, type InputProblem} from '../errors.js'
import {outputValues, type TerraformOutputs} from '../tools/terraform.js'
import {awsProvider} from './aws/index.js'
import {googleProvider} from './google/index.js'
import {oracleProvider} from './oracle/index.js'

export type CloudProvider = 'aws' | 'google' | 'oracle'
export {CLOUD_PROVIDERS} from '../shapes/types.js'

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
  /** Who may reach SSH on the management node. Default 0.0.0.0/0. */
  sshCidr?: string
}

export interface AwsInputs extends CommonCloudInputs {
  provider: 'aws'
  /** Availability zone, e.g. eu-west-2a. */
  zone: string
}

export interface GoogleInputs extends CommonCloudInputs {
  provider: 'google'
  project: string
  /** e.g. europe-west2-b */
  zone: string
}

export interface OracleInputs extends CommonCloudInputs {
  provider: 'oracle'
  tenancyOcid: string
  compartmentOcid: string
  /** 1, 2 or 3. */
  availabilityDomain: number
  /** A profile of ~/.oci/config; or else the three fields below. */
  configFileProfile?: string
  userOcid?: string
  fingerprint?: string
  privateKeyPath?: string
}

export type CloudInputs = AwsInputs | GoogleInputs | OracleInputs

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

export interface CloudProviderSpec<I extends CloudInputs = CloudInputs> {
  name: CloudProvider
  title: string
  defaults: ProviderDefaults
  /** Every variable citc may write in citc.auto.tfvars.json (each is declared in variables.tf). */
  variables: readonly string[]
  /** Outputs citc reads after apply (each is declared in outputs.tf). */
  outputs: readonly string[]
  /** The tfvars for these inputs (pure; defaults filled in, absent optional values left out). */
  tfvars(inputs: I): Record<string, string | number>
  /** Problems with the provider-specific inputs, located by flag. */
  check(inputs: I): InputProblem[]
  /** Credentials found in the environment and the usual files; the default first. */
  discoverCredentials(ctx: DiscoveryContext): CredentialSource[]
  /** Environment for Terraform so it uses `source` (undefined values remove a variable). */
  terraformEnv(source: CredentialSource | undefined): Record<string, string | undefined>
}

/**
 * The provider's spec. A function, not a table: the provider modules import helpers from this module
 * (an import cycle), so they may use this module's values only inside functions, never at the top
 * level, and this module reaches theirs only when called.
 */
export function cloudProvider(name: CloudProvider): CloudProviderSpec {
  switch (name) {
    case 'aws':
      return awsProvider as CloudProviderSpec
    case 'google':
      return googleProvider as CloudProviderSpec
    case 'oracle':
      return oracleProvider as CloudProviderSpec
  }
}

export {COMMON_OUTPUTS, COMMON_VARIABLES} from './terraform-io.js'

// ---------------------------------------------------------------------------------------------
// Templates and the working directory

/** The package's templates/ (src/lib/providers and dist/lib/providers are both three levels down). */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../../templates/', import.meta.url))

export const TFVARS_FILE = 'citc.auto.tfvars.json'
export const CLOUD_INIT_TEMPLATE = 'cloud-init/mgmt.yaml.tftpl'

export interface RenderResult {
  dir: string
  tfvarsFile: string
  /** Files written, relative to dir. */
  files: string[]
  /** Names of the variables written (values are not returned: one is a private key). */
  variables: string[]
}

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
    ssh_cidr: inputs.sshCidr ?? '0.0.0.0/0',
  }
}

/** Validate the inputs (one InvalidInputError listing every problem) and return the tfvars. */
export function tfvarsFor(inputs: CloudInputs): Record<string, string | number> {
  const spec = cloudProvider(inputs.provider)
  const problems = [...checkCommonInputs(inputs), ...spec.check(inputs)]
  if (problems.length > 0) throw new InvalidInputError(problems)
  return spec.tfvars(inputs)
}

/** Write `data` to `file` atomically (temp file in the same directory, fsync, rename), with `mode`. */
function writeFileAtomic(file: string, data: string, mode: number) {
  const tmp = `${file}.tmp-${process.pid}`
  const fd = openSync(tmp, 'w', mode)
  try {
    writeSync(fd, data)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  chmodSync(tmp, mode) // the umask may have narrowed it; never widened
  renameSync(tmp, file)
}

/**
 * Render the cluster's Terraform working directory: the provider's templates, the cloud-init
 * template, and citc.auto.tfvars.json (0600) from the inputs. Idempotent: re-rendering replaces
 * citc's files, removes templates that no longer ship, and never touches Terraform's state,
 * .terraform/ or plan files.
 */
export function renderTerraformDir(targetDir: string, inputs: CloudInputs, opts: {templatesDir?: string} = {}): RenderResult {
  const tfvars = tfvarsFor(inputs)
  const templates = opts.templatesDir ?? TEMPLATES_DIR
  const source = join(templates, 'terraform', inputs.provider)
  let tfFiles: string[]
  try {
    tfFiles = readdirSync(source).filter((f) => f.endsWith('.tf')).sort()
  } catch (error) {
    throw remoteError(`citc's Terraform templates for ${inputs.provider} are missing (${source})`, {hint: 'reinstall citc', cause: error})
  }

  mkdirSync(targetDir, {recursive: true, mode: 0o700})
  chmodSync(targetDir, 0o700)
  for (const old of readdirSync(targetDir)) {
    if (old.endsWith('.tf') && !tfFiles.includes(old) && statSync(join(targetDir, old)).isFile()) rmSync(join(targetDir, old))
  }
  const files: string[] = []
  for (const f of tfFiles) {
    copyFileSync(join(source, f), join(targetDir, f))
    chmodSync(join(targetDir, f), 0o644)
    files.push(f)
  }
  const cloudInit = join(targetDir, CLOUD_INIT_TEMPLATE)
  mkdirSync(dirname(cloudInit), {recursive: true, mode: 0o700})
  copyFileSync(join(templates, CLOUD_INIT_TEMPLATE), cloudInit)
  files.push(CLOUD_INIT_TEMPLATE)

  const tfvarsFile = join(targetDir, TFVARS_FILE)
  writeFileAtomic(tfvarsFile, `${JSON.stringify(tfvars, null, 2)}\n`, 0o600)
  files.push(TFVARS_FILE)
  return {dir: targetDir, tfvarsFile, files, variables: Object.keys(tfvars)}
}

// ---------------------------------------------------------------------------------------------
// Outputs

/** What create records from `terraform output -json`: where to reach the management node, and the rest. */
export interface ClusterOutputs {
  mgmt: {host: string; port: number; user: string; hostname: string}
  /** Every non-sensitive output as Terraform gave it (the playbook's variables; node drivers later). */
  all: Record<string, unknown>
}

/**
 * Check that every output citc reads is there (a missing one means a state from another citc version
 * or an apply that did not finish) and return the management node's address.
 */
export function readClusterOutputs(provider: CloudProvider, outputs: TerraformOutputs): ClusterOutputs {
  const spec = cloudProvider(provider)
  const missing = spec.outputs.filter((name) => outputs[name] === undefined || outputs[name].value === null || outputs[name].value === undefined)
  if (missing.length > 0) {
    throw remoteError(`terraform output lacks ${missing.join(', ')}`, {
      hint: 'the apply did not finish or the state is from another citc version: run `citc create --resume`',
      details: {missing},
    })
  }
  const str = (name: string) => String(outputs[name].value)
  // Every template opens SSH on 22 (a stand-in node on another port comes through create's options).
  return {
    mgmt: {host: str('mgmt_public_ip'), port: 22, user: str('mgmt_user'), hostname: str('mgmt_hostname')},
    all: outputValues(outputs),
  }
}

// ---------------------------------------------------------------------------------------------
// Helpers for credential discovery (pure reading)

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
