// TEST DOUBLE of EC2's instance metadata service (IMDSv2), only the part the AWS SDK's default
// credentials chain reads on a machine with an instance profile: PUT /latest/api/token, then the role
// name and its temporary credentials under /latest/meta-data/iam/security-credentials/ (the sequence
// of the EC2 User Guide, "Use the Instance Metadata Service to access instance metadata", as
// @smithy/credential-provider-imds sends it). A test gives this server's URL as its stand-in's
// metadata endpoint and as AWS_EC2_METADATA_SERVICE_ENDPOINT in the environment of the process
// it starts (src/lib/stand-in.ts), so tests exercise the production chain with no keys anywhere. Listens on 127.0.0.1.
import {randomUUID} from 'node:crypto'
import {createServer} from 'node:http'

import type {RecordedRequest} from './types.js'
import {listenOnLoopback} from './listen.js'

export interface FakeImdsCredentials {
  role: string
  accessKeyId: string
  secretAccessKey: string
  sessionToken: string
}

export interface FakeImds {
  url: string
  credentials: FakeImdsCredentials
  close(): Promise<void>
}

export const FAKE_IMDS_CREDENTIALS: FakeImdsCredentials = {
  role: 'citc-demo-mgmt',
  accessKeyId: 'ASIAFAKEIMDS00000001',
  // Not a secret: a made-up value only this fake hands out and only the fake EC2 accepts.
  secretAccessKey: 'fake-imds-secret-key-for-tests-only-000000',
  sessionToken: 'fake-imds-session-token',
}

const CREDS_PATH = '/latest/meta-data/iam/security-credentials/'

/** Start the fake IMDS; every request is pushed to `requests` (op imds:token, imds:role, imds:credentials). */
export async function startFakeImds(requests: RecordedRequest[], credentials = FAKE_IMDS_CREDENTIALS): Promise<FakeImds> {
  const tokens = new Set<string>()
  const server = createServer((req, res) => {
    const record: RecordedRequest = {op: 'imds:other', method: req.method ?? '', path: req.url ?? '', headers: {...req.headers}, body: '', status: 0, at: Date.now()}
    requests.push(record)
    const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
      record.status = status
      res.writeHead(status, {'content-type': 'text/plain', ...headers})
      res.end(body)
    }
    req.resume()
    req.on('end', () => {
      const path = req.url ?? ''
      if (req.method === 'PUT' && path === '/latest/api/token') {
        record.op = 'imds:token'
        const ttl = String(req.headers['x-aws-ec2-metadata-token-ttl-seconds'] ?? '')
        if (!/^\d+$/.test(ttl)) return answer(400, 'missing x-aws-ec2-metadata-token-ttl-seconds')
        const token = randomUUID()
        tokens.add(token)
        return answer(200, token, {'x-aws-ec2-metadata-token-ttl-seconds': ttl})
      }
      // IMDSv2: every read needs a token from the PUT above (as on a node with HttpTokens=required).
      if (!tokens.has(String(req.headers['x-aws-ec2-metadata-token'] ?? ''))) return answer(401, '')
      if (req.method === 'GET' && path === CREDS_PATH) {
        record.op = 'imds:role'
        return answer(200, credentials.role)
      }
      if (req.method === 'GET' && path === CREDS_PATH + credentials.role) {
        record.op = 'imds:credentials'
        const now = Date.now()
        return answer(
          200,
          JSON.stringify({
            Code: 'Success',
            LastUpdated: new Date(now).toISOString(),
            Type: 'AWS-HMAC',
            AccessKeyId: credentials.accessKeyId,
            SecretAccessKey: credentials.secretAccessKey,
            Token: credentials.sessionToken,
            Expiration: new Date(now + 6 * 3600_000).toISOString(),
          }),
          {'content-type': 'application/json'},
        )
      }
      return answer(404, '')
    })
  })
  const url = await listenOnLoopback(server)
  return {
    url,
    credentials,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
