// Google Cloud: defaults, the variables citc writes for templates/terraform/google, the outputs it
// reads, and the credentials Terraform will use. (Uses cloud.ts's values only inside functions.)
import type {InputProblem} from '../../errors.js'
import {googleCatalogue} from '../../shapes/google.js'
import {commonTfvars, type CloudProviderSpec, type CredentialSource, type GoogleInputs} from '../cloud.js'
import {COMMON_OUTPUTS, COMMON_VARIABLES} from '../terraform-io.js'
import {discoverGoogleCredentials} from './credentials.js'

export const GOOGLE_DEFAULTS = {region: 'us-central1', zone: 'us-central1-a', mgmtShape: 'e2-standard-2'} as const

const PROJECT = /^([a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/
const REGION = /^[a-z]+-[a-z]+\d+$/
const ZONE = /^[a-z]+-[a-z]+\d+-[a-z]$/

/** Variables that select a credential; any one of them set makes the provider ignore ADC. */
const CREDENTIAL_VARIABLES = ['GOOGLE_CREDENTIALS', 'GOOGLE_CLOUD_KEYFILE_JSON', 'GCLOUD_KEYFILE_JSON', 'GOOGLE_APPLICATION_CREDENTIALS'] as const

export const googleProvider: CloudProviderSpec<GoogleInputs> = {
  name: 'google',
  title: 'Google Cloud',
  defaults: GOOGLE_DEFAULTS,
  variables: [...COMMON_VARIABLES, 'project', 'zone', 'mgmt_arch'],
  outputs: [...COMMON_OUTPUTS, 'project', 'zone', 'network', 'subnetwork', 'compute_network_tag', 'node_service_account'],

  tfvars(inputs) {
    const shape = inputs.mgmtShape ?? GOOGLE_DEFAULTS.mgmtShape
    return {
      ...commonTfvars(inputs, GOOGLE_DEFAULTS),
      project: inputs.project,
      zone: inputs.zone,
      mgmt_arch: inputs.mgmtArch ?? googleCatalogue.get(shape)?.arch ?? 'x86_64',
    }
  },

  check(inputs) {
    const problems: InputProblem[] = []
    if (!PROJECT.test(inputs.project)) problems.push({where: '--project', message: `"${inputs.project}" is not a project ID (6 to 30 of a-z, 0-9 and "-")`})
    if (inputs.region && !REGION.test(inputs.region)) problems.push({where: '--region', message: `"${inputs.region}" is not a Google Cloud region (e.g. europe-west2)`})
    if (!ZONE.test(inputs.zone)) problems.push({where: '--zone', message: `"${inputs.zone}" is not a zone (e.g. europe-west2-b)`})
    else if (REGION.test(inputs.region) && !inputs.zone.startsWith(`${inputs.region}-`)) {
      problems.push({where: '--zone', message: `${inputs.zone} is not in region ${inputs.region}`})
    }
    if (inputs.imageOs !== undefined && inputs.imageOs !== 'ubuntu-24.04') {
      problems.push({where: '--image-os', message: `${inputs.imageOs} is not offered on Google Cloud (its Debian images have no cloud-init to hand over the host key): use ubuntu-24.04`})
    }
    return problems
  },

  discoverCredentials: discoverGoogleCredentials,

  terraformEnv(source: CredentialSource | undefined) {
    if (!source || source.kind === 'environment') return {}
    const cleared: Record<string, string | undefined> = Object.fromEntries(CREDENTIAL_VARIABLES.map((v) => [v, undefined]))
    if (source.kind === 'key-file' && source.file) return {...cleared, GOOGLE_APPLICATION_CREDENTIALS: source.file}
    // gcloud's application default credentials file: found by the provider once nothing else is set.
    return cleared
  },
}
