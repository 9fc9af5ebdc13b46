// The Oracle Cloud node driver: the factory every cloud shares (cloud-driver.ts) over OCI's Core API
// (oci-api.ts). Imported only when a node program asks for the driver (index.ts), so the SDK is never
// loaded by commands that do not start machines.
import {cloudDriverFactory} from '../cloud-driver.js'
import {ociApi} from './oci-api.js'
import {oracleNodeConfig} from './node-config.js'

export const oracleDriver = cloudDriverFactory({
  provider: 'oracle',
  schema: oracleNodeConfig.schema,
  api: (section, {cluster, standIn}) => ociApi({cluster, section, endpoints: standIn.endpoints, requestTimeoutMs: standIn.requestTimeoutMs}),
})
