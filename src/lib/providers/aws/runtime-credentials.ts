// The credentials a node program signs its EC2 calls with, found as the SDK's default chain found
// them on a management node, minus the links that node never has: static keys from the environment
// (AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN), else the instance profile's
// temporary keys through IMDSv2 (the EC2 User Guide, "Retrieve security credentials from instance
// metadata": PUT /latest/api/token, then GET …/iam/security-credentials/ and …/<role>). No profile
// files, SSO, web identity or container credentials: citc writes none of them on the management node,
// whose role (templates/terraform/aws/iam.tf) is the identity node programs act with.
import {httpExchange, type HttpLimits} from '../http-exchange.js'
import type {AwsCredentials} from './sigv4.js'

const CREDS_PATH = '/latest/meta-data/iam/security-credentials/'
/** The token's life asked for (the SDK's value); the process ends long before. */
const TOKEN_TTL_S = '21600'
/** Each IMDS request's limit (the SDK's 1 s): off EC2 the address does not answer at all. */
const IMDS_LIMITS: HttpLimits = {connectTimeoutMs: 1_000, requestTimeoutMs: 1_000}
/** Temporary keys are fetched again this long before they expire. */
const REFRESH_MS = 5 * 60_000

/** An error saying why no credentials were found (failures.ts: no table has its name: a config failure). */
const noCredentials = (message: string) => Object.assign(new Error(message), {name: 'CredentialsProviderError'})

/**
 * Where IMDS is: AWS_EC2_METADATA_SERVICE_ENDPOINT (which a stand-in's metadata endpoint requires,
 * metadata-env.ts), else EC2's link-local address (IPv6 if AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE says so).
 */
export function imdsEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AWS_EC2_METADATA_SERVICE_ENDPOINT) return env.AWS_EC2_METADATA_SERVICE_ENDPOINT
  return env.AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE?.toLowerCase() === 'ipv6' ? 'http://[fd00:ec2::254]' : 'http://169.254.169.254'
}

/** A function giving credentials, fetched once and again only near their expiry. */
export function runtimeCredentials(env: NodeJS.ProcessEnv = process.env): () => Promise<AwsCredentials> {
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    const fixed: AwsCredentials = {accessKeyId: env.AWS_ACCESS_KEY_ID, secretAccessKey: env.AWS_SECRET_ACCESS_KEY, ...(env.AWS_SESSION_TOKEN ? {sessionToken: env.AWS_SESSION_TOKEN} : {})}
    return async () => fixed
  }
  let current: Promise<AwsCredentials> | undefined
  return async () => {
    const held = current && (await current.catch(() => undefined))
    if (held && (!held.expiration || held.expiration.getTime() - Date.now() > REFRESH_MS)) return held
    current = fromImds(env)
    return current
  }
}

async function fromImds(env: NodeJS.ProcessEnv): Promise<AwsCredentials> {
  if (env.AWS_EC2_METADATA_DISABLED?.toLowerCase() === 'true') {
    throw noCredentials('no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set, and AWS_EC2_METADATA_DISABLED=true rules out the instance profile. Unset AWS_EC2_METADATA_DISABLED on the management node.')
  }
  const base = imdsEndpoint(env).replace(/\/+$/, '')
  const call = async (method: string, path: string, headers: Record<string, string>) => {
    const url = new URL(base + path)
    const a = await httpExchange(url, {method, headers, ...IMDS_LIMITS})
    if (a.status === 200) return a.body
    // 404 on the role list: the machine has no instance profile. Anything else: IMDS refused.
    const why = a.status === 404 && path === CREDS_PATH ? 'this machine has no instance profile' : `HTTP ${a.status}`
    throw Object.assign(noCredentials(`no AWS credentials from the instance metadata service (${method} ${url.href}: ${why}). On the management node its IAM role (templates/terraform/aws/iam.tf) provides them; check the instance profile is attached.`), {statusCode: a.status})
  }
  const token = await call('PUT', '/latest/api/token', {'x-aws-ec2-metadata-token-ttl-seconds': TOKEN_TTL_S})
  const auth = {'x-aws-ec2-metadata-token': token}
  const role = (await call('GET', CREDS_PATH, auth)).split('\n')[0]!.trim()
  if (!role) throw noCredentials(`no AWS credentials: the instance metadata service at ${base} names no role. Check the management node's instance profile.`)
  const doc = JSON.parse(await call('GET', CREDS_PATH + encodeURIComponent(role), auth)) as Record<string, unknown>
  const s = (k: string) => (typeof doc[k] === 'string' ? (doc[k] as string) : undefined)
  const accessKeyId = s('AccessKeyId')
  const secretAccessKey = s('SecretAccessKey')
  if (!accessKeyId || !secretAccessKey) throw noCredentials(`no AWS credentials: the instance metadata service at ${base} answered for role ${role} without keys (Code ${s('Code') ?? 'none'})`)
  const expiration = s('Expiration') ? new Date(s('Expiration')!) : undefined
  return {accessKeyId, secretAccessKey, ...(s('Token') ? {sessionToken: s('Token')} : {}), ...(expiration && !Number.isNaN(expiration.getTime()) ? {expiration} : {})}
}
