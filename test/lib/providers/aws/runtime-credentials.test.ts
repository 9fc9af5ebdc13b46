// runtime-credentials.ts: keys from the environment, else the instance profile through IMDSv2 (the
// fake IMDS, a TEST DOUBLE: test/doubles/cloud-api/imds.ts, or a one-off server on 127.0.0.1 for the
// answers it does not give), fetched once; and when there are none, an error saying where and what to do,
// classified as failures.ts classifies it (no profile: config; IMDS not answering: transient).
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'

import {afterEach, describe, expect, it} from 'vitest'

import {classifyAwsError} from '../../../../src/lib/providers/aws/failures.js'
import {imdsEndpoint, runtimeCredentials} from '../../../../src/lib/providers/aws/runtime-credentials.js'
import {FAKE_IMDS_CREDENTIALS, startFakeImds} from '../../../doubles/cloud-api/imds.js'
import {listenOnLoopback} from '../../../doubles/cloud-api/listen.js'
import type {RecordedRequest} from '../../../doubles/cloud-api/types.js'

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0)) await close()
})

/** A server on 127.0.0.1 answering with `handle`; closed after the test. */
async function server(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const s = createServer((req, res) => {
    req.resume()
    req.on('end', () => handle(req, res))
  })
  const url = await listenOnLoopback(s)
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        s.closeAllConnections()
        s.close(() => resolve())
      }),
  )
  return url
}

const failure = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e)

describe('runtimeCredentials', () => {
  it('takes both keys (and the session token) from the environment, asking no metadata service', async () => {
    const requests: RecordedRequest[] = []
    const imds = await startFakeImds(requests)
    closers.push(() => imds.close())
    const get = runtimeCredentials({AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'secret', AWS_SESSION_TOKEN: 'tok', AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url})
    expect(await get()).toEqual({accessKeyId: 'AKIDENV', secretAccessKey: 'secret', sessionToken: 'tok'})
    expect(requests).toEqual([])
  })

  it('otherwise fetches the instance profile through IMDSv2 (token, role, keys) once, with the token on each read', async () => {
    const requests: RecordedRequest[] = []
    const imds = await startFakeImds(requests)
    closers.push(() => imds.close())
    // A key id without its secret is not the environment's credentials (as the SDK's fromEnv holds).
    const get = runtimeCredentials({AWS_ACCESS_KEY_ID: 'AKIDHALF', AWS_EC2_METADATA_SERVICE_ENDPOINT: imds.url})
    const c = await get()
    expect(c).toMatchObject({accessKeyId: FAKE_IMDS_CREDENTIALS.accessKeyId, secretAccessKey: FAKE_IMDS_CREDENTIALS.secretAccessKey, sessionToken: FAKE_IMDS_CREDENTIALS.sessionToken})
    expect(c.expiration!.getTime()).toBeGreaterThan(Date.now() + 5 * 3600_000)
    expect(await get()).toBe(c)
    expect(requests.map((r) => [r.op, r.method, r.status])).toEqual([
      ['imds:token', 'PUT', 200],
      ['imds:role', 'GET', 200],
      ['imds:credentials', 'GET', 200],
    ])
    expect(requests[0]!.headers['x-aws-ec2-metadata-token-ttl-seconds']).toBe('21600')
  })

  it('fetches again when the keys are about to expire', async () => {
    let fetched = 0
    const url = await server((req, res) => {
      if (req.method === 'PUT') return res.end('token')
      if (req.url === '/latest/meta-data/iam/security-credentials/') return res.end('role\n')
      fetched += 1
      res.end(JSON.stringify({Code: 'Success', AccessKeyId: `AKID${fetched}`, SecretAccessKey: 's', Token: 't', Expiration: new Date(Date.now() + 60_000).toISOString()}))
    })
    const get = runtimeCredentials({AWS_EC2_METADATA_SERVICE_ENDPOINT: url})
    expect((await get()).accessKeyId).toBe('AKID1')
    expect((await get()).accessKeyId).toBe('AKID2')
  })

  it('a machine without an instance profile: says so and what to check (config, not retried)', async () => {
    const url = await server((req, res) => {
      if (req.method === 'PUT') return res.end('token')
      res.writeHead(404).end()
    })
    const e = await failure(runtimeCredentials({AWS_EC2_METADATA_SERVICE_ENDPOINT: url})())
    expect(e).toMatchObject({name: 'CredentialsProviderError', message: expect.stringMatching(/this machine has no instance profile.*iam\.tf.*instance profile is attached/)})
    expect(classifyAwsError(e)).toMatchObject({class: 'config', code: 'CredentialsProviderError'})
  })

  it('a metadata service that does not answer: a TimeoutError after its 1-s limit (transient: retried)', async () => {
    const url = await server(() => undefined) // never answers
    const e = await failure(runtimeCredentials({AWS_EC2_METADATA_SERVICE_ENDPOINT: url})())
    expect(e).toMatchObject({name: 'TimeoutError', code: 'ETIMEDOUT'})
    expect(classifyAwsError(e)).toMatchObject({class: 'transient'})
  })

  it('AWS_EC2_METADATA_DISABLED=true and no keys: no credentials, and what to change', async () => {
    const e = await failure(runtimeCredentials({AWS_EC2_METADATA_DISABLED: 'true'})())
    expect(e).toMatchObject({name: 'CredentialsProviderError', message: expect.stringMatching(/Unset AWS_EC2_METADATA_DISABLED/)})
  })
})

describe('imdsEndpoint', () => {
  it("is the environment's, else EC2's link-local address (IPv6 when the mode says so)", () => {
    expect(imdsEndpoint({AWS_EC2_METADATA_SERVICE_ENDPOINT: 'http://127.0.0.1:9'})).toBe('http://127.0.0.1:9')
    expect(imdsEndpoint({})).toBe('http://169.254.169.254')
    expect(imdsEndpoint({AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE: 'IPv6'})).toBe('http://[fd00:ec2::254]')
  })
})
