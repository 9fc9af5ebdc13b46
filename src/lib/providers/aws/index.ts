// AWS: everything citc knows about Amazon Web Services (templates/terraform/aws holds the Terraform).
import type {InputProblem} from '../../errors.js'
import {commonTfvars, type CommonCloudInputs, type CredentialSource} from '../cloud-inputs.js'
import {CLOUD_SLURM} from '../cloud-slurm.js'
import {lazySweeper, type CloudModule} from '../module.js'
import {COMMON_OUTPUTS, COMMON_VARIABLES, MGMT_SHARED_FS_OUTPUTS} from '../terraform-io.js'
import {awsNodeConfig, type AwsNodeConfig} from './node-config.js'

const AWS_DEFAULTS = {region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium'} as const

/** aws's own fields of cluster.yaml's `cloud:` section. */
export interface AwsSettings {
  /** The profile of ~/.aws/config Terraform and the sweeper use. */
  profile?: string
}

export interface AwsInputs extends CommonCloudInputs {
  provider: 'aws'
  /** Availability zone, e.g. eu-west-2a. */
  zone: string
}

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/
const ZONE = /^[a-z]{2}(-[a-z]+)+-\d+[a-z]$/

export const awsModule: CloudModule<'aws', AwsSettings, AwsInputs, AwsNodeConfig> = {
  name: 'aws',
  title: 'Amazon Web Services',
  shapes: async () => {
    const {awsCatalogue} = await import('./shapes.js')
    return () => awsCatalogue
  },
  availabilityDomains: false,
  managementNode: 'cloud-vm',
  slurm: CLOUD_SLURM,
  nodeConfig: awsNodeConfig,
  // The SDK and zod load only when a node program drives AWS (the node programs import this module on every run).
  nodeDriver: async () => (await import('./driver.js')).awsDriver,
  imageBuilder: async () => (await import('./image-builder.js')).awsImageBuilder,

  cloud: {
    defaults: AWS_DEFAULTS,
    settings: (z) => ({profile: z.string().min(1).optional()}),
    flags: {
      profile: {kind: 'string', description: 'a profile of ~/.aws/config', recorded: (c) => c.profile},
    },

    discoverCredentials: async (ctx) => (await import('./credentials.js')).discoverAwsCredentials(ctx),
    credentialSource(settings) {
      return settings.profile ? {provider: 'aws', id: `profile:${settings.profile}`, kind: 'profile', profile: settings.profile, label: '', isDefault: true} : undefined
    },
    terraformEnv(source: CredentialSource | undefined) {
      if (source?.kind !== 'profile' || !source.profile) return {}
      // A profile was chosen: keys in the environment would take precedence over it, so they go.
      return {
        AWS_PROFILE: source.profile,
        AWS_DEFAULT_PROFILE: undefined,
        AWS_ACCESS_KEY_ID: undefined,
        AWS_SECRET_ACCESS_KEY: undefined,
        AWS_SESSION_TOKEN: undefined,
      }
    },

    async credentialsFromFlags(q, found) {
      const profile = q.given('profile')
      if (!profile) return undefined
      return (
        found.find((s) => s.profile === profile) ?? {
          provider: 'aws',
          id: `profile:${profile}`,
          label: `AWS profile ${profile}`,
          kind: 'profile',
          profile,
          isDefault: true,
          problem: 'not found in ~/.aws/credentials or ~/.aws/config',
        }
      )
    },
    zoneQuestion: 'Zone:',
    defaultZone(region, source) {
      if (source?.zone && source.zone.startsWith(region)) return source.zone
      return region === AWS_DEFAULTS.region ? AWS_DEFAULTS.zone : `${region}a`
    },
    async askSettings(_q, source) {
      return source?.kind === 'profile' ? {profile: source.profile} : {}
    },

    variables: [...COMMON_VARIABLES, 'zone', 'mgmt_arch'],
    outputs: [...COMMON_OUTPUTS, 'zone', 'vpc_id', 'subnet_id', 'compute_security_group_id', 'node_role_arn', ...MGMT_SHARED_FS_OUTPUTS],
    inputs: (common, settings) => ({...common, provider: 'aws', zone: settings.zone ?? ''}),
    check(inputs) {
      const problems: InputProblem[] = []
      if (inputs.region && !REGION.test(inputs.region)) problems.push({where: '--region', message: `"${inputs.region}" is not an AWS region (e.g. eu-west-2)`})
      if (!ZONE.test(inputs.zone)) problems.push({where: '--zone', message: `"${inputs.zone}" is not an availability zone (e.g. eu-west-2a)`})
      else if (REGION.test(inputs.region) && !inputs.zone.startsWith(inputs.region)) {
        problems.push({where: '--zone', message: `${inputs.zone} is not in region ${inputs.region}`})
      }
      return problems
    },
    tfvars(inputs, shapes) {
      const shape = inputs.mgmtShape ?? AWS_DEFAULTS.mgmtShape
      return {
        ...commonTfvars(inputs, AWS_DEFAULTS),
        zone: inputs.zone,
        mgmt_arch: inputs.mgmtArch ?? shapes.get(shape)?.arch ?? 'x86_64',
      }
    },
    errorHints: {
      credentials: 'refresh the AWS credentials (`aws sso login --profile <profile>`, or new access keys in ~/.aws/credentials or the environment)',
      quota: 'request a higher limit (Service Quotas console) or choose a smaller shape or another region',
      capacityPlace: 'zone (--zone)',
      shapePlace: 'region or zone',
    },

    packerPlugin: 'amazon',
    sweepTool: {tool: 'aws', install: 'install the AWS CLI (https://docs.aws.amazon.com/cli/latest/userguide/getting-started-install.html)'},
    sweeper: (ctx) => lazySweeper('aws', async () => (await import('./sweep.js')).awsSweeper(ctx)),
  },
}
