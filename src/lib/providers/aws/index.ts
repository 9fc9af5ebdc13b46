// AWS: defaults, the variables citc writes for templates/terraform/aws, the outputs it reads, and the
// credentials Terraform will use. (Uses cloud.ts's values only inside functions: see cloudProvider.)
import type {InputProblem} from '../../errors.js'
import {awsCatalogue} from '../../shapes/aws.js'
import {commonTfvars, type AwsInputs, type CloudProviderSpec, type CredentialSource} from '../cloud.js'
import {COMMON_OUTPUTS, COMMON_VARIABLES} from '../terraform-io.js'
import {discoverAwsCredentials} from './credentials.js'

export const AWS_DEFAULTS = {region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium'} as const

const REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/
const ZONE = /^[a-z]{2}(-[a-z]+)+-\d+[a-z]$/

export const awsProvider: CloudProviderSpec<AwsInputs> = {
  name: 'aws',
  title: 'Amazon Web Services',
  defaults: AWS_DEFAULTS,
  variables: [...COMMON_VARIABLES, 'zone', 'mgmt_arch'],
  outputs: [...COMMON_OUTPUTS, 'zone', 'vpc_id', 'subnet_id', 'compute_security_group_id', 'node_role_arn'],

  tfvars(inputs) {
    const shape = inputs.mgmtShape ?? AWS_DEFAULTS.mgmtShape
    return {
      ...commonTfvars(inputs, AWS_DEFAULTS),
      zone: inputs.zone,
      mgmt_arch: inputs.mgmtArch ?? awsCatalogue.get(shape)?.arch ?? 'x86_64',
    }
  },

  check(inputs) {
    const problems: InputProblem[] = []
    if (inputs.region && !REGION.test(inputs.region)) problems.push({where: '--region', message: `"${inputs.region}" is not an AWS region (e.g. eu-west-2)`})
    if (!ZONE.test(inputs.zone)) problems.push({where: '--zone', message: `"${inputs.zone}" is not an availability zone (e.g. eu-west-2a)`})
    else if (REGION.test(inputs.region) && !inputs.zone.startsWith(inputs.region)) {
      problems.push({where: '--zone', message: `${inputs.zone} is not in region ${inputs.region}`})
    }
    return problems
  },

  discoverCredentials: discoverAwsCredentials,

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
}
