// Oracle Cloud Infrastructure: everything citc knows about it (templates/terraform/oracle holds the
// Terraform). Its nodes are placed in numbered availability domains.
import {isAbsolute} from 'node:path'

import type {InputProblem} from '../../errors.js'
import {commonTfvars, type CommonCloudInputs} from '../cloud-inputs.js'
import {CLOUD_SLURM} from '../cloud-slurm.js'
import {lazySweeper, type CloudModule} from '../module.js'
import {COMMON_OUTPUTS, COMMON_VARIABLES} from '../terraform-io.js'
import {oracleNodeConfig, type OracleNodeConfig} from './node-config.js'
import {splitOracleShape} from './shape-name.js'

export {splitOracleShape} from './shape-name.js'

/** The management node's default: 1 OCPU (2 threads), 16 GB, written as citc writes flex shapes. */
const ORACLE_DEFAULTS = {region: 'us-ashburn-1', zone: '1', mgmtShape: 'VM.Standard.E4.Flex.1.16'} as const

/** oracle's own fields of cluster.yaml's `cloud:` section (the zone is the availability domain number). */
export interface OracleSettings {
  /** A profile of ~/.oci/config; or else the three key fields below. */
  profile?: string
  tenancyOcid?: string
  compartmentOcid?: string
  userOcid?: string
  fingerprint?: string
  privateKeyPath?: string
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

const REGION = /^[a-z]+-[a-z]+-\d+$/


export const oracleModule: CloudModule<'oracle', OracleSettings, OracleInputs, OracleNodeConfig> = {
  name: 'oracle',
  title: 'Oracle Cloud Infrastructure',
  shapes: async () => {
    const {oracleCatalogue} = await import('./shapes.js')
    return () => oracleCatalogue
  },
  // A region has at most three; limits.yaml numbers them 1-3 (as --zone does).
  availabilityDomains: [1, 2, 3],
  managementNode: 'cloud-vm',
  slurm: CLOUD_SLURM,
  nodeConfig: oracleNodeConfig,
  // The driver only when a node program asks for it; it loads the SDK (oci-common) only for the
  // instance-principal handshake, when it has no kept session, and starts the session key then
  // (oci-api.ts, instance-principal.ts, session-key.ts).
  nodeDriver: async () => (await import('./driver.js')).oracleDriver,
  imageBuilder: async () => (await import('./image-builder.js')).oracleImageBuilder,

  cloud: {
    defaults: ORACLE_DEFAULTS,
    settings: (z) => {
      const text = () => z.string().min(1).optional()
      return {
        profile: text(),
        tenancyOcid: text(),
        compartmentOcid: text(),
        userOcid: text(),
        fingerprint: text(),
        privateKeyPath: z.string().min(1).refine((p) => isAbsolute(p), 'must be an absolute path').optional(),
      }
    },
    flags: {
      profile: {kind: 'string', description: 'a profile of ~/.oci/config', recorded: (c) => c.profile},
      tenancy: {kind: 'string', description: 'the tenancy OCID (default: from the ~/.oci/config profile)', recorded: (c) => c.tenancyOcid},
      compartment: {kind: 'string', description: 'the compartment OCID (default: the root compartment)', recorded: (c) => c.compartmentOcid},
      user: {kind: 'string', description: "the API key's user OCID (with --fingerprint and --key-file, instead of a profile)", recorded: (c) => c.userOcid},
      fingerprint: {kind: 'string', description: "the API key's fingerprint", recorded: (c) => c.fingerprint},
      'key-file': {kind: 'string', description: "the API key's private key file", recorded: (c) => c.privateKeyPath},
    },

    discoverCredentials: async (ctx) => (await import('./credentials.js')).discoverOracleCredentials(ctx),
    credentialSource: () => undefined,
    // The API key reaches the provider through the tfvars (a profile name or the key's path), never
    // through the environment.
    terraformEnv: () => ({}),

    async credentialsFromFlags(q, found) {
      const profile = q.given('profile')
      if (profile) {
        const source = found.find((s) => s.profile === profile)
        if (!source) throw q.invalid('profile', `there is no profile ${profile} in ~/.oci/config`)
        return source
      }
      return q.given('user') ? null : undefined // the API key's fields are given one by one
    },
    zoneQuestion: 'Availability domain (1, 2 or 3):',
    defaultZone: () => ORACLE_DEFAULTS.zone,
    async askSettings(q, source) {
      const settings: OracleSettings = {}
      if (source) {
        const {oracleCredentialInputs} = await import('./credentials.js')
        const fromProfile = oracleCredentialInputs(source, q.ctx)
        settings.tenancyOcid = fromProfile.tenancyOcid || undefined
        if (fromProfile.configFileProfile) settings.profile = fromProfile.configFileProfile
        else {
          settings.userOcid = fromProfile.userOcid
          settings.fingerprint = fromProfile.fingerprint
          settings.privateKeyPath = fromProfile.privateKeyPath
        }
      }
      const user = q.given('user')
      const fingerprint = q.given('fingerprint')
      const keyPath = q.given('key-file')
      if (user !== undefined) settings.userOcid = user
      if (fingerprint !== undefined) settings.fingerprint = fingerprint
      if (keyPath !== undefined) settings.privateKeyPath = q.path('key-file', keyPath)
      settings.tenancyOcid = q.given('tenancy') ?? settings.tenancyOcid
      if (!settings.tenancyOcid && q.ask) settings.tenancyOcid = await q.prompts.input({message: 'Tenancy OCID:', required: true})
      if (!settings.tenancyOcid) q.required('tenancy', 'the tenancy OCID (or --profile, a profile of ~/.oci/config)')
      let compartment = q.given('compartment')
      if (!compartment && q.ask) compartment = await q.prompts.input({message: 'Compartment OCID (default: the root compartment):', default: settings.tenancyOcid})
      if (!compartment) {
        q.io.note(
          "Compartment: the tenancy's root compartment (pass --compartment to use another). OCI policies cannot be limited by freeform tag, " +
            "so the management node's node programs may manage every instance in the compartment: a compartment of the cluster's own is the safer choice.",
        )
      }
      settings.compartmentOcid = compartment ?? settings.tenancyOcid
      return settings
    },

    variables: [...COMMON_VARIABLES, 'tenancy_ocid', 'compartment_ocid', 'availability_domain', 'mgmt_ocpus', 'mgmt_memory_gb', 'config_file_profile', 'user_ocid', 'fingerprint', 'private_key_path'],
    outputs: [...COMMON_OUTPUTS, 'compartment_id', 'availability_domain', 'ad_number', 'vcn_id', 'subnet_id', 'dns_domain'],
    inputs: (common, settings) => ({
      ...common,
      provider: 'oracle',
      tenancyOcid: settings.tenancyOcid ?? '',
      compartmentOcid: settings.compartmentOcid ?? settings.tenancyOcid ?? '',
      availabilityDomain: Number(settings.zone ?? '1'),
      configFileProfile: settings.profile,
      userOcid: settings.userOcid,
      fingerprint: settings.fingerprint,
      privateKeyPath: settings.privateKeyPath,
    }),
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
    errorHints: {
      credentials: 'check the API key of the profile in ~/.oci/config (user, fingerprint, key_file, tenancy) and that the key is uploaded to the user',
      quota: 'request a service limit increase (Governance > Limits) or choose another shape or availability domain',
      capacityPlace: 'availability domain (--zone)',
      shapePlace: 'region',
    },

    packerPlugin: 'oracle',
    sweepTool: {tool: 'oci', install: 'install the OCI CLI (https://docs.oracle.com/iaas/Content/API/SDKDocs/cliinstall.htm)'},
    sweeper(ctx, settings) {
      return lazySweeper('oci', async () => {
        const {oracleSweeper, oracleToolContext} = await import('./sweep.js')
        return oracleSweeper(oracleToolContext(ctx, settings))
      })
    },
  },
}
