// `citc create` on a cloud says out loud when SSH on the management node is open to the whole internet:
// one "warning: …" line per run (not one per step), naming --ssh-cidr, also in the result (--json's
// document); none for a narrower --ssh-cidr, and none when a cluster is continued (its range is fixed).
// Runs resolveCreate and runCreate in this process up to `terraform plan` (--plan-only), with the
// Terraform TEST DOUBLE (test/doubles/bin/terraform): nothing reaches a cloud.
import {mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import type {Io} from '../../../../src/lib/io.js'
import type {CreateRequest} from '../../../../src/lib/tasks/create/create-request.js'
import {resolveCreate} from '../../../../src/lib/tasks/create/resolve-create.js'
import {runCreate} from '../../../../src/lib/tasks/create/run-create.js'
import {NO_ADDRESS_SOURCES} from '../../../../src/lib/tasks/create/ssh-cidr.js'
import {ROOT} from '../../../helpers/cli.js'
import {DOUBLES} from '../../../helpers/cloud.js'

const work = mkdtempSync(join(tmpdir(), 'citc-ssh-warning-'))
const dataDir = join(work, 'data')
const home = join(work, 'home') // no cloud credentials: the double needs none
mkdirSync(home)

beforeAll(() => {
  vi.stubEnv('CITC_TERRAFORM', join(DOUBLES, 'terraform'))
  vi.stubEnv('TF_DOUBLE_LOG', join(work, 'tf.log'))
})
afterAll(() => {
  vi.unstubAllEnvs()
  rmSync(work, {recursive: true, force: true})
})

/** Runs create as the command does (without a terminal, --yes), keeping what stderr would show. */
async function create(r: Partial<CreateRequest>) {
  const notes: string[] = []
  const io: Io = {log: () => {}, note: (m) => notes.push(m), json: false, interactive: false, yes: true, renderer: 'silent'}
  const request: CreateRequest = {provider: 'aws', region: 'us-east-1', resume: false, planOnly: true, standIn: {}, providerFlags: {}, ...r}
  const plan = await resolveCreate(io, request, {dataDir, packageRoot: ROOT, discovery: {home, env: {}}, addresses: NO_ADDRESS_SOURCES})
  const result = (await runCreate(io, plan, dataDir)) as {warnings?: string[]; terraformDir: string}
  const tfvars = JSON.parse(readFileSync(join(result.terraformDir, 'citc.auto.tfvars.json'), 'utf8')) as {ssh_cidr: string}
  return {warnings: notes.filter((n) => /^warning:/.test(n)), result, sshCidr: tfvars.ssh_cidr}
}

const OPEN = 'SSH on the management node is open to the whole internet (0.0.0.0/0); pass --ssh-cidr ADDR/32 to limit it'

describe('citc create on a cloud: the SSH range said out loud', () => {
  it('no --ssh-cidr: Terraform gets 0.0.0.0/0, and the run warns exactly once, in the result too', async () => {
    const {warnings, result, sshCidr} = await create({name: 'open'})
    expect(sshCidr).toBe('0.0.0.0/0')
    expect(warnings).toEqual([`warning: ${OPEN}`])
    expect(result.warnings).toEqual([OPEN])
  }, 60_000)

  it('--ssh-cidr 0.0.0.0/0 given on purpose: the same one warning', async () => {
    const {warnings, result} = await create({name: 'chosen', sshCidr: '0.0.0.0/0'})
    expect(warnings).toEqual([`warning: ${OPEN}`])
    expect(result.warnings).toEqual([OPEN])
  }, 60_000)

  it('a narrower --ssh-cidr: Terraform gets it, and no warning', async () => {
    const {warnings, result, sshCidr} = await create({name: 'narrow', sshCidr: '203.0.113.7/32'})
    expect(sshCidr).toBe('203.0.113.7/32')
    expect(warnings).toEqual([])
    expect(result.warnings).toEqual([])
  }, 60_000)

  it('continuing a cluster made open (--resume) does not repeat it: the range is fixed once made', async () => {
    const {warnings} = await create({name: 'open', resume: true, region: undefined, provider: undefined})
    expect(warnings).toEqual([])
  }, 60_000)
})
