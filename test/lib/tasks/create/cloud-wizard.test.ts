// The answers of `citc create` for clouds without a terminal: flags, a --config file (validated at
// file:line:col), credentials discovered in a home directory of the test's own, defaults, and the
// errors that name the flag to pass.
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../../../src/lib/errors.js'
import type {Io} from '../../../../src/lib/io.js'
import type {CloudSettings} from '../../../../src/lib/cluster/schema.js'
import {cloudModule} from '../../../../src/lib/providers/registry.js'
import {locateProblems, resolveCloudCreate} from '../../../../src/lib/tasks/create/cloud-wizard.js'
import {loadClusterConfig} from '../../../../src/lib/tasks/create/config-file.js'
import type {CreateSettings} from '../../../../src/lib/tasks/create/create-request.js'
import {unusableFlags} from '../../../../src/lib/tasks/create/unusable-flags.js'
import {fakeHomes} from '../../../doubles/home.js'

const homes = fakeHomes('citc-cloud-input-')
const {home, root} = homes
afterAll(() => homes.remove())
const notes: string[] = []
const io: Io = {log: () => {}, note: (m) => notes.push(m), json: false, interactive: false, yes: false, renderer: 'silent'}
const dataDir = join(root, 'data')
const resolveWith = (provider: 'aws' | 'google' | 'oracle', {providerFlags = {}, ...given}: Partial<CreateSettings>, h = home(), env: Record<string, string | undefined> = {}, config?: ReturnType<typeof loadClusterConfig>) =>
  resolveCloudCreate(io, provider, {...given, providerFlags}, dataDir, config, {home: h, env})
/** Settings given by flags: the common ones and the providers' own. */
const given = (providerFlags: CreateSettings['providerFlags'], settings: Omit<CreateSettings, 'providerFlags'> = {}): CreateSettings => ({...settings, providerFlags})

async function problems(p: Promise<unknown>) {
  try {
    await p
  } catch (error) {
    if (error instanceof InvalidInputError) return error.problems
    throw error
  }
  throw new Error('expected an InvalidInputError')
}

describe('resolveCloudCreate (no terminal)', () => {
  it('aws: the default profile is used and says so; its region; the zone "a" of it; the default shape', async () => {
    notes.length = 0
    const h = home({'.aws/credentials': '[default]\naws_access_key_id=AKIAIOSFODNN7EXAMPLE\naws_secret_access_key=x\n', '.aws/config': '[default]\nregion = eu-west-2\n'})
    const r = await resolveWith('aws', {name: 'lab'}, h)
    expect(r.cloud).toEqual({region: 'eu-west-2', zone: 'eu-west-2a', mgmtShape: 't3a.medium', credentials: 'profile:default', profile: 'default'})
    expect(notes[0]).toBe('Credentials: AWS profile default (access key AKIA…MPLE) in ~/.aws/credentials will be used.')
  })

  it('aws: --profile picks one, flags win over what the profile says', async () => {
    const h = home({'.aws/config': '[profile research]\nregion = ap-south-1\nsso_session = corp\n'})
    const r = await resolveWith('aws', {name: 'lab', region: 'us-west-2', zone: 'us-west-2c', mgmtShape: 'c5.large', providerFlags: {profile: 'research'}}, h)
    expect(r.cloud).toMatchObject({region: 'us-west-2', zone: 'us-west-2c', mgmtShape: 'c5.large', profile: 'research'})
  })

  it('aws: no credentials at all is a note, not an error (terraform plan will say)', async () => {
    notes.length = 0
    const r = await resolveWith('aws', {name: 'lab'})
    expect(r.cloud).toEqual({region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium'})
    expect(notes[0]).toMatch(/none found for Amazon Web Services/)
  })

  it('google: the project is needed, from --project or the credentials; zones default to "-b" outside the default region', async () => {
    expect(await problems(resolveWith('google', {name: 'lab'}))).toEqual([{where: '--project', message: expect.stringMatching(/pass --project/)}])
    const h = home({'key.json': JSON.stringify({type: 'service_account', project_id: 'proj-from-key', client_email: 'citc@proj-from-key.iam.gserviceaccount.com'})})
    const r = await resolveWith('google', {name: 'lab', region: 'europe-west2', providerFlags: {credentials: join(h, 'key.json')}}, h)
    expect(r.cloud).toMatchObject({project: 'proj-from-key', region: 'europe-west2', zone: 'europe-west2-b', credentialsFile: join(h, 'key.json')})
    expect(cloudModule('google').cloud.defaultZone('us-central1')).toBe('us-central1-a')
  })

  it('oracle: tenancy, key and region from a profile of ~/.oci/config; the root compartment by default', async () => {
    const h = home({
      '.oci/config': '[DEFAULT]\nuser=ocid1.user.oc1..u\nfingerprint=12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0\nkey_file=~/.oci/key.pem\ntenancy=ocid1.tenancy.oc1..t\nregion=uk-london-1\n',
      '.oci/key.pem': 'x',
    })
    const r = await resolveWith('oracle', {name: 'lab', zone: '2'}, h)
    expect(r.cloud).toMatchObject({region: 'uk-london-1', zone: '2', tenancyOcid: 'ocid1.tenancy.oc1..t', compartmentOcid: 'ocid1.tenancy.oc1..t', profile: 'DEFAULT', mgmtShape: 'VM.Standard.E4.Flex.1.16'})
    expect(await problems(resolveWith('oracle', {name: 'lab'}))).toEqual([{where: '--tenancy', message: expect.stringMatching(/pass --tenancy/)}])
  })

  it('refuses a bad name or a name that is taken', async () => {
    expect(await problems(resolveWith('aws', {name: 'Bad_Name'}))).toEqual([{where: '--name', message: expect.stringMatching(/is not a cluster name/)}])
  })
})

describe('--config', () => {
  it('takes every answer from the file; a limits path is relative to it', async () => {
    const dir = join(root, 'cfg')
    mkdirSync(dir)
    writeFileSync(join(dir, 'limits.yaml'), 't3a.medium: 2\n')
    writeFileSync(join(dir, 'cluster.yaml'), 'provider: aws\nname: fromfile\nregion: eu-west-1\nzone: eu-west-1b\nmgmt-shape: t3a.large\nssh-cidr: 203.0.113.0/24\nlimits: limits.yaml\n')
    const config = loadClusterConfig(join(dir, 'cluster.yaml'))
    const r = await resolveWith('aws', {}, home(), {}, config)
    expect(r.name).toBe('fromfile')
    expect(r.cloud).toMatchObject({region: 'eu-west-1', zone: 'eu-west-1b', mgmtShape: 't3a.large', sshCidr: '203.0.113.0/24'})
    expect(r.limits).toEqual({file: join(dir, 'limits.yaml'), text: 't3a.medium: 2\n'})
    // Problems about values from the file are located in the file.
    expect(locateProblems([{where: '--zone', message: 'bad'}, {where: '--project', message: 'x'}], r.configWhere)).toEqual([
      {where: `${join(dir, 'cluster.yaml')}:4:1`, path: 'zone', message: 'bad'},
      {where: '--project', message: 'x'},
    ])
  })

  it('reports unknown keys, wrong types and syntax errors at file:line:col', () => {
    const file = join(root, 'bad.yaml')
    writeFileSync(file, 'provider: azure\nregoin: eu-west-2\nsuspend-time: soon\n')
    let e: InvalidInputError | undefined
    try {
      loadClusterConfig(file)
    } catch (error) {
      e = error as InvalidInputError
    }
    expect(e?.problems.map((p) => `${p.where} ${p.path}`)).toEqual([`${file}:1:1 provider`, `${file}:2:1 regoin`, `${file}:3:1 suspend-time`])
    expect(e?.problems[1].message).toBe('unknown key "regoin"; did you mean "region"?')
    writeFileSync(file, 'name: [unclosed\n')
    expect(() => loadClusterConfig(file)).toThrow(new RegExp(`${file}:\\d+:\\d+`))
  })
})

/** Google's own name rule, as the wizard asks it (settings as cluster.yaml keeps them). */
const googleNameClash = (name: string, settings: CloudSettings, clusters: Array<{name: string; provider: string; cloud?: object}>) =>
  cloudModule('google').cloud.nameClash?.(name, settings, clusters)

describe('nameClash (google: node permissions fenced by name prefix)', () => {
  const lab = {name: 'lab', provider: 'google', cloud: {project: 'p1'}}
  it.each([
    ['lab-x', 'p1', /clashes with cluster lab in project p1/],
    ['la', 'p1', undefined], // a prefix without the hyphen does not reach lab-… names
    ['lab-x', 'p2', undefined], // another project
    ['lab', 'p1', undefined], // itself (a re-run)
  ])('%s in %s', (name, project, expected) => {
    const r = googleNameClash(name, {region: 'europe-west2', mgmtShape: 'e2-standard-2', project}, [lab, {name: 'lab-y', provider: 'aws', cloud: {}}])
    if (expected) expect(r).toMatch(expected)
    else expect(r).toBeUndefined()
  })
  it('the shorter name clashes too', () => {
    expect(googleNameClash('lab', {region: 'europe-west2', mgmtShape: 'e2-standard-2', project: 'p1'}, [{name: 'lab-x', provider: 'google', cloud: {project: 'p1'}}])).toMatch(/clashes with cluster lab-x/)
  })
})

describe('unusableFlags', () => {
  const cloud = {region: 'us-east-1', zone: 'us-east-1a', mgmtShape: 't3a.medium', credentialsFile: '/keys/sa.json'}
  it('refuses another provider\'s flags, and changed settings of a cluster that exists', () => {
    expect(unusableFlags('aws', given({project: 'p'}, {region: 'us-east-1'}))).toEqual([{where: '--project', message: 'is for google, not aws: leave it out'}])
    expect(unusableFlags('local', given({}, {mgmtShape: 'x'}))).toEqual([{where: '--mgmt-shape', message: 'is for cloud providers, not local: leave it out'}])
    expect(unusableFlags('google', given({tenancy: 'ocid1'}))[0].message).toBe('is for oracle, not google: leave it out')
    expect(unusableFlags('aws', given({force: true}))).toEqual([{where: '--force', message: 'is for local, not aws: leave it out'}])
    expect(unusableFlags('aws', given({force: false}))).toEqual([]) // a boolean flag's default is not "given"
    expect(unusableFlags('local', given({force: true}), {name: 'here'})).toEqual([])
    const existing = {name: 'lab', cloud}
    expect(unusableFlags('aws', given({}, {region: 'us-east-1', mgmtShape: 't3a.medium'}), existing)).toEqual([])
    expect(unusableFlags('aws', given({}, {region: 'eu-west-2', sshCidr: '10.0.0.0/8'}), existing).map((p) => p.message)).toEqual([
      'cluster lab exists and was created with --region us-east-1; a cluster\'s settings are fixed once made: leave --region out to continue it, or choose another --name',
      'cluster lab exists and was created with no --ssh-cidr; a cluster\'s settings are fixed once made: leave --ssh-cidr out to continue it, or choose another --name',
    ])
    expect(unusableFlags('google', given({credentials: '/keys/sa.json'}), existing)).toEqual([])
  })
})
