// Google Cloud: everything citc knows about it (templates/terraform/google holds the Terraform).
import {isAbsolute} from 'node:path'

import type {InputProblem} from '../../errors.js'
import {commonTfvars, type CommonCloudInputs, type CredentialSource} from '../cloud-inputs.js'
import {CLOUD_SLURM} from '../cloud-slurm.js'
import {lazySweeper, type CloudModule} from '../module.js'
import {COMMON_OUTPUTS, COMMON_VARIABLES} from '../terraform-io.js'
import {googleNodeConfig, type GoogleNodeConfig} from './node-config.js'

const GOOGLE_DEFAULTS = {region: 'us-central1', zone: 'us-central1-a', mgmtShape: 'e2-standard-2'} as const

/** google's own fields of cluster.yaml's `cloud:` section. */
export interface GoogleSettings {
  /** The project ID. */
  project?: string
  /** A service account key file (GOOGLE_APPLICATION_CREDENTIALS for Terraform). */
  credentialsFile?: string
}

export interface GoogleInputs extends CommonCloudInputs {
  provider: 'google'
  project: string
  /** e.g. europe-west2-b */
  zone: string
}

const PROJECT = /^([a-z0-9.-]+:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$/
const REGION = /^[a-z]+-[a-z]+\d+$/
const ZONE = /^[a-z]+-[a-z]+\d+-[a-z]$/

/** Variables that select a credential; any one of them set makes the provider ignore ADC. */
const CREDENTIAL_VARIABLES = ['GOOGLE_CREDENTIALS', 'GOOGLE_CLOUD_KEYFILE_JSON', 'GCLOUD_KEYFILE_JSON', 'GOOGLE_APPLICATION_CREDENTIALS'] as const

export const googleModule: CloudModule<'google', GoogleSettings, GoogleInputs, GoogleNodeConfig> = {
  name: 'google',
  title: 'Google Cloud',
  shapes: async () => {
    const {googleCatalogue} = await import('./shapes.js')
    return () => googleCatalogue
  },
  availabilityDomains: false,
  managementNode: 'cloud-vm',
  slurm: CLOUD_SLURM,
  nodeConfig: googleNodeConfig,
  nodeDriver: async () => (await import('./driver.js')).googleDriver,
  imageBuilder: async () => (await import('./image-builder.js')).googleImageBuilder,

  cloud: {
    defaults: GOOGLE_DEFAULTS,
    settings: (z) => ({
      project: z.string().min(1).optional(),
      credentialsFile: z.string().min(1).refine((p) => isAbsolute(p), 'must be an absolute path').optional(),
    }),
    flags: {
      project: {kind: 'string', description: 'the project ID', recorded: (c) => c.project},
      credentials: {
        kind: 'string',
        description: "a service account key file (default: GOOGLE_APPLICATION_CREDENTIALS or gcloud's application default credentials)",
        recorded: (c) => c.credentialsFile,
      },
    },

    discoverCredentials: async (ctx) => (await import('./credentials.js')).discoverGoogleCredentials(ctx),
    credentialSource(settings) {
      const base = {provider: 'google' as const, label: '', isDefault: true}
      if (settings.credentialsFile) return {...base, id: `file:${settings.credentialsFile}`, kind: 'key-file', file: settings.credentialsFile}
      if (settings.credentials === 'gcloud-adc') return {...base, id: 'gcloud-adc', kind: 'gcloud-adc'}
      return undefined
    },
    terraformEnv(source: CredentialSource | undefined) {
      if (!source || source.kind === 'environment') return {}
      const cleared: Record<string, string | undefined> = Object.fromEntries(CREDENTIAL_VARIABLES.map((v) => [v, undefined]))
      if (source.kind === 'key-file' && source.file) return {...cleared, GOOGLE_APPLICATION_CREDENTIALS: source.file}
      // gcloud's application default credentials file: found by the provider once nothing else is set.
      return cleared
    },

    async credentialsFromFlags(q, found) {
      const keyFile = q.given('credentials')
      if (!keyFile) return undefined
      const file = q.path('credentials', keyFile)
      return found.find((s) => s.file === file) ?? (await import('./credentials.js')).googleKeySource(file, q.ctx)
    },
    zoneQuestion: 'Zone:',
    /** Google's zones are not all "-a": take the source's, the default's, or "-b" (offered in every region). */
    defaultZone(region, source) {
      if (source?.zone && source.zone.startsWith(region)) return source.zone
      return region === GOOGLE_DEFAULTS.region ? GOOGLE_DEFAULTS.zone : `${region}-b`
    },
    async askSettings(q, source) {
      const settings: GoogleSettings = {}
      if (source?.kind === 'key-file' && source.file) settings.credentialsFile = source.file
      let project = q.given('project') ?? source?.project
      if (!q.given('project') && q.ask) project = await q.prompts.input({message: 'Google Cloud project ID:', default: project, required: true})
      if (!project) q.required('project', 'the Google Cloud project')
      settings.project = project
      return settings
    },
    /**
     * The node programs' permission is fenced by instance name prefix (`<id>-`, templates/terraform/
     * google/iam.tf: IAM conditions have no regular expressions). Two clusters of one project where one
     * name is the other's plus "-…" (lab, lab-x) would reach each other's nodes: refused, as far as this
     * machine knows the project's clusters.
     */
    nameClash(name, settings, clusters) {
      for (const c of clusters) {
        if (c.provider !== 'google' || (c.cloud as GoogleSettings | undefined)?.project !== settings.project || c.name === name) continue
        if (name.startsWith(`${c.name}-`) || c.name.startsWith(`${name}-`)) {
          return `clashes with cluster ${c.name} in project ${settings.project}: each cluster's node programs may manage instances named <cluster>-…, so one name must not be the other's followed by "-"; choose another name`
        }
      }
      return undefined
    },

    variables: [...COMMON_VARIABLES, 'project', 'zone', 'mgmt_arch'],
    outputs: [...COMMON_OUTPUTS, 'project', 'zone', 'network', 'subnetwork', 'compute_network_tag', 'node_service_account'],
    inputs: (common, settings) => ({...common, provider: 'google', zone: settings.zone ?? '', project: settings.project ?? ''}),
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
    tfvars(inputs, shapes) {
      const shape = inputs.mgmtShape ?? GOOGLE_DEFAULTS.mgmtShape
      return {
        ...commonTfvars(inputs, GOOGLE_DEFAULTS),
        project: inputs.project,
        zone: inputs.zone,
        mgmt_arch: inputs.mgmtArch ?? shapes.get(shape)?.arch ?? 'x86_64',
      }
    },
    errorHints: {
      credentials: 'run `gcloud auth application-default login` (or set GOOGLE_APPLICATION_CREDENTIALS to a valid key file)',
      quota: 'request more quota (IAM & Admin > Quotas) or choose a smaller machine type or another region',
      capacityPlace: 'zone (--zone)',
      shapePlace: 'region or zone',
      apiDisabled: 'enable the APIs (`gcloud services enable compute.googleapis.com file.googleapis.com --project <project>`)',
    },

    packerPlugin: 'googlecompute',
    sweepTool: {tool: 'gcloud', install: 'install the Google Cloud CLI (https://cloud.google.com/sdk/docs/install)'},
    sweeper(ctx, settings) {
      return lazySweeper('gcloud', async () => {
        const {googleSweeper, googleToolContext} = await import('./sweep.js')
        return googleSweeper(await googleToolContext(ctx, settings))
      })
    },
  },
}
