// Oracle Cloud: defaults, the variables citc writes for templates/terraform/oracle, the outputs it
// reads, and the API key Terraform will use. (Uses cloud.ts's values only inside functions.)
import type {InputProblem} from '../../errors.js'
import {commonTfvars, type CloudProviderSpec, type OracleInputs} from '../cloud.js'
import {COMMON_OUTPUTS, COMMON_VARIABLES} from '../terraform-io.js'
import {discoverOracleCredentials} from './credentials.js'

export {oracleCredentialInputs} from './credentials.js'

/** The management node's default: 1 OCPU (2 threads), 16 GB, written as citc writes flex shapes. */
export const ORACLE_DEFAULTS = {region: 'us-ashburn-1', zone: '1', mgmtShape: 'VM.Standard.E4.Flex.1.16'} as const

const REGION = /^[a-z]+-[a-z]+-\d+$/

/** "VM.Standard.E4.Flex.2.32" → {shape: "VM.Standard.E4.Flex", ocpus: 2, memoryGb: 32}; fixed shapes as they are. */
export function splitOracleShape(name: string): {shape: string; ocpus?: number; memoryGb?: number} {
  const m = /^(.*\.Flex)\.(\d+)\.(\d+)$/.exec(name)
  if (!m) return {shape: name}
  return {shape: m[1], ocpus: Number(m[2]), memoryGb: Number(m[3])}
}

export const oracleProvider: CloudProviderSpec<OracleInputs> = {
  name: 'oracle',
  title: 'Oracle Cloud Infrastructure',
  defaults: ORACLE_DEFAULTS,
  variables: [...COMMON_VARIABLES, 'tenancy_ocid', 'compartment_ocid', 'availability_domain', 'mgmt_ocpus', 'mgmt_memory_gb', 'config_file_profile', 'user_ocid', 'fingerprint', 'private_key_path'],
  outputs: [...COMMON_OUTPUTS, 'compartment_id', 'availability_domain', 'ad_number', 'vcn_id', 'subnet_id', 'dns_domain'],

  tfvars(inputs) {
    const {shape, ocpus, memoryGb} = splitOracleShape(inputs.mgmtShape ?? ORACLE_DEFAULTS.mgmtShape)
    const vars: Record<string, string | number> = {
      ...commonTfvars(inputs, ORACLE_DEFAULTS),
      mgmt_shape: shape,
      tenancy_ocid: inputs.tenancyOcid,
      compartment_ocid: inputs.compartmentOcid,
      availability_domain: inputs.availabilityDomain,
    }
    if (ocpus !== undefined && memoryGb !== undefined) {
      vars.mgmt_ocpus = ocpus
      vars.mgmt_memory_gb = memoryGb
    }
    if (inputs.configFileProfile) vars.config_file_profile = inputs.configFileProfile
    if (inputs.userOcid) vars.user_ocid = inputs.userOcid
    if (inputs.fingerprint) vars.fingerprint = inputs.fingerprint
    if (inputs.privateKeyPath) vars.private_key_path = inputs.privateKeyPath
    return vars
  },

  check(inputs) {
    const problems: InputProblem[] = []
    if (inputs.region && !REGION.test(inputs.region)) problems.push({where: '--region', message: `"${inputs.region}" is not an OCI region identifier (e.g. uk-london-1)`})
    if (!/^ocid1\.tenancy\./.test(inputs.tenancyOcid)) problems.push({where: '--tenancy', message: 'is not a tenancy OCID (ocid1.tenancy.oc1..…)'})
    if (!/^ocid1\.(compartment|tenancy)\./.test(inputs.compartmentOcid)) problems.push({where: '--compartment', message: 'is not a compartment OCID (ocid1.compartment.oc1..…)'})
    if (![1, 2, 3].includes(inputs.availabilityDomain)) problems.push({where: '--zone', message: `availability domain ${inputs.availabilityDomain} must be 1, 2 or 3`})
    if (inputs.userOcid !== undefined && !/^ocid1\.user\./.test(inputs.userOcid)) problems.push({where: '--user', message: 'is not a user OCID (ocid1.user.oc1..…)'})
    if (inputs.fingerprint !== undefined && !/^([0-9a-f]{2}:){15}[0-9a-f]{2}$/.test(inputs.fingerprint)) {
      problems.push({where: '--fingerprint', message: 'must look like 12:34:…:ef (16 hex pairs)'})
    }
    const explicit = [inputs.userOcid, inputs.fingerprint, inputs.privateKeyPath].filter((v) => v !== undefined).length
    if (explicit > 0 && explicit < 3) problems.push({where: '--user/--fingerprint/--key-file', message: 'give all three, or a profile of ~/.oci/config'})
    if (inputs.mgmtShape !== undefined && /\.Flex$/.test(inputs.mgmtShape)) {
      problems.push({where: '--mgmt-shape', message: `give a flexible shape with its size, e.g. ${inputs.mgmtShape}.1.16 (OCPUs, GB)`})
    }
    if (inputs.imageOs !== undefined && inputs.imageOs !== 'ubuntu-24.04') {
      problems.push({where: '--image-os', message: `${inputs.imageOs} is not offered on Oracle Cloud (no Debian platform image): use ubuntu-24.04`})
    }
    return problems
  },

  discoverCredentials: discoverOracleCredentials,

  // The API key reaches the provider through the tfvars (a profile name or the key's path), never
  // through the environment.
  terraformEnv() {
    return {}
  },
}
