// destroy's sweep finds the images `citc rebuild-image` makes on each cloud: the tags cloud.pkr.hcl
// puts on them (read with HashiCorp's HCL parser, @cdktf/hcl2json) are rendered for a cluster and
// given to the cloud API TEST DOUBLES (test/doubles/bin/{aws,gcloud,oci}, first on PATH) as the only
// mark of the cluster; each sweeper lists and deletes exactly those (and the AMI's snapshots, which
// carry the same tags), and leaves another cluster's.
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parse} from '@cdktf/hcl2json'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {awsSweeper} from '../../../src/lib/providers/aws/sweep.js'
import {googleSweeper} from '../../../src/lib/providers/google/sweep.js'
import {oracleSweeper} from '../../../src/lib/providers/oracle/sweep.js'
import {sweep, type SweepContext} from '../../../src/lib/providers/sweep.js'
import {ROOT} from '../../helpers/cli.js'
import {DOUBLES} from '../../helpers/cloud.js'

const work = mkdtempSync(join(tmpdir(), 'citc-sweep-images-'))
const state = join(work, 'cloud.json')
const savedPath = process.env.PATH
beforeAll(() => {
  process.env.PATH = `${DOUBLES}:${savedPath}`
})
afterAll(() => {
  process.env.PATH = savedPath
  rmSync(work, {recursive: true, force: true})
})

type Hcl = {locals: Array<Record<string, Record<string, string>>>; source: Record<string, Record<string, Array<Record<string, string>>>>}

/** "${var.cluster}" and the like, for the variables of one build (only what the tags use). */
function render(expr: string, vars: Record<string, string>): string {
  return expr
    .replace(/^\$\{replace\(var\.(\w+), "_", "-"\)\}$/, (_, v: string) => vars[v].replace(/_/g, '-'))
    .replace(/^\$\{var\.(\w+)\}$/, (_, v: string) => {
      if (!(v in vars)) throw new Error(`render: no variable ${v}`)
      return vars[v]
    })
}

async function templateTags(cluster: string, arch: string) {
  const hcl = (await parse('cloud.pkr.hcl', readFileSync(join(ROOT, 'templates', 'packer', 'cloud.pkr.hcl'), 'utf8'))) as Hcl
  const locals = Object.assign({}, ...hcl.locals) as Record<string, Record<string, string>>
  const vars = {cluster, arch, version: '20260101120000', image_name: `citc-slurm-compute-${cluster}-v20260101120000`}
  const local = (ref: string) => {
    const m = /^\$\{local\.(\w+)\}$/.exec(ref)
    if (!m) throw new Error(`not a local: ${ref}`)
    return Object.fromEntries(Object.entries(locals[m[1]]).map(([k, v]) => [k, render(v, vars)]))
  }
  const aws = hcl.source['amazon-ebs'].aws[0]
  const google = hcl.source.googlecompute.google[0]
  const oracle = hcl.source['oracle-oci'].oracle[0]
  return {awsImage: local(aws.tags), awsSnapshot: local(aws.snapshot_tags), googleImage: local(google.image_labels), oracleImage: local(oracle.tags)}
}

const ctx = (): SweepContext => ({clusterId: 'demo', region: 'eu-west-2', project: 'p', env: {CLOUD_DOUBLE_STATE: state}})
const left = () => (JSON.parse(readFileSync(state, 'utf8')) as {resources: Array<{id: string}>}).resources.map((r) => r.id).sort()

describe("destroy's sweep and the images cloud.pkr.hcl tags", () => {
  it('every cloud finds and deletes its images (and AMI snapshots) by the tags the template gives them', async () => {
    const mine = await templateTags('demo', 'x86_64')
    const other = await templateTags('other', 'x86_64')
    expect(mine.awsImage.cluster).toBe('demo')
    expect(mine.googleImage).toEqual({cluster: 'demo', 'citc-image-version': '20260101120000', 'citc-image-arch': 'x86-64'})
    writeFileSync(
      state,
      JSON.stringify({
        // No "cluster" field: the tags are the only mark, as on the cloud.
        resources: [
          {provider: 'aws', kind: 'image', id: 'ami-1', name: mine.awsImage.Name, tags: mine.awsImage},
          {provider: 'aws', kind: 'snapshot', id: 'snap-1', tags: mine.awsSnapshot},
          {provider: 'aws', kind: 'image', id: 'ami-9', name: other.awsImage.Name, tags: other.awsImage},
          {provider: 'google', kind: 'image', id: 'citc-slurm-compute-demo-v20260101120000', tags: mine.googleImage},
          {provider: 'google', kind: 'image', id: 'citc-slurm-compute-other-v20260101120000', tags: other.googleImage},
          {provider: 'oracle', kind: 'image', id: 'ocid1.image.oc1..mine', name: mine.oracleImage.Name, tags: mine.oracleImage},
          {provider: 'oracle', kind: 'image', id: 'ocid1.image.oc1..other', name: other.oracleImage.Name, tags: other.oracleImage},
        ],
      }),
    )
    const aws = await sweep(awsSweeper(ctx()))
    expect(aws.deleted.map((r) => `${r.kind} ${r.id}`)).toEqual(['image ami-1', 'snapshot snap-1'])
    const google = await sweep(googleSweeper(ctx()))
    expect(google.deleted.map((r) => r.id)).toEqual(['citc-slurm-compute-demo-v20260101120000'])
    const oracle = await sweep(oracleSweeper(ctx()))
    expect(oracle.deleted.map((r) => r.id)).toEqual(['ocid1.image.oc1..mine'])
    expect(left()).toEqual(['ami-9', 'citc-slurm-compute-other-v20260101120000', 'ocid1.image.oc1..other'])
  }, 60_000)
})
