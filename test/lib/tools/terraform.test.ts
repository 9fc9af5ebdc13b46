// The Terraform adapter: its pure parsers, and the adapter itself against test/doubles/bin/terraform (the
// one test double of this project: Terraform cannot be installed here). The double answers like
// Terraform with -no-color, records its argv, and fails on demand with the clouds' real error texts.
import {execFileSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {pidAlive, sleep} from '../../../src/lib/proc.js'

import {CitcError} from '../../../src/lib/errors.js'
import {renderTerraformDir, type CloudInputs, type CloudProvider} from '../../../src/lib/providers/cloud.js'
import {cloudModule} from '../../../src/lib/providers/registry.js'
import {
  Terraform,
  compareVersions,
  describePlan,
  detectTerraform,
  explainTerraformError,
  outputValues,
  parseApplySummary,
  parseDuration,
  parseOutputs,
  parseProgressLine,
  parseVersionOutput,
  summarizePlan,
  terraformErrors,
  typeFromAddress,
  type FailureReason,
  type ResourceEvent,
} from '../../../src/lib/tools/terraform.js'

const DOUBLE = resolve('test/doubles/bin/terraform')
const work = mkdtempSync(join(tmpdir(), 'citc-terraform-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))
let n = 0
const fresh = (name: string) => {
  const d = join(work, `${++n}-${name}`)
  mkdirSync(d, {recursive: true})
  return d
}

execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'host', '-f', join(work, 'host')])
const keys = {
  sshPublicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHhTq3nS8tY5H9uVv2m9Xg2mJ8bq1o7o4Q2bJ0dP6sGy admin',
  sshHostKey: readFileSync(join(work, 'host'), 'utf8'),
  sshHostKeyPublic: readFileSync(join(work, 'host.pub'), 'utf8').trim(),
}
function inputs(provider: CloudProvider): CloudInputs {
  if (provider === 'aws') return {provider, clusterId: 'demo', region: 'us-east-1', zone: 'us-east-1a', ...keys}
  if (provider === 'google') return {provider, clusterId: 'demo', region: 'us-central1', zone: 'us-central1-a', project: 'demo-project', ...keys}
  return {
    provider,
    clusterId: 'demo',
    region: 'us-ashburn-1',
    availabilityDomain: 1,
    tenancyOcid: 'ocid1.tenancy.oc1..t',
    compartmentOcid: 'ocid1.compartment.oc1..c',
    configFileProfile: 'DEFAULT',
    ...keys,
  }
}

/** A rendered cluster directory, a log of the double's calls, and an adapter on both. */
function setup(provider: CloudProvider = 'aws', env: Record<string, string | undefined> = {}, signal?: AbortSignal) {
  const dir = fresh(`cluster-${provider}`)
  renderTerraformDir(dir, inputs(provider))
  const calls = join(dir, '..', `${n}-calls.log`)
  const logFile = join(dir, '..', `${n}-terraform.log`)
  const tf = new Terraform(
    {binary: 'terraform', path: DOUBLE, version: '1.9.8'},
    {dir, logFile, hints: cloudModule(provider).cloud.errorHints, signal, env: {TF_DOUBLE_LOG: calls, ...env}},
  )
  const argv = () => (existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [])
  return {dir, tf, argv, logFile}
}

async function failure(promise: Promise<unknown>): Promise<CitcError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof CitcError) return error
    throw error
  }
  throw new Error('expected a failure')
}


// ---------------------------------------------------------------------------------------------

describe('versions', () => {
  it('reads `version -json` and the text forms of Terraform and OpenTofu', () => {
    expect(parseVersionOutput('{"terraform_version":"1.9.8","platform":"linux_amd64"}')).toEqual({version: '1.9.8'})
    expect(parseVersionOutput('Terraform v1.5.7\non linux_amd64\n')).toEqual({version: '1.5.7', flavor: 'terraform'})
    expect(parseVersionOutput('OpenTofu v1.8.3\non linux_amd64')).toEqual({version: '1.8.3', flavor: 'tofu'})
    expect(parseVersionOutput('Terraform v0.11.14\n\nYour version of Terraform is out of date!')).toEqual({version: '0.11.14', flavor: 'terraform'})
    expect(parseVersionOutput('flag provided but not defined: -json')).toBeUndefined()
  })

  it('compares numerically', () => {
    expect(compareVersions('1.10.0', '1.9.8')).toBe(1)
    expect(compareVersions('1.5.0', '1.5.0')).toBe(0)
    expect(compareVersions('1.4.7', '1.5.0')).toBe(-1)
    expect(compareVersions('1.6.0-beta1', '1.6.0')).toBe(0)
  })

  describe('detectTerraform', () => {
    const bin = (name: string, script?: string) => {
      const d = fresh('bin')
      if (script) {
        writeFileSync(join(d, name), script)
        chmodSync(join(d, name), 0o755)
      } else symlinkSync(DOUBLE, join(d, name))
      return d
    }
    const olderTerraform = (version: string) => `#!/bin/sh\nTF_DOUBLE_VERSION=${version} exec ${DOUBLE} "$@"\n`

    it('finds terraform on PATH', async () => {
      const d = bin('terraform')
      expect(await detectTerraform({path: d})).toEqual({binary: 'terraform', path: join(d, 'terraform'), version: '1.9.8'})
    })

    it('finds OpenTofu when there is no terraform', async () => {
      const d = bin('tofu')
      expect(await detectTerraform({path: d})).toMatchObject({binary: 'tofu', path: join(d, 'tofu')})
    })

    it('refuses Terraform older than 1.5, saying which and how to fix it', async () => {
      const d = bin('terraform', olderTerraform('1.4.6'))
      const error = await failure(detectTerraform({path: d}))
      expect(error.kind).toBe('remote')
      expect(error.exitCode).toBe(4)
      expect(error.message).toContain('Terraform 1.4.6 is older than 1.5.0')
      expect(error.hint).toMatch(/Terraform >= 1\.5.*OpenTofu/)
    })

    it('takes OpenTofu when terraform is too old', async () => {
      const d = bin('terraform', olderTerraform('1.3.0'))
      symlinkSync(DOUBLE, join(d, 'tofu'))
      expect(await detectTerraform({path: d})).toMatchObject({binary: 'tofu'})
    })

    it('prefers what it is told to when both are there, and honours an explicit binary', async () => {
      const d = bin('terraform')
      symlinkSync(DOUBLE, join(d, 'tofu'))
      expect((await detectTerraform({path: d})).binary).toBe('terraform')
      expect((await detectTerraform({path: d, prefer: 'tofu'})).binary).toBe('tofu')
      expect(await detectTerraform({path: '/nonexistent', override: join(d, 'tofu')})).toMatchObject({binary: 'tofu', path: join(d, 'tofu')})
    })

    it('says when neither is installed', async () => {
      const error = await failure(detectTerraform({path: fresh('empty')}))
      expect(error.message).toBe('neither terraform nor tofu was found on PATH')
      expect(error.hint).toContain('https://developer.hashicorp.com/terraform/install')
    })
  })
})

describe('plan summaries', () => {
  const change = (address: string, actions: string[], mode = 'managed') => ({address, mode, type: typeFromAddress(address), change: {actions}})

  it('counts creates, updates, deletes and replacements, by type; reads and no-ops are not changes', () => {
    const s = summarizePlan({
      terraform_version: '1.9.8',
      resource_changes: [
        change('data.aws_ami.base', ['read'], 'data'),
        change('aws_vpc.cluster', ['create']),
        change('aws_subnet.cluster', ['create']),
        change('aws_instance.mgmt', ['delete', 'create']),
        change('aws_eip.mgmt', ['create', 'delete']),
        change('aws_security_group.ssh', ['update']),
        change('aws_efs_file_system.shared', ['delete']),
        change('aws_iam_role.mgmt', ['no-op']),
      ],
    })
    expect(s.counts).toEqual({create: 2, update: 1, delete: 1, replace: 2, unchanged: 1})
    expect(s.byType).toEqual({
      aws_efs_file_system: ['aws_efs_file_system.shared'],
      aws_eip: ['aws_eip.mgmt'],
      aws_instance: ['aws_instance.mgmt'],
      aws_security_group: ['aws_security_group.ssh'],
      aws_subnet: ['aws_subnet.cluster'],
      aws_vpc: ['aws_vpc.cluster'],
    })
    expect(s.changes[0]).toEqual({address: 'aws_efs_file_system.shared', type: 'aws_efs_file_system', action: 'delete'})
    expect(s.empty).toBe(false)
    expect(s.terraformVersion).toBe('1.9.8')
    expect(describePlan(s)).toBe('2 to create, 2 to replace, 1 to update, 1 to delete')
  })

  it('says when there is nothing to do', () => {
    const s = summarizePlan({format_version: '1.2', resource_changes: [change('aws_vpc.cluster', ['no-op'])]})
    expect(s.empty).toBe(true)
    expect(describePlan(s)).toBe('no changes')
    expect(summarizePlan({}).empty).toBe(true)
  })

  it('knows resource types from addresses', () => {
    expect(typeFromAddress('aws_instance.mgmt')).toBe('aws_instance')
    expect(typeFromAddress('module.net.module.x["a.b"].google_compute_network.cluster[0]')).toBe('google_compute_network')
    expect(typeFromAddress('data.oci_core_images.base')).toBe('oci_core_images')
  })
})

describe('progress lines', () => {
  it.each<[string, Partial<ResourceEvent> | undefined]>([
    ['aws_vpc.cluster: Creating...', {address: 'aws_vpc.cluster', type: 'aws_vpc', action: 'create', phase: 'start'}],
    ['aws_instance.mgmt: Still creating... [1m10s elapsed]', {action: 'create', phase: 'progress', elapsedS: 70}],
    ['aws_instance.mgmt: Still creating... [00m20s elapsed]', {phase: 'progress', elapsedS: 20}],
    ['aws_instance.mgmt: Creation complete after 42s [id=i-0abc123]', {phase: 'complete', elapsedS: 42, id: 'i-0abc123'}],
    ['google_filestore_instance.shared: Creation errored after 5m3s', {phase: 'error', elapsedS: 303}],
    ['oci_core_instance.mgmt: Destroying... [id=ocid1.instance.oc1.x]', {action: 'delete', phase: 'start', id: 'ocid1.instance.oc1.x'}],
    ['aws_vpc.cluster: Destruction complete after 1s', {action: 'delete', phase: 'complete', elapsedS: 1}],
    ['aws_security_group.ssh: Modifying... [id=sg-1]', {action: 'update', phase: 'start', id: 'sg-1'}],
    ['data.aws_ami.base: Reading...', {address: 'data.aws_ami.base', type: 'aws_ami', action: 'read', phase: 'start'}],
    ['module.net.aws_subnet.this["a"]: Creating...', {address: 'module.net.aws_subnet.this["a"]', type: 'aws_subnet'}],
    ['\u001b[0m\u001b[1maws_vpc.cluster: Creating...\u001b[0m', {address: 'aws_vpc.cluster', phase: 'start'}],
    ['Plan: 3 to add, 0 to change, 0 to destroy.', undefined],
    ['Error: creating EC2 Instance: boom', undefined],
    ['  # aws_vpc.cluster will be created', undefined],
  ])('%s', (line, expected) => {
    const event = parseProgressLine(line)
    if (expected === undefined) expect(event).toBeUndefined()
    else expect(event).toMatchObject(expected)
  })

  it('parses durations and the closing summaries', () => {
    expect(parseDuration('1h2m3s')).toBe(3723)
    expect(parseDuration('')).toBeUndefined()
    expect(parseApplySummary('\nApply complete! Resources: 14 added, 1 changed, 2 destroyed.\n')).toEqual({added: 14, changed: 1, destroyed: 2})
    expect(parseApplySummary('Destroy complete! Resources: 7 destroyed.')).toEqual({added: 0, changed: 0, destroyed: 7})
    expect(parseApplySummary('nothing')).toBeUndefined()
  })
})

describe('outputs', () => {
  it('parses output -json and leaves sensitive values out of the plain values', () => {
    const outputs = parseOutputs(
      JSON.stringify({
        mgmt_public_ip: {sensitive: false, type: 'string', value: '203.0.113.7'},
        base_image: {sensitive: false, type: ['object', {}], value: {id: 'ami-1'}},
        secret: {sensitive: true, type: 'string', value: 'x'},
      }),
    )
    expect(outputs.secret).toEqual({value: 'x', sensitive: true})
    expect(outputValues(outputs)).toEqual({mgmt_public_ip: '203.0.113.7', base_image: {id: 'ami-1'}})
    expect(parseOutputs('{}\n')).toEqual({})
    expect(() => parseOutputs('Warning: No outputs found')).toThrow(/did not print JSON/)
  })
})

describe('explaining failures', () => {
  it('extracts Terraform error blocks, with or without the coloured frame', () => {
    const framed = '╷\n│ Error: creating EC2 Instance: api error VcpuLimitExceeded: too many\n│ \n│   with aws_instance.mgmt,\n│   on mgmt.tf line 20, in resource "aws_instance" "mgmt":\n│   20: resource "aws_instance" "mgmt" {\n│ \n╵\n'
    expect(terraformErrors(framed)).toEqual([{summary: 'creating EC2 Instance: api error VcpuLimitExceeded: too many', detail: [], resource: 'aws_instance.mgmt'}])
    const f = explainTerraformError(framed, 'apply', cloudModule('aws').cloud.errorHints)
    expect(f.reason).toBe('quota')
    expect(f.resource).toBe('aws_instance.mgmt')
    expect(f.message).toBe('terraform apply failed (aws_instance.mgmt): a quota or service limit of the account is exhausted (VcpuLimitExceeded)')
    expect(f.hint.fix).toContain('Service Quotas')
  })

  it('keeps the error and the last lines when it does not recognise the failure', () => {
    const f = explainTerraformError('some noise\n\nError: Unsupported block type\n\n  on main.tf line 3:\n   3: foo {\n\nBlocks of type "foo" are not expected here.\n', 'plan')
    expect(f.reason).toBe('unknown')
    expect(f.message).toBe('terraform plan failed: Unsupported block type: Blocks of type "foo" are not expected here.')
    expect(f.lastLines.at(-1)).toBe('Blocks of type "foo" are not expected here.')
    expect(f.hint.retry).toBe('then run `citc create --resume`')
  })

  it('says "destroy" in the hints of a failed destroy', () => {
    expect(explainTerraformError('Error: 429-TooManyRequests, slow down', 'destroy', cloudModule('oracle').cloud.errorHints).hint.fix).toContain('run the same command again')
    expect(explainTerraformError('Error: 401-NotAuthenticated, nope', 'destroy', cloudModule('oracle').cloud.errorHints).hint.retry).toBe('then run `citc destroy` again')
  })

  it('names a resource, but not the provider block a credentials error points at', () => {
    const f = explainTerraformError(
      'Error: No valid credential sources found\n\n  with provider["registry.terraform.io/hashicorp/aws"],\n  on versions.tf line 19, in provider "aws":\n  19: provider "aws" {\n',
      'plan',
      cloudModule('aws').cloud.errorHints,
    )
    expect(f.message).toBe('terraform plan failed: the cloud credentials are missing, expired or invalid (No valid credential sources found)')
    expect(f.resource).toBeUndefined()
  })

  it('keeps a very long error to one readable line', () => {
    const f = explainTerraformError(`Error: ${'x'.repeat(2000)}`, 'apply')
    expect(f.message.length).toBeLessThan(400)
  })
})

// ---------------------------------------------------------------------------------------------
// The adapter against the double

describe('Terraform against the double', () => {
  it('init, plan, apply, output, destroy: the whole life of a cluster', async () => {
    const outputsFile = join(work, 'outputs.json')
    writeFileSync(outputsFile, JSON.stringify({mgmt_public_ip: {sensitive: false, type: 'string', value: '203.0.113.7'}}))
    const {dir, tf, argv, logFile} = setup('aws', {TF_DOUBLE_OUTPUTS: outputsFile})
    const planFile = join(dir, 'citc.tfplan')

    await tf.init()
    const plan = await tf.plan(planFile)
    expect(plan.counts.create).toBe(15)
    expect(plan.counts.delete + plan.counts.update + plan.counts.replace).toBe(0)
    expect(plan.byType.aws_instance).toEqual(['aws_instance.mgmt'])
    expect(plan.byType.aws_efs_mount_target).toEqual(['aws_efs_mount_target.shared'])
    expect(Object.keys(plan.byType)).not.toContain('aws_ami') // data sources are reads, not changes

    const events: ResourceEvent[] = []
    const applied = await tf.apply(planFile, (e) => events.push(e))
    expect(applied).toEqual({added: 15, changed: 0, destroyed: 0})
    expect(events.filter((e) => e.phase === 'start').map((e) => e.address)).toHaveLength(15)
    expect(events.find((e) => e.address === 'aws_instance.mgmt' && e.phase === 'complete')).toMatchObject({action: 'create', id: 'aws_instance.mgmt-id'})

    expect(await tf.output()).toEqual({mgmt_public_ip: {value: '203.0.113.7', sensitive: false}})
    expect((await tf.plan(join(dir, 'again.tfplan'))).empty).toBe(true)

    const destroyed: ResourceEvent[] = []
    expect(await tf.destroy((e) => destroyed.push(e))).toEqual({added: 0, changed: 0, destroyed: 15})
    expect(destroyed.filter((e) => e.action === 'delete' && e.phase === 'complete')).toHaveLength(15)

    expect(argv()).toEqual([
      'init -input=false -no-color',
      `plan -input=false -no-color -lock-timeout=60s -out=${planFile}`,
      `show -json -no-color ${planFile}`,
      `apply -input=false -no-color -lock-timeout=60s ${planFile}`,
      'output -json -no-color',
      `plan -input=false -no-color -lock-timeout=60s -out=${join(dir, 'again.tfplan')}`,
      `show -json -no-color ${join(dir, 'again.tfplan')}`,
      'destroy -input=false -no-color -lock-timeout=60s -auto-approve',
    ])
    // The log has every command and its output, but not the plan JSON or the outputs (they hold values).
    const log = readFileSync(logFile, 'utf8')
    expect(log).toContain(`$ ${DOUBLE} init '-input=false' -no-color`)
    expect(log).toContain('aws_instance.mgmt: Creation complete after 1s')
    expect(log).not.toContain('resource_changes')
    expect(log).not.toContain('203.0.113.7')
    expect(statSync(logFile).mode & 0o777).toBe(0o600)
  })

  it('plans a destroy on request', async () => {
    const {dir, tf} = setup('google')
    await tf.init()
    await tf.plan(join(dir, 'p1'))
    await tf.apply(join(dir, 'p1'))
    const plan = await tf.plan(join(dir, 'p2'), {destroy: true})
    expect(plan.counts).toMatchObject({create: 0, delete: 13})
    expect(plan.byType.google_compute_instance).toEqual(['google_compute_instance.mgmt'])
  })

  it('streams every line to onLine as it comes', async () => {
    const {dir, tf} = setup('oracle')
    const lines: string[] = []
    await tf.init({onLine: (l) => lines.push(l)})
    expect(lines).toContain('Terraform has been successfully initialized!')
    await tf.plan(join(dir, 'p'), {onLine: (l) => lines.push(l)})
    expect(lines).toContain('Plan: 13 to add, 0 to change, 0 to destroy.')
  })

  it('gives Terraform the environment it is told to, and can remove variables', async () => {
    process.env.CITC_TEST_AWS_KEY = 'inherited'
    try {
      const {tf, argv} = setup('aws', {TF_DOUBLE_LOG_ENV: 'AWS_PROFILE CITC_TEST_AWS_KEY TF_IN_AUTOMATION CHECKPOINT_DISABLE', AWS_PROFILE: 'research', CITC_TEST_AWS_KEY: undefined})
      await tf.init()
      expect(argv()).toEqual(['init -input=false -no-color', 'env AWS_PROFILE=research CITC_TEST_AWS_KEY=<unset> TF_IN_AUTOMATION=1 CHECKPOINT_DISABLE=1'])
    } finally {
      delete process.env.CITC_TEST_AWS_KEY
    }
  })

  it('resumes after a failed apply: the next plan has only what is left', async () => {
    const {dir, tf} = setup('aws', {TF_DOUBLE_FAIL: 'apply'})
    await tf.init()
    await tf.plan(join(dir, 'p1'))
    const events: ResourceEvent[] = []
    const error = await failure(tf.apply(join(dir, 'p1'), (e) => events.push(e)))
    expect(error.kind).toBe('remote')
    expect(error.details).toMatchObject({step: 'apply', reason: 'capacity', code: 'InsufficientInstanceCapacity', resource: 'aws_instance.mgmt'})
    expect(events.filter((e) => e.phase === 'complete')).toHaveLength(13)

    const retry = new Terraform(tf.tool, {...tf.opts, env: {...tf.opts.env, TF_DOUBLE_FAIL: undefined}})
    const plan = await retry.plan(join(dir, 'p2'))
    expect(plan.changes.map((c) => c.address)).toEqual(['aws_eip.mgmt', 'aws_instance.mgmt'])
    expect(await retry.apply(join(dir, 'p2'))).toMatchObject({added: 2})
  })

  it('refuses to plan before init, and says to run create --resume', async () => {
    const {dir, tf} = setup('aws')
    const error = await failure(tf.plan(join(dir, 'p')))
    expect(error.details).toMatchObject({reason: 'not-initialized'})
    expect(error.hint).toContain('citc create --resume')
  })

  const cases: Array<[CloudProvider, string, FailureReason, RegExp]> = [
    ['aws', 'plan:credentials', 'credentials', /aws sso login/],
    ['aws', 'apply:capacity', 'capacity', /another zone \(--zone\) or shape \(--mgmt-shape\)/],
    ['aws', 'apply:quota', 'quota', /Service Quotas/],
    ['aws', 'apply:shape', 'shape-unavailable', /--mgmt-shape/],
    ['aws', 'apply:throttle', 'throttled', /wait a minute/],
    ['aws', 'apply:permission', 'permission', /the permission iam:CreateRole/],
    ['google', 'plan:credentials', 'credentials', /gcloud auth application-default login/],
    ['google', 'apply:capacity', 'capacity', /another zone/],
    ['google', 'apply:quota', 'quota', /IAM & Admin > Quotas/],
    ['google', 'apply:shape', 'shape-unavailable', /--mgmt-shape/],
    ['google', 'apply:api', 'api-disabled', /gcloud services enable compute.googleapis.com file.googleapis.com/],
    ['google', 'apply:throttle', 'throttled', /wait a minute/],
    ['google', 'apply:permission', 'permission', /the permission iam\.serviceAccounts\.create/],
    ['oracle', 'plan:credentials', 'credentials', /~\/\.oci\/config/],
    ['oracle', 'apply:capacity', 'capacity', /another availability domain/],
    ['oracle', 'apply:quota', 'quota', /Governance > Limits/],
    ['oracle', 'apply:shape', 'shape-unavailable', /--mgmt-shape/],
    ['oracle', 'apply:throttle', 'throttled', /wait a minute/],
    ['oracle', 'apply:permission', 'permission', /the missing permission/],
    ['aws', 'init', 'network', /HTTPS_PROXY/],
    ['aws', 'plan:lock', 'state-locked', /terraform force-unlock 8d3f2a1c-6b5e-4c7d-9e0f-1a2b3c4d5e6f/],
    ['aws', 'plan:invalid', 'invalid-input', /correct the value/],
    ['google', 'destroy', 'unknown', /run `citc destroy` again/],
    ['oracle', 'output', 'unknown', /citc create --resume/],
  ]

  it.each(cases)('%s, failing at %s: explained as %s, with a fix', async (provider, fail, reason, hint) => {
    const {dir, tf, logFile} = setup(provider, {TF_DOUBLE_FAIL: fail})
    const step = fail.split(':')[0]
    const run = async () => {
      if (step === 'init') return tf.init()
      await new Terraform(tf.tool, {...tf.opts, env: {}}).init()
      if (step === 'plan') return tf.plan(join(dir, 'p'))
      const ok = new Terraform(tf.tool, {...tf.opts, env: {}})
      await ok.plan(join(dir, 'p'))
      if (step === 'apply') return tf.apply(join(dir, 'p'))
      await ok.apply(join(dir, 'p'))
      if (step === 'output') return tf.output()
      return tf.destroy()
    }
    const error = await failure(run())
    expect(error.kind).toBe('remote')
    expect(error.details).toMatchObject({step, reason})
    expect(error.message.split('\n')).toHaveLength(1)
    expect(error.message).toMatch(new RegExp(`^terraform ${step} failed`))
    expect(error.hint).toMatch(hint)
    if (step === 'output') expect(error.hint).not.toContain(logFile) // output -json is not logged (values)
    else expect(error.hint).toContain(logFile)
    expect((error.details?.lastLines as string[]).length).toBeGreaterThan(0)
    if (reason === 'unknown') expect(error.message).toContain('Provider produced inconsistent result after apply')
    if (reason === 'invalid-input') expect(error.message).toContain('zone must be an availability zone name such as eu-west-2a.')
    if (step === 'apply') expect(error.details?.resource).toMatch(/_instance\.mgmt$/)
  })

  it('cancels a running apply: Terraform is stopped, the call rejects as cancelled', async () => {
    const controller = new AbortController()
    const pidFile = join(work, 'tf.pid')
    const {dir, tf} = setup('aws', {}, controller.signal)
    await tf.init()
    await tf.plan(join(dir, 'p'))
    const hanging = new Terraform(tf.tool, {...tf.opts, killGraceMs: 2000, env: {...tf.opts.env, TF_DOUBLE_HANG: 'apply', TF_DOUBLE_PID_FILE: pidFile}})
    const events: ResourceEvent[] = []
    const applying = hanging.apply(join(dir, 'p'), (e) => {
      events.push(e)
      // The first progress line arrived while Terraform still runs: streaming works. Now cancel.
      controller.abort()
    })
    const error = await failure(applying)
    expect(error.kind).toBe('cancelled')
    expect(error.exitCode).toBe(130)
    expect(events[0]).toMatchObject({address: 'aws_efs_file_system.shared', phase: 'start'})
    const pid = Number(readFileSync(pidFile, 'utf8'))
    for (let i = 0; i < 100 && pidAlive(pid); i++) await sleep(20)
    expect(pidAlive(pid)).toBe(false)
  })

  it('does not start at all when already cancelled', async () => {
    const controller = new AbortController()
    controller.abort()
    const {tf, argv} = setup('aws', {}, controller.signal)
    expect((await failure(tf.init())).kind).toBe('cancelled')
    expect(argv()).toEqual([])
  })
})
