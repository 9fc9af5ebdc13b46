// The cloud providers' side of `citc create` before any machine exists: the Terraform working
// directory rendered from the shipped templates and the provider module's inputs, and the outputs citc
// reads back. What each cloud needs (its inputs, variables, outputs, credentials) is its module's
// (providers/<name>/index.ts); what they share is cloud-inputs.ts.
//
// The working directory: <state>/terraform/
//   *.tf                        the provider's templates (replaced on every render: they ship with citc)
//   cloud-init/mgmt.yaml.tftpl  the management node's first boot
//   citc.auto.tfvars.json       the inputs (mode 0600: it holds the management node's host private key)
//   terraform.tfstate, .terraform/, plan files: Terraform's own, never touched here.
// The directory is mode 0700: Terraform's state and plan files hold the host key too.
import {chmodSync, copyFileSync, closeSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync, writeSync} from 'node:fs'
import {dirname, join} from 'node:path'

import {InvalidInputError, remoteError} from '../errors.js'
import {PACKAGE_ROOT} from '../package-root.js'
import {catalogueFor} from '../providers/catalogues.js'
import {outputValues, type TerraformOutputs} from '../tools/terraform.js'
import {checkCommonInputs, type CloudInputs} from './cloud-inputs.js'
import {cloudModule, type CloudProvider} from './registry.js'

export {CLOUD_PROVIDER_NAMES as CLOUD_PROVIDERS, type CloudProvider} from './registry.js'
export * from './cloud-inputs.js'
export {COMMON_OUTPUTS, COMMON_VARIABLES} from './terraform-io.js'

// ---------------------------------------------------------------------------------------------
// Templates and the working directory

/** The package's templates/ (with a trailing slash). */
export const TEMPLATES_DIR = `${PACKAGE_ROOT}/templates/`

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

/** Validate the inputs (one InvalidInputError listing every problem) and return the tfvars. */
export function tfvarsFor(inputs: CloudInputs): Record<string, string | number> {
  const spec = cloudModule(inputs.provider).cloud
  const problems = [...checkCommonInputs(inputs), ...spec.check(inputs)]
  if (problems.length > 0) throw new InvalidInputError(problems)
  return spec.tfvars(inputs, catalogueFor(inputs.provider))
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
  const spec = cloudModule(provider).cloud
  const missing = spec.outputs.filter((name) => outputs[name] === undefined || outputs[name].value === null || outputs[name].value === undefined)
  if (missing.length > 0) {
    throw remoteError(`terraform output lacks ${missing.join(', ')}`, {
      hint: {fix: 'the apply did not finish or the state is from another citc version', retry: 'run `citc create --resume`'},
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

