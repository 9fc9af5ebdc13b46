// The AWS node driver: the factory every cloud shares (cloud-driver.ts: the section checked, adopt,
// idempotency tokens, token bucket, retries) over EC2 (ec2-api.ts). Imported lazily by index.ts's
// nodeDriver(), so only node programs that drive AWS load the SDK.
import {cloudDriverFactory} from '../cloud-driver.js'
import {ec2Api} from './ec2-api.js'
import {awsNodeConfig} from './node-config.js'

export const awsDriver = cloudDriverFactory({
  provider: 'aws',
  schema: awsNodeConfig.schema,
  api: (s, {cluster, standIn}) =>
    ec2Api({cluster, region: s.region, zone: s.zone, subnetId: s.subnetId, securityGroupId: s.securityGroupId, endpoints: standIn.endpoints, requestTimeoutMs: standIn.requestTimeoutMs}),
})
