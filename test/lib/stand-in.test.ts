// The stand-in (src/lib/stand-in.ts): a file a test gives with --stand-in, read strictly (a typo must
// not send a test to the real cloud), paths relative to the file; the metadata endpoint the AWS and
// Google SDKs can only read from the environment is required there.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {requireMetadataEnv} from '../../src/lib/providers/metadata-env.js'
import {parseStandIn, readStandInFile} from '../../src/lib/stand-in.js'

const work = mkdtempSync(join(tmpdir(), 'citc-stand-in-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('a stand-in file', () => {
  it('resolves its paths against its own directory', () => {
    const file = join(work, 'stand-in.json')
    writeFileSync(file, JSON.stringify({managementNode: {sshPort: 2222, playbook: 'pb.yml', imageRoot: '/abs'}, clusterJson: 'cluster.json', driver: {endpoints: {api: 'http://127.0.0.1:1/'}, concurrency: 2}, securityRoot: 'node'}))
    expect(readStandInFile(file)).toEqual({
      managementNode: {sshPort: 2222, playbook: join(work, 'pb.yml'), imageRoot: '/abs'},
      clusterJson: join(work, 'cluster.json'),
      driver: {endpoints: {api: 'http://127.0.0.1:1/'}, concurrency: 2},
      securityRoot: join(work, 'node'),
    })
  })

  it('refuses a key it does not know, naming it, as a usage error', () => {
    const e = (() => {
      try {
        parseStandIn(JSON.stringify({driver: {endpoint: {api: 'http://127.0.0.1:1/'}}}), 'x.json')
      } catch (error) {
        return error as {message: string; code?: string}
      }
    })()
    expect(e?.message).toMatch(/^--stand-in x\.json: driver: .*endpoint/)
    expect(() => parseStandIn('{', 'x.json')).toThrow(/--stand-in x\.json is not JSON/)
    expect(() => readStandInFile(join(work, 'missing.json'))).toThrow(/--stand-in .*missing\.json: .*ENOENT/)
  })
})

describe('requireMetadataEnv', () => {
  const standIn = {endpoints: {metadata: 'http://127.0.0.1:4567/'}}
  const host = (url: string) => new URL(url).host

  it('passes when the environment carries the endpoint, or there is none', () => {
    expect(() => requireMetadataEnv(standIn, 'GCE_METADATA_HOST', host, {GCE_METADATA_HOST: '127.0.0.1:4567'})).not.toThrow()
    expect(() => requireMetadataEnv({endpoints: {api: 'http://x/'}}, 'GCE_METADATA_HOST', host, {})).not.toThrow()
    expect(() => requireMetadataEnv(undefined, 'GCE_METADATA_HOST', host, {})).not.toThrow()
  })

  it('refuses a stand-in whose metadata endpoint the environment does not carry (the real service would be asked)', () => {
    expect(() => requireMetadataEnv(standIn, 'GCE_METADATA_HOST', host, {})).toThrow(/needs GCE_METADATA_HOST=127\.0\.0\.1:4567 .*\(it has none\)/)
    expect(() => requireMetadataEnv(standIn, 'GCE_METADATA_HOST', host, {GCE_METADATA_HOST: '169.254.169.254'})).toThrow(/it has GCE_METADATA_HOST=169\.254\.169\.254/)
  })
})
