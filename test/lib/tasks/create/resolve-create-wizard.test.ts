// The create wizard's logic with scripted answers (Io's prompts), no pseudo-terminal: which questions
// are asked, in which order, with which defaults, and what the answers become. test/cli/wizard.test.ts
// drives the real prompts on a pty end to end.
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {confirmByTyping, confirmOrRefuse} from '../../../../src/lib/io.js'
import {PROVIDER_NAMES} from '../../../../src/lib/providers/registry.js'
import {resolveCloudCreate} from '../../../../src/lib/tasks/create/cloud-wizard.js'
import {resolveLocalCreate} from '../../../../src/lib/tasks/create/local-wizard.js'
import {askProvider} from '../../../../src/lib/tasks/create/resolve-create.js'
import type {AddressSources} from '../../../../src/lib/tasks/create/ssh-cidr.js'
import {scriptedIo, scriptedPrompts} from '../../../doubles/scripted-prompts.js'
import {fakeHomes} from '../../../doubles/home.js'
import {standInGpuRoot, type StandInGpu} from '../../../doubles/nvidia-gpus.js'

const homes = fakeHomes('citc-wizard-')
const {home, root} = homes
afterAll(() => homes.remove())
const dataDir = join(root, 'data')
// This machine's GPUs are a stand-in's (given as create's --stand-in gives it): none, unless a test says
// otherwise (they add questions).
const gpuRoot = (gpus: StandInGpu[]) => standInGpuRoot(gpus, root)
const noGpus = gpuRoot([])
/** Stand-in interfaces for the SSH question (never this machine's), and no echo. */
const addressesOf = (byName: Record<string, string[]>): AddressSources => ({
  interfaces: () => Object.fromEntries(Object.entries(byName).map(([n, as]) => [n, as.map((address) => ({address, family: 'IPv4', internal: false}))])),
  askEcho: async () => undefined,
})

describe('the first question: where the cluster runs', () => {
  it('offers every provider of the registry, local first, and returns the one chosen', async () => {
    const prompts = scriptedPrompts([[/Where should the cluster run/, 'oracle']])
    expect(await askProvider(scriptedIo(prompts))).toBe('oracle')
    expect(prompts.asked[0].choices).toEqual([...PROVIDER_NAMES])
    expect(PROVIDER_NAMES[0]).toBe('local')
  })

  it('asks nothing with --yes or without a terminal: local', async () => {
    const prompts = scriptedPrompts([])
    expect(await askProvider({...scriptedIo(prompts), yes: true})).toBe('local')
    expect(await askProvider({...scriptedIo(prompts), interactive: false})).toBe('local')
    expect(prompts.asked).toEqual([])
  })
})

describe('local: name and node limits', () => {
  it('asks the name, then a count per local shape; zero counts are left out', async () => {
    const prompts = scriptedPrompts([
      [/Cluster name/, 'lab'],
      [/How many local\.small nodes/, 3],
      [/How many local\.medium nodes/, 0],
      [/How many local\.large nodes/, 1],
    ])
    const r = await resolveLocalCreate(scriptedIo(prompts), {resume: false, force: false, gpuRoot: noGpus})
    expect(r).toMatchObject({name: 'lab', limitsText: 'local.small: 3\nlocal.large: 1\n', limitsFile: '(wizard)'})
    expect(prompts.asked.find((q) => /local\.small/.test(q.message))?.default).toBe(4)
    expect(prompts.left()).toEqual([])
  })

  it('with GPUs: the CPU shapes\' counts, then per GPU type one node per GPU (default), one with all, or none', async () => {
    const gpus = gpuRoot([0, 1, 2].map((minor) => ({model: 'NVIDIA GeForce RTX 4090', minor})).concat([{model: 'NVIDIA A100-SXM4-80GB', minor: 3}]))
    const prompts = scriptedPrompts([
      [/Cluster name/, 'ws'],
      [/How many local\.small nodes/, 2],
      [/How many local\.medium nodes/, 0],
      [/How many local\.large nodes/, 0],
      [/This machine has 3 rtx4090 GPU\(s\) \(NVIDIA GeForce RTX 4090: \/dev\/nvidia0, \/dev\/nvidia1, \/dev\/nvidia2\)/, 'all'],
      [/This machine has 1 a100 GPU\(s\)/, (q) => String(q.default)],
    ])
    const r = await resolveLocalCreate(scriptedIo(prompts), {resume: false, force: false, gpuRoot: gpus})
    expect(r.limitsText).toBe('local.small: 2\nlocal.rtx4090x3: 1\nlocal.a100x1: 1\n')
    const [rtx, a100] = prompts.asked.filter((q) => q.kind === 'select')
    expect(rtx).toMatchObject({default: 'per-gpu', choices: ['per-gpu', 'all', 'none']})
    // One GPU: "all" would be the same node, so it is not offered.
    expect(a100).toMatchObject({default: 'per-gpu', choices: ['per-gpu', 'none']})
    expect(prompts.left()).toEqual([])
  })

  it('with GPUs and --gpu-nodes: the flag answers for every type; none leaves them out', async () => {
    const gpus = gpuRoot([{model: 'NVIDIA L40S', minor: 0}, {model: 'NVIDIA L40S', minor: 1}])
    const prompts = scriptedPrompts([
      [/Cluster name/, 'ws'],
      [/How many local\.small nodes/, 1],
      [/How many local\.medium nodes/, 0],
      [/How many local\.large nodes/, 0],
    ])
    const r = await resolveLocalCreate(scriptedIo(prompts), {resume: false, force: false, gpuRoot: gpus, gpuNodes: {value: 'none', from: {where: '--gpu-nodes'}}})
    expect(r.limitsText).toBe('local.small: 1\n')
    expect(prompts.left()).toEqual([])
  })

  it('a name the prompt refuses never gets through', async () => {
    const prompts = scriptedPrompts([[/Cluster name/, 'Bad_Name']])
    await expect(resolveLocalCreate(scriptedIo(prompts), {resume: false, force: false, gpuRoot: noGpus})).rejects.toThrow(/refused/)
  })
})

describe('clouds: credentials, region and zone, shape, name, limits', () => {
  it('aws: picks among the credentials found, then asks region, zone (defaulting to the region\'s "a"), shape, name, limits', async () => {
    const h = home({
      '.aws/credentials': '[default]\naws_access_key_id=AKIAIOSFODNN7EXAMPLE\naws_secret_access_key=x\n[research]\naws_access_key_id=AKIAI44QH8DHBEXAMPLE\naws_secret_access_key=y\n',
      '.aws/config': '[profile research]\nregion = eu-west-2\n',
    })
    const prompts = scriptedPrompts([
      [/Which Amazon Web Services credentials/, 'profile:research'],
      [/^Region:/, undefined], // the profile's region, as offered
      [/^Zone:/, (q) => String(q.default)],
      [/Shape of the management node/, 'c5.large'],
      [/Addresses that may reach SSH/, undefined], // the proposal: this machine's public address
      [/Cluster name/, 'lab'],
      [/Node limits file/, ''],
    ])
    const io = scriptedIo(prompts)
    const r = await resolveCloudCreate(io, 'aws', {providerFlags: {}}, dataDir, undefined, {home: h, env: {}}, addressesOf({eth0: ['81.2.69.20']}))
    expect(prompts.asked.map((q) => q.kind)).toEqual(['select', 'input', 'input', 'input', 'input', 'input', 'input'])
    expect(prompts.asked[0].choices).toEqual(['profile:default', 'profile:research'])
    expect(prompts.asked[1].default).toBe('eu-west-2')
    expect(prompts.asked[2].default).toBe('eu-west-2a')
    expect(r).toMatchObject({provider: 'aws', name: 'lab', limits: undefined})
    expect(r.cloud).toEqual({region: 'eu-west-2', zone: 'eu-west-2a', mgmtShape: 'c5.large', sshCidr: '81.2.69.20/32', credentials: 'profile:research', profile: 'research'})
    expect(io.notes[0]).toMatch(/^Credentials: AWS profile research .* will be used\.$/)
  })

  it('google: the project question defaults to the key file\'s project; flags given are not asked', async () => {
    const h = home({'key.json': JSON.stringify({type: 'service_account', project_id: 'proj-from-key', client_email: 'citc@proj-from-key.iam.gserviceaccount.com'})})
    const prompts = scriptedPrompts([
      [/^Zone:/, 'europe-west2-c'],
      [/Google Cloud project ID/, (q) => String(q.default)],
      [/Shape of the management node/, (q) => String(q.default)],
      [/Addresses that may reach SSH/, '0.0.0.0/0'],
      [/Node limits file/, ''],
    ])
    const r = await resolveCloudCreate(scriptedIo(prompts), 'google', {name: 'lab', region: 'europe-west2', providerFlags: {credentials: join(h, 'key.json')}}, dataDir, undefined, {home: h, env: {}})
    expect(prompts.asked.find((q) => /project/.test(q.message))?.default).toBe('proj-from-key')
    // Nothing learned (no sources given): the whole internet is offered, and the question says so.
    expect(prompts.asked.find((q) => /SSH/.test(q.message))).toMatchObject({default: '0.0.0.0/0', message: expect.stringMatching(/could not learn this machine's public address: 0\.0\.0\.0\/0 is the whole internet/)})
    expect(r.cloud).toEqual({
      region: 'europe-west2',
      zone: 'europe-west2-c',
      mgmtShape: 'e2-standard-2',
      credentials: `file:${join(h, 'key.json')}`,
      credentialsFile: join(h, 'key.json'),
      project: 'proj-from-key',
      sshCidr: '0.0.0.0/0',
    })
  })

  it('oracle: asks for the availability domain, the tenancy and the compartment when no profile gives them', async () => {
    const prompts = scriptedPrompts([
      [/^Availability domain \(1, 2 or 3\):/, '2'],
      [/Tenancy OCID/, 'ocid1.tenancy.oc1..t'],
      [/Compartment OCID/, (q) => String(q.default)], // the root compartment, as offered
      [/Shape of the management node/, 'VM.Standard.E4.Flex.2.32'],
      [/Addresses that may reach SSH/, '203.0.113.0/24'],
      [/Node limits file/, ''],
    ])
    const io = scriptedIo(prompts)
    const r = await resolveCloudCreate(io, 'oracle', {name: 'lab', region: 'uk-london-1', providerFlags: {user: 'ocid1.user.oc1..u', fingerprint: 'aa', 'key-file': '/k.pem'}}, dataDir, undefined, {home: home(), env: {}})
    expect(prompts.asked.find((q) => /Compartment/.test(q.message))?.default).toBe('ocid1.tenancy.oc1..t')
    expect(r.cloud).toMatchObject({zone: '2', tenancyOcid: 'ocid1.tenancy.oc1..t', compartmentOcid: 'ocid1.tenancy.oc1..t', userOcid: 'ocid1.user.oc1..u', privateKeyPath: '/k.pem', mgmtShape: 'VM.Standard.E4.Flex.2.32', sshCidr: '203.0.113.0/24'})
    // The key was given field by field: no "none found" note about credentials.
    expect(io.notes.some((m) => /none found/.test(m))).toBe(false)
  })
})

describe('clouds: who may reach SSH on the management node', () => {
  const oracleFlags = {name: 'lab', region: 'uk-london-1', zone: '2', mgmtShape: 'VM.Standard.E4.Flex.2.32', providerFlags: {tenancy: 'ocid1.tenancy.oc1..t', compartment: 'ocid1.tenancy.oc1..t', user: 'ocid1.user.oc1..u', fingerprint: 'aa', 'key-file': '/k.pem'}}
  const ask = (script: Parameters<typeof scriptedPrompts>[0], given: Partial<typeof oracleFlags> & {sshCidr?: string} = {}, io = scriptedIo(scriptedPrompts(script))) =>
    resolveCloudCreate(io, 'oracle', {...oracleFlags, ...given}, dataDir, undefined, {home: home(), env: {}}, addressesOf({lo: ['127.0.0.1'], eth0: ['10.1.2.3'], eth1: ['81.2.69.20']}))

  it('proposes the first public interface address as /32, naming where it was learned; --ssh-cidr (or --yes) asks nothing', async () => {
    const prompts = scriptedPrompts([[/Addresses that may reach SSH/, (q) => String(q.default)], [/Node limits file/, '']])
    const r = await ask([], {}, scriptedIo(prompts))
    expect(prompts.asked[0].default).toBe('81.2.69.20/32')
    expect(prompts.asked[0].message).toBe("Addresses that may reach SSH on the management node (one IPv4 CIDR; proposed: this machine's public address, from its interface eth1, as citc connects from here):")
    expect(r.cloud.sshCidr).toBe('81.2.69.20/32')
    const given = scriptedPrompts([[/Node limits file/, '']])
    expect((await ask([], {sshCidr: '203.0.113.0/24'}, scriptedIo(given))).cloud.sshCidr).toBe('203.0.113.0/24')
    expect(given.asked.map((q) => q.message)).toEqual([expect.stringMatching(/Node limits file/)])
    const none = scriptedPrompts([])
    expect((await ask([], {}, {...scriptedIo(none), yes: true})).cloud.sshCidr).toBeUndefined() // Terraform's default, with create's warning
    expect(none.asked).toEqual([])
  })

  it('refuses an answer that is not an IPv4 CIDR, saying what to type', async () => {
    await expect(ask([[/Addresses that may reach SSH/, '81.2.69.20']])).rejects.toThrow(/"81\.2\.69\.20" is not an IPv4 CIDR block: type one such as 203\.0\.113\.7\/32, or 0\.0\.0\.0\/0 for the whole internet/)
    await expect(ask([[/Addresses that may reach SSH/, '10.0.0.0/33']])).rejects.toThrow(/is not an IPv4 CIDR block/)
  })

  it('a range without this machine is taken, with a note that citc will not reach the node from here', async () => {
    const io = scriptedIo(scriptedPrompts([[/Addresses that may reach SSH/, ' 203.0.113.0/24 '], [/Node limits file/, '']]))
    expect((await ask([], {}, io)).cloud.sshCidr).toBe('203.0.113.0/24')
    expect(io.notes.filter((n) => /does not include 81\.2\.69\.20, this machine's public address/.test(n))).toHaveLength(1)
  })
})

describe('confirmations', () => {
  it('a "no" cancels; typing another name cancels; the right name goes on', async () => {
    await expect(confirmOrRefuse(scriptedIo(scriptedPrompts([[/Destroy/, false]])), 'Destroy lab?')).rejects.toThrow(/cancelled/)
    await expect(confirmOrRefuse(scriptedIo(scriptedPrompts([[/Destroy/, true]])), 'Destroy lab?')).resolves.toBeUndefined()
    await expect(confirmByTyping(scriptedIo(scriptedPrompts([[/Type the cluster name \(lab\)/, 'lba']])), 'lab', 'destroying it')).rejects.toThrow(/"lba" is not "lab"/)
    await expect(confirmByTyping(scriptedIo(scriptedPrompts([[/Type the cluster name/, 'lab']])), 'lab', 'destroying it')).resolves.toBeUndefined()
  })
})
