// TEST DOUBLE of Compute Engine's metadata server — not Google's. google-auth-library finds the
// machine's attached service account through it (GCE_METADATA_HOST points the real library here), so
// the driver's tests run the production credential chain: detect GCE, fetch a token, send it as Bearer.
// Only what that chain asks: the instance ping, the project id, the default service account's token.
// Like the real server it answers only requests carrying `Metadata-Flavor: Google` and marks every
// answer with the same header (the library rejects answers without it). Listens on 127.0.0.1 only.
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import {listenOnLoopback} from './listen.js'

export interface FakeMetadata {
  /** http://127.0.0.1:PORT (what a stand-in's endpoints.metadata is set to: src/lib/stand-in.ts). */
  url: string
  /** Every access token handed out, in order: the fake Compute API accepts only these. */
  tokens: string[]
  /** Requests as received (path with query, and whether the flavor header was there). */
  requests: Array<{path: string; flavor: boolean; status: number}>
  close(): Promise<void>
}

export interface FakeMetadataOptions {
  project?: string
  /** Seconds the tokens say they live (the library refreshes shortly before). */
  expiresIn?: number
}

export async function startFakeMetadata(options: FakeMetadataOptions = {}): Promise<FakeMetadata> {
  const project = options.project ?? 'citc-test-project'
  const tokens: string[] = []
  const requests: FakeMetadata['requests'] = []
  const BASE = '/computeMetadata/v1/'

  function answer(res: ServerResponse, status: number, body: string, type = 'application/text') {
    res.writeHead(status, {'Metadata-Flavor': 'Google', 'Content-Type': type})
    res.end(body)
  }

  function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://metadata')
    const flavor = req.headers['metadata-flavor'] === 'Google'
    const path = url.pathname
    let status = 200
    if (!flavor) {
      status = 403
      answer(res, status, 'Missing required header: "Metadata-Flavor": "Google"')
    } else if (req.method !== 'GET' || !path.startsWith(BASE)) {
      status = 404
      answer(res, status, 'not found')
    } else {
      const key = path.slice(BASE.length).replace(/\/$/, '')
      if (key === 'instance') answer(res, status, 'attributes/\nhostname\nid\nservice-accounts/\nzone\n')
      else if (key === 'project/project-id') answer(res, status, project)
      else if (key === 'instance/service-accounts/default/token') {
        const token = `gce-token-${tokens.length + 1}`
        tokens.push(token)
        answer(res, status, JSON.stringify({access_token: token, expires_in: options.expiresIn ?? 3599, token_type: 'Bearer'}), 'application/json')
      } else {
        status = 404
        answer(res, status, 'not found')
      }
    }
    requests.push({path: `${path}${url.search}`, flavor, status})
  }

  const server = createServer(handle)
  const url = await listenOnLoopback(server)
  return {
    url,
    tokens,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
