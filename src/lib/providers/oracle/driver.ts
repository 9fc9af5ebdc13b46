// The Oracle Cloud node driver: the factory every cloud shares (cloud-driver.ts) over OCI's Core API
// (oci-api.ts). Imported only when a node program asks for the driver (index.ts), so the SDK is never
// loaded by commands that do not start machines.
import {join} from 'node:path'

import type {DriverStandIn} from '../../stand-in.js'
import {cloudDriverFactory} from '../cloud-driver.js'
import {ociApi} from './oci-api.js'
import {oracleNodeConfig} from './node-config.js'
import {NODE_PROGRAMS_STATE_DIR} from '../state-dir.js'
import {SESSION_FILE} from './session-cache.js'

/** Where the session is kept between node programs: the stand-in's state directory, the management node's, or (doubles without one) nowhere. */
export function sessionCacheFile(standIn: DriverStandIn): string | undefined {
  if (standIn.stateDir) return join(standIn.stateDir, SESSION_FILE)
  return standIn.endpoints?.api || standIn.endpoints?.metadata ? undefined : join(NODE_PROGRAMS_STATE_DIR, SESSION_FILE)
}

export const oracleDriver = cloudDriverFactory({
  provider: 'oracle',
  schema: oracleNodeConfig.schema,
  api: (section, {cluster, standIn}) =>
    ociApi({cluster, section, endpoints: standIn.endpoints, requestTimeoutMs: standIn.requestTimeoutMs, sessionCache: sessionCacheFile(standIn)}),
})
