// The sweepers of destroy, each driving its cloud's CLI — here test/doubles/bin/{aws,gcloud,oci}, the TEST
// DOUBLES of the clouds' APIs (a JSON file is the cloud), first on PATH. What is checked: the commands
// and JSON shapes each CLI is driven with, that only what carries the cluster's tag is listed and
// deleted, the deletion order, and how failures are reported.
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {awsSweeper} from '../../../src/lib/providers/aws/sweep.js'
import {googleSweeper} from '../../../src/lib/providers/google/sweep.js'
import {oracleSweeper} from '../../../src/lib/providers/oracle/sweep.js'
import {sweep, type SweepContext} from '../../../src/lib/providers/sweep.js'
import {sweeperFor} from '../../../src/lib/providers/cloud-cluster.js'
import type {ClusterRecord} from '../../../src/lib/cluster/schema.js'

const DOUBLES = resolve('test/doubles/bin')
const work = mkdtempSync(join(tmpdir(), 'citc-sweep-'))
const state = join(work, 'cloud.json')
const log = join(work, 'calls.log')
const savedPath = process.env.PATH

beforeAll(() => {
  process.env.PATH = `${DOUBLES}:${savedPath}`
})
afterAll(() => {
  process.env.PATH = savedPath
  rmSync(work, {recursive: true, force: true})
})
beforeEach(() => {
  rmSync(log, {force: true})
  writeFileSync(
    state,
    JSON.stringify({
      resources: [
        {provider: 'aws', kind: 'snapshot', id: 'snap-1', cluster: 'demo'},
        {provider: 'aws', kind: 'image', id: 'ami-1', name: 'citc-slurm-compute-demo-v1', cluster: 'demo'},
        {provider: 'aws', kind: 'instance', id: 'i-1', name: 'demo-c5-xlarge-0001', cluster: 'demo'},
        {provider: 'aws', kind: 'instance', id: 'i-9', name: 'other-node', cluster: 'other'},
        {provider: 'google', kind: 'instance', id: 'demo-n1-standard-1-0001', zone: 'europe-west2-b', cluster: 'demo'},
        {provider: 'google', kind: 'image', id: 'citc-slurm-compute-demo-v1', cluster: 'demo'},
        {provider: 'google', kind: 'instance', id: 'x-node', zone: 'europe-west2-b', cluster: 'x'},
        {provider: 'oracle', kind: 'instance', id: 'ocid1.instance.oc1..a', name: 'demo-vm-standard2-1-0001', cluster: 'demo'},
        {provider: 'oracle', kind: 'image', id: 'ocid1.image.oc1..b', name: 'citc-slurm-compute-demo-v1', cluster: 'demo'},
      ],
    }),
  )
})

const ctx = (over: Partial<SweepContext> = {}): SweepContext => ({
  clusterId: 'demo',
  region: 'eu-west-2',
  env: {CLOUD_DOUBLE_STATE: state, CLOUD_DOUBLE_LOG: log, CLOUD_DOUBLE_FAIL: undefined},
  ...over,
})
const left = () => (JSON.parse(readFileSync(state, 'utf8')) as {resources: Array<{id: string}>}).resources.map((r) => r.id).sort()
const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : [])

describe('sweepers', () => {
  it('google with gcloud application default credentials: gcloud is handed the same file Terraform read', async () => {
    const record = {
      name: 'demo',
      provider: 'google',
      cloud: {region: 'europe-west2', zone: 'europe-west2-b', project: 'p', credentials: 'gcloud-adc'},
    } as unknown as ClusterRecord
    const savedEnv = {CLOUDSDK_CONFIG: process.env.CLOUDSDK_CONFIG, CLOUD_DOUBLE_STATE: process.env.CLOUD_DOUBLE_STATE, CLOUD_DOUBLE_LOG: process.env.CLOUD_DOUBLE_LOG, CLOUD_DOUBLE_LOG_ENV: process.env.CLOUD_DOUBLE_LOG_ENV}
    Object.assign(process.env, {CLOUDSDK_CONFIG: join(work, 'gcloud'), CLOUD_DOUBLE_STATE: state, CLOUD_DOUBLE_LOG: log, CLOUD_DOUBLE_LOG_ENV: 'CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE'})
    try {
      await sweep(sweeperFor(record), undefined, {kinds: ['instance']})
    } finally {
      for (const [k, v] of Object.entries(savedEnv)) if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    expect(calls()).toContain(`env CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE=${join(work, 'gcloud', 'application_default_credentials.json')}`)
  })

  it.each([
    ['aws', awsSweeper, ['aws ec2 describe-instances'], 'i-1'],
    ['google', googleSweeper, ['gcloud compute instances list'], 'demo-n1-standard-1-0001'],
    ['oracle', oracleSweeper, ['oci search resource structured-search'], 'ocid1.instance.oc1..a'],
  ] as const)('%s: only instances, sparing what Terraform manages (the early sweep of destroy)', async (_, make, listed, id) => {
    const report = await sweep(make(ctx({project: 'p', zone: 'europe-west2-b'})), undefined, {kinds: ['instance'], keep: new Set(['ocid-of-mgmt'])})
    expect(report.deleted.map((r) => r.id)).toEqual([id])
    expect(calls().filter((c) => !/delete|terminate/.test(c)).map((c) => c.split(' ').slice(0, listed[0].split(' ').length).join(' '))).toEqual(listed)
    if (make === oracleSweeper) expect(calls()[0]).toMatch(/query instance resources where/)
    // Kept: an instance whose id or name the state knows.
    const kept = await sweep(make(ctx({project: 'p', zone: 'europe-west2-b'})), undefined, {kinds: ['image'], keep: new Set(['citc-slurm-compute-demo-v1'])})
    expect(kept.found).toEqual([])
  })

  it('aws: instances, images and snapshots tagged cluster=demo, deleted instances first', async () => {
    const report = await sweep(awsSweeper(ctx({env: {...ctx().env, AWS_PROFILE: 'research'}})))
    expect(report.found.map((r) => `${r.kind} ${r.id}`)).toEqual(['instance i-1', 'image ami-1', 'snapshot snap-1'])
    expect(report.found[0].name).toBe('demo-c5-xlarge-0001')
    expect(report.deleted).toHaveLength(3)
    expect(report.failed).toEqual([])
    expect(left()).not.toContain('i-1')
    expect(left()).toContain('i-9')
    expect(calls()[0]).toBe(
      'aws ec2 describe-instances --filters Name=tag:cluster,Values=demo Name=instance-state-name,Values=pending,running,stopping,stopped --region eu-west-2 --output json',
    )
    expect(calls().slice(3)).toEqual([
      'aws ec2 terminate-instances --instance-ids i-1 --region eu-west-2 --output json',
      'aws ec2 deregister-image --image-id ami-1 --region eu-west-2 --output json',
      'aws ec2 delete-snapshot --snapshot-id snap-1 --region eu-west-2 --output json',
    ])
  })

  it('google: instances (in their zone) and images labelled cluster=demo, in the project', async () => {
    const report = await sweep(googleSweeper(ctx({region: 'europe-west2', project: 'my-project'})))
    expect(report.found).toEqual([
      {kind: 'instance', id: 'demo-n1-standard-1-0001', location: 'europe-west2-b'},
      {kind: 'image', id: 'citc-slurm-compute-demo-v1'},
    ])
    expect(calls()).toContain('gcloud compute instances delete demo-n1-standard-1-0001 --zone europe-west2-b --project my-project --quiet')
    expect(left()).toContain('x-node')
    expect(left()).not.toContain('demo-n1-standard-1-0001')
  })

  it('oracle: the resource search for freeform tag cluster=demo, with the profile', async () => {
    const report = await sweep(oracleSweeper(ctx({region: 'uk-london-1', profile: 'DEFAULT'})))
    expect(report.deleted.map((r) => r.id)).toEqual(['ocid1.instance.oc1..a', 'ocid1.image.oc1..b'])
    expect(calls()[0]).toMatch(/^oci search resource structured-search --query-text query instance, image resources where \(freeformTags.key = 'cluster' && freeformTags.value = 'demo'\) --region uk-london-1 --profile DEFAULT --output json$/)
    expect(calls()).toContain('oci compute instance terminate --instance-id ocid1.instance.oc1..a --force --region uk-london-1 --profile DEFAULT --output json')
  })

  it('a resource that cannot be deleted is reported, and the others still go', async () => {
    const report = await sweep(awsSweeper(ctx({env: {...ctx().env, CLOUD_DOUBLE_FAIL: 'delete:ami-1'}})))
    expect(report.deleted.map((r) => r.id)).toEqual(['i-1', 'snap-1'])
    expect(report.failed).toEqual([{resource: {kind: 'image', id: 'ami-1', name: 'citc-slurm-compute-demo-v1'}, error: expect.stringMatching(/^aws ec2 deregister-image failed \(exit 255\): .*UnauthorizedOperation/)}])
  })

  it('a listing that fails, or a CLI that is not installed, is a listError (nothing is known)', async () => {
    const failing = await sweep(awsSweeper(ctx({env: {...ctx().env, CLOUD_DOUBLE_FAIL: 'list'}})))
    expect(failing.listError).toMatch(/aws ec2 describe-instances failed/)
    process.env.PATH = '/nonexistent'
    try {
      const missing = await sweep(oracleSweeper(ctx()))
      expect(missing.listError).toBe('oci is not installed')
    } finally {
      process.env.PATH = `${DOUBLES}:${savedPath}`
    }
  })
})
