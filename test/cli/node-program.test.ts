// `citc node resume|suspend|fail` as slurmctld runs them (the built CLI), with a cluster.json they
// cannot use: they stop before touching any node, exit 4, and say which file, what is wrong and what
// to do — not a stack trace. And what they load on the way: slurmctld starts one on every power event.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {afterAll, describe, expect, it} from 'vitest'

import {startFakeEc2} from '../doubles/cloud-api/ec2.js'
import {FAKE_OCI_SECTION, startFakeOci} from '../doubles/cloud-api/oci.js'
import {citc, ROOT} from '../helpers/cli.js'

const work = mkdtempSync(join(tmpdir(), 'citc-node-program-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

/** A stand-in file (src/lib/stand-in.ts) naming this cluster.json instead of /etc/citc/cluster.json. */
function standIn(clusterJson: string): string {
  const file = `${clusterJson}.stand-in.json`
  writeFileSync(file, JSON.stringify({clusterJson}))
  return file
}

describe('node programs with an unusable cluster.json', () => {
  it.each([
    ['resume', {name: 'lab', provider: 'local', sharedDir: '/mnt/shared'}, /was written by an older citc \(it has no "version"; this citc reads version 1\) Try: re-run `citc create --name lab`/],
    ['suspend', {version: 1, name: 'lab', provider: 'local'}, /is not what citc writes: sharedDir: .* Try: re-run `citc create --name lab`/],
  ])('%s: exit 4 with the file, the field and the way out', async (program, doc, expected) => {
    const file = join(work, `${program}.json`)
    writeFileSync(file, JSON.stringify(doc))
    const r = await citc(['node', program, 'lab-small-0001', '--stand-in', standIn(file)])
    expect(r.code).toBe(4)
    // oclif wraps the message to the terminal's width, with › margins.
    const said = r.stderr.replace(/[\s›]+/g, ' ')
    expect(said).toContain(`Error: ${file} on this machine `)
    expect(said).toMatch(expected)
  })
})

/**
 * The node programs' bundle (package.json's bundle-node-programs) as esbuild's metafile describes it: its
 * outputs (entry and chunks), which outputs each imports, and which source files each holds.
 */
interface BundleMeta {
  outputs: Record<string, {imports: Array<{path: string; kind: string}>; inputs: Record<string, unknown>}>
}
const bundleMeta = (): BundleMeta => JSON.parse(readFileSync(join(ROOT, 'dist', 'node-programs', 'meta.json'), 'utf8')) as BundleMeta

/**
 * What a node program loaded, as source files: the files the bundle's loaded outputs hold (paths as the
 * metafile gives them: dist/lib/…, node_modules/…) and any module it loaded outside the bundle.
 */
function sourcesLoaded(urls: string[]): string[] {
  const outputs = bundleMeta().outputs
  const root = pathToFileURL(ROOT).href + '/'
  return urls.filter((u) => u.startsWith(root)).flatMap((u) => {
    const rel = u.slice(root.length)
    return outputs[rel] ? Object.keys(outputs[rel].inputs) : [rel]
  })
}

/** The bundle's output holding `input` (a driver's chunk), and every output it imports statically: what loading it loads. */
function chunkWithImports(input: string): {chunk: string; sources: string[]} {
  const outputs = bundleMeta().outputs
  const chunk = Object.keys(outputs).find((o) => input in outputs[o].inputs)
  if (!chunk) throw new Error(`no output of the node programs' bundle holds ${input}`)
  const seen = new Set<string>()
  const visit = (o: string) => {
    if (seen.has(o)) return
    seen.add(o)
    // Built-in modules (node:fs …) are imports too, outside the bundle.
    for (const i of outputs[o].imports) if (i.kind === 'import-statement' && outputs[i.path]) visit(i.path)
  }
  visit(chunk)
  return {chunk, sources: [...seen].flatMap((o) => Object.keys(outputs[o].inputs))}
}

/** NODE_OPTIONS that make node write every module it loads to `loaded` (a module hook, node --import). */
function listLoaded(loaded: string): string {
  const hooks = join(work, 'hooks.mjs')
  writeFileSync(hooks, `import {appendFileSync} from 'node:fs'\nexport async function load(url, context, next) {\n  appendFileSync(${JSON.stringify(loaded)}, url + '\\n')\n  return next(url, context)\n}\n`)
  const register = join(work, 'register.mjs')
  writeFileSync(register, `import {register} from 'node:module'\nregister(${JSON.stringify(pathToFileURL(hooks).href)})\n`)
  return `--import=${pathToFileURL(register).href}`
}

describe('what a node program loads', () => {
  it('reaches cluster.json without the shape catalogues or any Terraform code', async () => {
    // The unusable cluster.json stops it right after its static imports.
    const loaded = join(work, 'loaded.txt')
    const nodeOptions = listLoaded(loaded)
    const file = join(work, 'bad.json')
    writeFileSync(file, JSON.stringify({version: 1, name: 'lab', provider: 'local'}))
    const r = await citc(['node', 'resume', 'lab-small-0001', '--stand-in', standIn(file)], {env: {NODE_OPTIONS: nodeOptions}})
    expect(r.code).toBe(4)
    const urls = readFileSync(loaded, 'utf8').split('\n')
    const dist = pathToFileURL(join(ROOT, 'dist')).href
    const ours = urls.filter((u) => u.startsWith(dist)).map((u) => u.slice(dist.length + 1))
    // bin/run.js's fast path, --stand-in included: the bundle only — no module of dist/lib one by one,
    // and oclif's command index (dist/index.js) never.
    expect(ours).toContain('node-programs/node-programs.js')
    expect(ours.filter((f) => !f.startsWith('node-programs/'))).toEqual([])
    const sources = sourcesLoaded(urls)
    expect(sources).toContain('dist/lib/tasks/node/node-programs.js')
    expect(sources).toContain('dist/lib/cluster/management-contract.js')
    expect(sources.filter((f) => /(^|\/)shapes(\/|\.js$)|^dist\/lib\/providers\/(cloud|catalogues)\.js$|^dist\/lib\/tools\/terraform\.js$/.test(f))).toEqual([])
  })
})

/**
 * A cloud cluster's cluster.json with no slurmctld behind it (nothing listens on port 9: scontrol runs and
 * fails at once, and the program goes on with the names only; a slurm.conf that is missing would make
 * scontrol retry for a minute), and a stand-in naming it and the fake cloud's endpoints.
 */
function cloudProgramFiles(provider: 'aws' | 'oracle', driver: object, endpoints: {api: string; metadata?: string}): {standIn: string; elasticLog: string} {
  const config = join(work, `${provider}.json`)
  const elasticLog = join(work, `elastic-${provider}.log`)
  const confPath = join(work, 'no-slurmctld.conf')
  writeFileSync(confPath, 'ClusterName=lab\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=9\nAuthType=auth/none\nMessageTimeout=1\n')
  writeFileSync(config, JSON.stringify({version: 1, name: 'lab', provider, sharedDir: '/mnt/shared', slurmUser: 'slurm', programsDir: '/usr/local/libexec/citc', confPath, elasticLog, driver}))
  const standIn = join(work, `${provider}.stand-in.json`)
  writeFileSync(standIn, JSON.stringify({clusterJson: config, driver: {endpoints, imagesJson: join(work, 'no-images.json'), stateDir: join(work, `node-programs-${provider}`)}}))
  return {standIn, elasticLog}
}

// slurmctld starts a node program on every power event: what it loads is its start-up time
// (bench/node-cold-start.ts measures it). The parts that cost most and are not needed stay out.
describe("a cloud node program's start", () => {
  it('runs its driver and scontrol without zod (once cluster.json is checked), execa or oclif', async () => {
    const ec2 = await startFakeEc2()
    try {
      const {standIn: file, elasticLog} = cloudProgramFiles(
        'aws',
        {region: 'eu-west-2', mgmtPrivateIp: '10.0.0.2', sharedFs: {host: '10.0.0.3', path: '/export', type: 'nfs', mountOptions: 'defaults'}, zone: 'eu-west-2a', vpcId: 'vpc-1', subnetId: 'subnet-1', securityGroupId: 'sg-1', nodeRoleArn: 'arn:aws:iam::1:role/lab', baseImage: {id: 'ami-1', os: 'debian-12'}},
        {api: ec2.url, metadata: ec2.metadataUrl},
      )
      const run = async (n: number) => {
        const loaded = join(work, `loaded-aws-${n}.txt`)
        const env = {NODE_OPTIONS: listLoaded(loaded), AWS_EC2_METADATA_SERVICE_ENDPOINT: ec2.metadataUrl, AWS_SHARED_CREDENTIALS_FILE: join(work, 'none'), AWS_CONFIG_FILE: join(work, 'none')}
        const r = await citc(['node', 'suspend', `lab-c5-000${n}`, '--stand-in', file], {env})
        expect(r.code, r.stderr).toBe(0)
        expect(readFileSync(elasticLog, 'utf8')).toMatch(new RegExp(`could not read the nodes' features .*\\n.*lab-c5-000${n}: no instance, nothing to stop`))
        return readFileSync(loaded, 'utf8').split('\n')
      }
      // The first run checks cluster.json and the stand-in (zod) and keeps the result; the next do not.
      expect(sourcesLoaded(await run(1)).filter((f) => /(^|\/)node_modules\/zod\//.test(f)).length).toBeGreaterThan(0)
      const urls = await run(2)
      expect(urls).toContain(pathToFileURL(join(ROOT, chunkWithImports('dist/lib/providers/aws/driver.js').chunk)).href)
      const sources = sourcesLoaded(urls)
      expect(sources).toContain('dist/lib/providers/aws/driver.js')
      expect(sources.filter((f) => /(^|\/)node_modules\/(zod|execa|@oclif)\//.test(f))).toEqual([])
    } finally {
      await ec2.close()
    }
  })

  it.each(['aws', 'google', 'oracle'])('%s: its driver\'s chunk of the node programs\' bundle, with what it imports, holds no zod, execa, oclif or other providers\' code', (provider) => {
    const {sources} = chunkWithImports(`dist/lib/providers/${provider}/driver.js`)
    const sdks = {aws: /(^|\/)node_modules\/@aws-sdk\//, google: /(^|\/)node_modules\/google-auth-library\//, oracle: /(^|\/)node_modules\/oci-common\//}
    for (const [name, sdk] of Object.entries(sdks)) if (name !== provider) expect(sources.filter((f) => sdk.test(f)), name).toEqual([])
    for (const name of ['aws', 'google', 'oracle', 'local']) if (name !== provider) expect(sources.filter((f) => f.startsWith(`dist/lib/providers/${name}/`)), name).toEqual([])
    expect(sources.filter((f) => /(^|\/)node_modules\/(zod|execa|@oclif)\//.test(f))).toEqual([])
  })

  it.each(['aws', 'google', 'oracle'])('%s: its driver bundle carries no zod (cluster.json is checked once, when read), execa or other providers\' SDKs', (provider) => {
    const bundle = readFileSync(join(ROOT, 'dist', 'lib', 'providers', provider, 'driver.js'), 'utf8')
    // aws: its own EC2 client (ec2-query.ts); the others' markers are their SDKs' classes.
    const others = {aws: /\bEc2Query\b/, google: /\bGoogleAuth\b/, oracle: /\bInstancePrincipalsAuthenticationDetailsProviderBuilder\b/}
    expect(bundle).toMatch(others[provider as keyof typeof others])
    for (const [name, marker] of Object.entries(others)) if (name !== provider) expect(bundle, name).not.toMatch(marker)
    expect(bundle).not.toMatch(/\$ZodType\b|ZodError/)
    expect(bundle).not.toMatch(/ExecaError/)
  })

  it('aws: its driver bundle carries no AWS SDK (1.3 MB, most of the start: ec2-query.ts makes the three calls), and no other bundle does', () => {
    // Markers a bundle of @aws-sdk/client-ec2 holds: its client and error classes, @smithy's signer, and
    // the module paths esbuild keeps for its CommonJS parts.
    const sdk = /\bEC2Client\b|\bEC2ServiceException\b|\bSignatureV4\b|node_modules\/@(aws-sdk|smithy)\//
    for (const provider of ['aws', 'google', 'oracle']) {
      expect(readFileSync(join(ROOT, 'dist', 'lib', 'providers', provider, 'driver.js'), 'utf8'), provider).not.toMatch(sdk)
    }
    // And what the node programs' bundle loads with the aws driver: no module of the SDK's packages
    // (unanchored: in a worktree whose node_modules is a link, esbuild names them ../<checkout>/node_modules/…).
    const {sources} = chunkWithImports('dist/lib/providers/aws/driver.js')
    expect(sources).toContain('dist/lib/providers/aws/ec2-query.js')
    expect(sources.filter((f) => /node_modules\/@(aws-sdk|smithy|aws-crypto)\//.test(f))).toEqual([])
  })

  it('oracle: its driver bundle carries oci-common but no oci-core (2.4 MB of models and clients: compute-calls.ts makes the four calls)', () => {
    const bundle = readFileSync(join(ROOT, 'dist', 'lib', 'providers', 'oracle', 'driver.js'), 'utf8')
    // esbuild names each bundled module's source in a comment; the classes are oci-core's own names.
    expect(bundle).toMatch(/node_modules\/oci-common\//)
    expect(bundle).not.toMatch(/node_modules\/oci-core\//)
    expect(bundle).not.toMatch(/\b(ComputeClient|LaunchInstanceDetails|VirtualNetworkClient)\b/)
  })

  it('oracle: a run with a kept session token loads no oci-common (the first run, which fetches the token, does)', async () => {
    const oci = await startFakeOci()
    try {
      const {standIn: file, elasticLog} = cloudProgramFiles('oracle', FAKE_OCI_SECTION, {api: oci.url, metadata: oci.metadataUrl})
      const run = async (n: number) => {
        const loaded = join(work, `loaded-oracle-${n}.txt`)
        const r = await citc(['node', 'suspend', `lab-e4-000${n}`, '--stand-in', file], {env: {NODE_OPTIONS: listLoaded(loaded)}})
        expect(r.code, r.stderr).toBe(0)
        expect(readFileSync(elasticLog, 'utf8')).toMatch(new RegExp(`lab-e4-000${n}: no instance, nothing to stop`))
        return readFileSync(loaded, 'utf8').split('\n')
      }
      // The SDK is the handshake's alone (instance-principal.ts): a chunk the driver's chunk imports dynamically.
      // (node_modules may be a link elsewhere, as in a git worktree: esbuild names its real path.)
      const ociCommon = /(^|\/)node_modules\/oci-common\//
      expect(chunkWithImports('dist/lib/providers/oracle/driver.js').sources.filter((f) => ociCommon.test(f))).toEqual([])
      const sdk = (urls: string[]) => sourcesLoaded(urls).filter((f) => ociCommon.test(f) || f === 'dist/lib/providers/oracle/instance-principal.js')
      // The first run: the handshake, with the SDK, and the token kept.
      expect(sdk(await run(1)).length).toBeGreaterThan(0)
      expect(oci.tokensIssued).toBe(1)
      // The next: the kept token, the calls signed with node:crypto, no SDK.
      const urls = await run(2)
      expect(sourcesLoaded(urls)).toContain('dist/lib/providers/oracle/compute-calls.js')
      expect(sdk(urls)).toEqual([])
      expect(oci.tokensIssued).toBe(1)
      expect(oci.requests.filter((r) => r.op === 'ListInstances').map((r) => [r.status, String(r.headers.authorization).slice(0, 34)])).toEqual([
        [200, 'Signature version="1",keyId="ST$ey'],
        [200, 'Signature version="1",keyId="ST$ey'],
      ])
    } finally {
      await oci.close()
    }
  })
})
