// citc doctor: the tools and the credentials, with and without a Terraform on PATH. The Terraform found
// is test/doubles/bin/terraform (the TEST DOUBLE of the terraform binary) or none: PATH decides.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {citc, ROOT} from '../helpers/cli.js'

const DOUBLES = resolve(ROOT, 'test', 'doubles', 'bin')
const work = mkdtempSync(join(tmpdir(), 'citc-doctor-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

const home = join(work, 'home')
mkdirSync(join(home, '.aws'), {recursive: true})
writeFileSync(join(home, '.aws', 'credentials'), '[research]\naws_access_key_id = AKIAIOSFODNN7EXAMPLE\naws_secret_access_key = x\n')

// /usr/local/bin is left out on purpose: a real terraform may live there.
const SYSTEM_PATH = '/usr/bin:/bin'
const doctor = (args: string[], env: NodeJS.ProcessEnv) =>
  citc(['doctor', ...args], {env: {HOME: home, CITC_TERRAFORM: undefined, AWS_PROFILE: undefined, AWS_ACCESS_KEY_ID: undefined, GOOGLE_APPLICATION_CREDENTIALS: undefined, ...env}})

type Tool = {name: string; ok: boolean; required: boolean; version?: string; path?: string; problem?: string}

describe('citc doctor', () => {
  it('with a terraform on PATH: every required tool found, versions shown, credentials listed; exit 0', async () => {
    const r = await doctor(['--json'], {PATH: `${DOUBLES}:${SYSTEM_PATH}`})
    expect(r.code, r.stderr).toBe(0)
    const doc = r.json()
    expect(doc.ok).toBe(true)
    const tools = Object.fromEntries((doc.tools as Tool[]).map((t) => [t.name, t]))
    expect(tools.terraform).toMatchObject({ok: true, required: true, version: '1.9.8', path: join(DOUBLES, 'terraform')})
    expect(tools.node).toMatchObject({ok: true, required: true, version: process.versions.node})
    expect(tools['ansible-playbook']).toMatchObject({ok: true, required: true, version: expect.stringMatching(/^\d+\.\d+/)})
    expect(tools.ssh).toMatchObject({ok: true, required: false, version: expect.stringMatching(/^\d/)})
    expect(tools['ssh-keygen']).toMatchObject({ok: true, required: false})
    expect(tools.npm).toMatchObject({ok: true, required: true})
    const aws = doc.credentials.find((c: {provider: string}) => c.provider === 'aws')
    expect(aws.found.map((s: {id: string}) => s.id)).toEqual(['profile:research'])
    expect(aws.wouldUse).toMatch(/AWS profile research/)
    expect(doc.credentials.find((c: {provider: string}) => c.provider === 'google').found).toEqual([])
  })

  it('without one: says what is missing and how to install it; exit 4 (also under --json)', async () => {
    const human = await doctor([], {PATH: SYSTEM_PATH})
    expect(human.code).toBe(4)
    expect(human.stdout).toMatch(/^✗ terraform +neither terraform nor tofu was found on PATH/m)
    expect(human.stdout).toMatch(/install Terraform >= 1\.5/)
    expect(human.stdout).toMatch(/Missing: terraform\./)
    const json = await doctor(['--json'], {PATH: SYSTEM_PATH})
    expect(json.code).toBe(4)
    const doc = json.json()
    expect(doc.ok).toBe(false)
    expect(doc.missing).toEqual(['terraform'])
  })

  it('an old Terraform is refused with its version', async () => {
    const r = await doctor(['--json', '--provider', 'aws'], {PATH: `${DOUBLES}:${SYSTEM_PATH}`, TF_DOUBLE_VERSION: '1.4.6'})
    expect(r.code).toBe(4)
    expect((r.json().tools as Tool[]).find((t) => t.name === 'terraform')?.problem).toMatch(/Terraform 1\.4\.6 is older than 1\.5\.0/)
  })

  it('--provider local needs no Terraform', async () => {
    const r = await doctor(['--provider', 'local', '--json'], {PATH: SYSTEM_PATH})
    expect(r.code, r.stdout).toBe(0)
    expect((r.json().tools as Tool[]).map((t) => t.name)).toEqual(['node', 'ansible-playbook', 'ssh', 'ssh-keygen'])
  })
})
