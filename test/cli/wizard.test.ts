// citc create's wizard on a real terminal: every question asked in order, and a "no" at the end
// changes nothing (exit 130). Takes the machine lock: the pre-flight looks at this machine's Slurm.
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ROOT} from '../helpers/cli.js'
import {DOUBLES} from '../helpers/cloud.js'
import {runOnPty} from '../helpers/pty.js'
import {lockSystem} from '../helpers/system-lock.js'

const data = mkdtempSync(join(tmpdir(), 'citc-wizard-'))
let release: (() => void) | undefined

beforeAll(async () => {
  const lock = await lockSystem('wizard test')
  release = () => lock.release()
}, 60 * 60_000)

afterAll(() => {
  release?.()
  rmSync(data, {recursive: true, force: true})
})

describe('citc create on a terminal', () => {
  it('asks provider, name and node counts, then confirms; "no" changes nothing', () => {
    const {code, output} = runOnPty(
      [process.execPath, join(ROOT, 'bin', 'run.js'), 'create'],
      [
        {expect: 'Where should the cluster run', send: '\r'},
        {expect: 'Cluster name', send: '\x15wizard-test\r'},
        {expect: 'How many local.small nodes', send: '\x7f\x7f3\r'},
        {expect: 'How many local.medium nodes', send: '\r'},
        {expect: 'How many local.large nodes', send: '\r'},
        {expect: 'Create local cluster wizard-test on this machine\\?', send: 'n\r'},
      ],
      {env: {CITC_DATA_DIR: data, CI: '', NODE_ENV: 'production', TERM: 'xterm'}, timeoutS: 90, cwd: ROOT},
    )
    expect(output).toMatch(/becomes the management node of cluster wizard-test/)
    expect(code).toBe(130)
    expect(output).toMatch(/nothing was changed/)
    expect(existsSync(join(data, 'clusters', 'wizard-test'))).toBe(false)
  }, 120_000)

  it('aws: asks provider, credentials (saying which are found), region, zone, shape, who may reach SSH, name and limits, plans, and "no" applies nothing', () => {
    // Two AWS profiles in the user's files; the terraform TEST DOUBLE plans (nothing reaches a cloud).
    const home = join(data, 'home')
    mkdirSync(join(home, '.aws'), {recursive: true})
    writeFileSync(join(home, '.aws', 'credentials'), '[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = x\n\n[research]\naws_access_key_id = AKIARESEARCH\naws_secret_access_key = y\n')
    writeFileSync(join(home, '.aws', 'config'), '[default]\nregion = eu-west-2\n\n[profile research]\nregion = us-east-1\n')
    const tfLog = join(data, 'tf.log')
    // The SSH question's echo is the stand-in's (never the internet); an interface of this machine
    // with a public address would be proposed first: either way a /32 is proposed.
    const standIn = join(data, 'stand-in.json')
    writeFileSync(standIn, JSON.stringify({addressEcho: 'data:text/plain,81.2.69.7'}))
    const {code, output} = runOnPty(
      [process.execPath, join(ROOT, 'bin', 'run.js'), 'create', '--stand-in', standIn],
      [
        {expect: 'Where should the cluster run', send: '\x1b[B\r'}, // local → aws
        {expect: 'Which Amazon Web Services credentials should citc \\(Terraform\\) use', send: '\x1b[B\r'}, // default → research
        {expect: 'Region', send: '\r'}, // the research profile's region
        {expect: 'Zone', send: '\r'},
        {expect: 'Shape of the management node', send: '\r'},
        {expect: 'Addresses that may reach SSH on the management node', send: '\r'}, // the proposed /32
        {expect: 'Cluster name', send: '\x15cloud-wizard\r'},
        {expect: 'Node limits file', send: '\r'},
        {expect: 'Apply this plan in aws', send: 'n\r'},
      ],
      {
        env: {
          CITC_DATA_DIR: data,
          HOME: home,
          AWS_PROFILE: '',
          AWS_ACCESS_KEY_ID: '',
          CITC_TERRAFORM: join(DOUBLES, 'terraform'),
          PATH: `${DOUBLES}:${process.env.PATH}`,
          TF_DOUBLE_LOG: tfLog,
          CI: '',
          NODE_ENV: 'production',
          TERM: 'xterm',
        },
        timeoutS: 90,
        cwd: ROOT,
      },
    )
    expect(output).toMatch(/Credentials: AWS profile research \(access key AKIA…ARCH\) in ~\/\.aws\/credentials will be used/)
    expect(output).toMatch(/Terraform plan: \d+ to create/)
    expect(code).toBe(130)
    // Planned with the chosen answers, never applied.
    const yaml = readFileSync(join(data, 'clusters', 'cloud-wizard', 'cluster.yaml'), 'utf8')
    expect(yaml).toMatch(/region: us-east-1/)
    expect(yaml).toMatch(/profile: research/)
    expect(yaml).toMatch(/sshCidr: \d+\.\d+\.\d+\.\d+\/32/)
    expect(output).not.toMatch(/open to the whole internet/)
    expect(readFileSync(tfLog, 'utf8')).not.toMatch(/^apply/m)
  }, 120_000)
})
