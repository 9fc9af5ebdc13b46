// Credential discovery reads files and the environment only: each test builds a home directory and
// an environment of its own. And the environment Terraform gets for the credential the user chose.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import type {DiscoveryContext} from '../../../src/lib/providers/cloud.js'
import {cloudModule} from '../../../src/lib/providers/registry.js'
import {discoverAwsCredentials} from '../../../src/lib/providers/aws/credentials.js'
import {discoverGoogleCredentials} from '../../../src/lib/providers/google/credentials.js'
import {discoverOracleCredentials, oracleCredentialInputs} from '../../../src/lib/providers/oracle/credentials.js'

const root = mkdtempSync(join(tmpdir(), 'citc-creds-'))
afterAll(() => rmSync(root, {recursive: true, force: true}))
let n = 0

/** A fresh home directory with these files (paths relative to it). */
function home(files: Record<string, string> = {}): string {
  const h = join(root, `home-${++n}`)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(h, path)), {recursive: true})
    writeFileSync(join(h, path), text)
  }
  mkdirSync(h, {recursive: true})
  return h
}
const ctx = (h: string, env: Record<string, string | undefined> = {}): DiscoveryContext => ({home: h, env})

describe('aws', () => {
  const discover = (c: DiscoveryContext) => discoverAwsCredentials(c)

  it('finds nothing in an empty home', () => {
    expect(discover(ctx(home()))).toEqual([])
  })

  it('lists profiles of ~/.aws/credentials and ~/.aws/config, default first, with regions and kinds', () => {
    const h = home({
      '.aws/credentials': '[default]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = x\n\n[research]\naws_access_key_id = AKIAZZZZZZZZZZZZ1234\n',
      '.aws/config': '[default]\nregion = eu-west-2\n\n[profile sso-dev]\nsso_session = corp\nsso_account_id = 1\nregion = us-east-1\n\n[profile empty]\noutput = json\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n',
    })
    const found = discover(ctx(h))
    expect(found.map((s) => s.id)).toEqual(['profile:default', 'profile:empty', 'profile:research', 'profile:sso-dev'])
    expect(found[0]).toMatchObject({kind: 'profile', profile: 'default', region: 'eu-west-2', isDefault: true, label: 'AWS profile default (access key AKIA…MPLE) in ~/.aws/credentials'})
    expect(found[0].problem).toBeUndefined()
    expect(found.find((s) => s.profile === 'research')).toMatchObject({isDefault: false, problem: 'aws_secret_access_key is missing'})
    expect(found.find((s) => s.profile === 'sso-dev')).toMatchObject({region: 'us-east-1', label: expect.stringContaining('(SSO)'), problem: expect.stringContaining('aws sso login --profile sso-dev')})
    expect(found.find((s) => s.profile === 'empty')?.problem).toContain('holds no credentials')
  })

  it('puts keys from the environment first, and AWS_PROFILE / AWS_REGION choose', () => {
    const h = home({'.aws/credentials': '[default]\naws_access_key_id=A\naws_secret_access_key=B\n[lab]\naws_access_key_id=C\naws_secret_access_key=D\n'})
    const withKeys = discover(ctx(h, {AWS_ACCESS_KEY_ID: 'AKIAENVENVENV123', AWS_REGION: 'ap-south-1'}))
    expect(withKeys[0]).toMatchObject({id: 'env', kind: 'environment', isDefault: true, region: 'ap-south-1', problem: 'AWS_SECRET_ACCESS_KEY is not set'})
    expect(withKeys.filter((s) => s.isDefault)).toHaveLength(1)
    const byProfile = discover(ctx(h, {AWS_PROFILE: 'lab'}))
    expect(byProfile[0]).toMatchObject({profile: 'lab', isDefault: true})
    const missing = discover(ctx(h, {AWS_PROFILE: 'nope'}))
    expect(missing[0]).toMatchObject({profile: 'nope', isDefault: true, problem: expect.stringContaining('in neither')})
  })

  it('reads the files AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name', () => {
    const h = home({'elsewhere/creds': '[ci]\naws_access_key_id=A\naws_secret_access_key=B\n'})
    expect(discover(ctx(h, {AWS_SHARED_CREDENTIALS_FILE: '~/elsewhere/creds'})).map((s) => s.profile)).toEqual(['ci'])
  })

  it('runs Terraform with the chosen profile, environment keys removed (they would win)', () => {
    const spec = cloudModule('aws').cloud
    expect(spec.terraformEnv({provider: 'aws', id: 'profile:lab', label: '', kind: 'profile', profile: 'lab', isDefault: false})).toEqual({
      AWS_PROFILE: 'lab',
      AWS_DEFAULT_PROFILE: undefined,
      AWS_ACCESS_KEY_ID: undefined,
      AWS_SECRET_ACCESS_KEY: undefined,
      AWS_SESSION_TOKEN: undefined,
    })
    expect(spec.terraformEnv({provider: 'aws', id: 'env', label: '', kind: 'environment', isDefault: true})).toEqual({})
    expect(spec.terraformEnv(undefined)).toEqual({})
  })
})

describe('google', () => {
  const discover = (c: DiscoveryContext) => discoverGoogleCredentials(c)
  const serviceAccount = JSON.stringify({type: 'service_account', project_id: 'sa-project', client_email: 'citc@sa-project.iam.gserviceaccount.com'})

  it('finds GOOGLE_APPLICATION_CREDENTIALS first, then gcloud ADC, with project, region and zone', () => {
    const h = home({
      'keys/sa.json': serviceAccount,
      '.config/gcloud/application_default_credentials.json': JSON.stringify({type: 'authorized_user', quota_project_id: 'adc-project'}),
      '.config/gcloud/active_config': 'work\n',
      '.config/gcloud/configurations/config_work': '[core]\naccount = me@example.com\nproject = gcloud-project\n\n[compute]\nregion = europe-west2\nzone = europe-west2-b\n',
    })
    const found = discover(ctx(h, {GOOGLE_APPLICATION_CREDENTIALS: join(h, 'keys/sa.json')}))
    expect(found.map((s) => s.kind)).toEqual(['key-file', 'gcloud-adc'])
    expect(found[0]).toMatchObject({
      isDefault: true,
      account: 'citc@sa-project.iam.gserviceaccount.com',
      project: 'sa-project',
      region: 'europe-west2',
      zone: 'europe-west2-b',
      label: 'citc@sa-project.iam.gserviceaccount.com from ~/keys/sa.json (GOOGLE_APPLICATION_CREDENTIALS)',
    })
    expect(found[1]).toMatchObject({isDefault: false, project: 'adc-project', account: 'me@example.com'})
    // The environment's project wins over the files.
    expect(discover(ctx(h, {GOOGLE_CLOUD_PROJECT: 'env-project'}))[0]).toMatchObject({kind: 'gcloud-adc', isDefault: true, project: 'env-project'})
  })

  it('flags a key file that is missing or not JSON', () => {
    const h = home({'bad.json': 'not json'})
    expect(discover(ctx(h, {GOOGLE_APPLICATION_CREDENTIALS: join(h, 'nope.json')}))[0].problem).toBe('~/nope.json does not exist')
    expect(discover(ctx(h, {GOOGLE_APPLICATION_CREDENTIALS: join(h, 'bad.json')}))[0].problem).toBe('~/bad.json is not a JSON credentials file')
  })

  it('knows GOOGLE_CREDENTIALS (which the provider prefers) and CLOUDSDK_CONFIG', () => {
    const h = home({'gc/application_default_credentials.json': '{"type":"authorized_user"}', 'k.json': serviceAccount})
    const found = discover(ctx(h, {GOOGLE_CREDENTIALS: join(h, 'k.json'), CLOUDSDK_CONFIG: join(h, 'gc')}))
    expect(found.map((s) => [s.kind, s.isDefault])).toEqual([
      ['environment', true],
      ['gcloud-adc', false],
    ])
  })

  it('runs Terraform with exactly the chosen credential', () => {
    const spec = cloudModule('google').cloud
    const cleared = {GOOGLE_CREDENTIALS: undefined, GOOGLE_CLOUD_KEYFILE_JSON: undefined, GCLOUD_KEYFILE_JSON: undefined, GOOGLE_APPLICATION_CREDENTIALS: undefined}
    expect(spec.terraformEnv({provider: 'google', id: 'file:/k.json', label: '', kind: 'key-file', file: '/k.json', isDefault: true})).toEqual({...cleared, GOOGLE_APPLICATION_CREDENTIALS: '/k.json'})
    expect(spec.terraformEnv({provider: 'google', id: 'gcloud-adc', label: '', kind: 'gcloud-adc', isDefault: false})).toEqual(cleared)
    expect(spec.terraformEnv({provider: 'google', id: 'env', label: '', kind: 'environment', isDefault: true})).toEqual({})
  })
})

describe('oracle', () => {
  const discover = (c: DiscoveryContext) => discoverOracleCredentials(c)
  const config = [
    '[DEFAULT]',
    'user=ocid1.user.oc1..default',
    'fingerprint=aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99',
    'key_file=~/.oci/oci_api_key.pem',
    'tenancy=ocid1.tenancy.oc1..tenancy',
    'region=uk-london-1',
    '',
    '[ASHBURN]',
    'region=us-ashburn-1',
    '',
    '[OTHER]',
    'user=ocid1.user.oc1..other',
    'key_file=~/.oci/missing.pem',
    '',
    '[SESSION]',
    'security_token_file=~/.oci/sessions/x/token',
    '',
  ].join('\n')

  it('lists profiles of ~/.oci/config; profiles inherit DEFAULT', () => {
    const h = home({'.oci/config': config, '.oci/oci_api_key.pem': 'key'})
    const found = discover(ctx(h))
    expect(found.map((s) => s.profile)).toEqual(['DEFAULT', 'ASHBURN', 'OTHER', 'SESSION'])
    expect(found[0]).toMatchObject({
      isDefault: true,
      region: 'uk-london-1',
      tenancy: 'ocid1.tenancy.oc1..tenancy',
      account: 'ocid1.user.oc1..default',
      keyFile: join(h, '.oci/oci_api_key.pem'),
      label: 'OCI profile DEFAULT in ~/.oci/config (uk-london-1)',
    })
    expect(found[0].problem).toBeUndefined()
    expect(found[1]).toMatchObject({profile: 'ASHBURN', region: 'us-ashburn-1', account: 'ocid1.user.oc1..default', isDefault: false})
    expect(found[1].problem).toBeUndefined()
    expect(found[2].problem).toBe('key_file ~/.oci/missing.pem does not exist')
    expect(found[3].problem).toContain('session-token profiles')
  })

  it('OCI_CLI_PROFILE chooses; OCI_CLI_CONFIG_FILE moves the file; no file, no profiles', () => {
    const h = home({'.oci/config': config, 'other/config': '[X]\nuser=u\nfingerprint=f\nkey_file=/k\ntenancy=t\nregion=r\n'})
    expect(discover(ctx(h, {OCI_CLI_PROFILE: 'ASHBURN'}))[0]).toMatchObject({profile: 'ASHBURN', isDefault: true})
    expect(discover(ctx(h, {OCI_CLI_CONFIG_FILE: '~/other/config'})).map((s) => s.profile)).toEqual(['X'])
    expect(discover(ctx(home()))).toEqual([])
  })

  it('hands a profile to Terraform by name from the default file, by its fields from another', () => {
    const h = home({'.oci/config': config, 'other/config': config})
    const [fromDefault] = discover(ctx(h))
    expect(oracleCredentialInputs(fromDefault, ctx(h))).toEqual({tenancyOcid: 'ocid1.tenancy.oc1..tenancy', configFileProfile: 'DEFAULT', region: 'uk-london-1'})
    const [fromOther] = discover(ctx(h, {OCI_CLI_CONFIG_FILE: join(h, 'other/config')}))
    expect(oracleCredentialInputs(fromOther, ctx(h))).toEqual({
      tenancyOcid: 'ocid1.tenancy.oc1..tenancy',
      userOcid: 'ocid1.user.oc1..default',
      fingerprint: 'aa:bb:cc:dd:ee:ff:00:11:22:33:44:55:66:77:88:99',
      privateKeyPath: join(h, '.oci/oci_api_key.pem'),
      region: 'uk-london-1',
    })
    expect(cloudModule('oracle').cloud.terraformEnv(fromDefault)).toEqual({})
  })
})
