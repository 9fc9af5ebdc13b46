// The AWS and Google SDKs read their metadata service's address only from the environment
// (stand-in.ts's header): a stand-in's `endpoints.metadata` is refused unless the environment carries it,
// or the SDK would ask the real one (169.254.169.254). Apart from stand-in.ts, which loads zod: the node
// drivers need only this, and their bundles stay without zod.
import type {DriverStandIn} from '../stand-in.js'

/**
 * The environment variable an SDK reads its metadata service's address from, and the value it must
 * hold for the stand-in's `endpoints.metadata` (citc never sets it itself).
 */
export function requireMetadataEnv(standIn: DriverStandIn | undefined, variable: string, value: (url: string) => string, env: NodeJS.ProcessEnv = process.env): void {
  const url = standIn?.endpoints?.metadata
  if (!url) return
  const want = value(url)
  if (env[variable] !== want) {
    throw new Error(`the stand-in's metadata endpoint ${url} needs ${variable}=${want} in the environment of this process (it has ${env[variable] === undefined ? 'none' : `${variable}=${env[variable]}`})`)
  }
}
