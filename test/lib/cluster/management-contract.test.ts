// The management node's contract (/etc/citc/cluster.json): what the reader accepts, and what it says —
// which file, which field, what to do — when the file is missing, from another citc version, or wrong.
// What the playbook really writes is parsed in test/playbooks/management-contract.test.ts.
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it, vi} from 'vitest'

import {
  clusterOnThisMachine,
  MANAGEMENT_CONTRACT_VERSION,
  ManagementContractError,
  parseManagementContract,
  readManagementContract,
  readManagementContractFile,
} from '../../../src/lib/cluster/management-contract.js'
import {CitcError} from '../../../src/lib/errors.js'
import {awsModule} from '../../../src/lib/providers/aws/index.js'
import type {DriverInput} from '../../../src/lib/providers/types.js'
import {driverFor} from '../../../src/lib/tasks/node/node-programs.js'
import {localTransport} from '../../../src/lib/transport/local.js'
import {FAKE_EC2_SECTION} from '../../doubles/cloud-api/ec2.js'

const work = mkdtempSync(join(tmpdir(), 'citc-contract-unit-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

const FILE = '/etc/citc/cluster.json'
const common = {
  version: MANAGEMENT_CONTRACT_VERSION,
  name: 'demo',
  sharedDir: '/mnt/shared',
  slurmUser: 'slurm',
  programsDir: '/usr/local/libexec/citc',
  confPath: '/etc/slurm/slurm.conf',
  elasticLog: '/var/log/citc/elastic.log',
}
const awsDriver = FAKE_EC2_SECTION
const aws = {...common, provider: 'aws', driver: awsDriver}
const local = {...common, slurmUser: 'root', provider: 'local', driver: {}}

/** The error parse throws for this document (JSON text or a value). */
function failure(doc: unknown): ManagementContractError {
  try {
    parseManagementContract(typeof doc === 'string' ? doc : JSON.stringify(doc), FILE, 'root@mgmt')
  } catch (error) {
    expect(error).toBeInstanceOf(ManagementContractError)
    return error as ManagementContractError
  }
  throw new Error('it parsed')
}

describe('parseManagementContract', () => {
  it('reads what the role writes, for local and a cloud, typed by provider', () => {
    expect(parseManagementContract(JSON.stringify(local), FILE)).toEqual(local)
    const c = parseManagementContract(JSON.stringify(aws), FILE)
    expect(c.provider === 'aws' && c.driver.subnetId).toBe('subnet-0abc')
  })

  it('ignores fields it does not know (a same-version playbook may add one)', () => {
    expect(parseManagementContract(JSON.stringify({...local, extra: 1}), FILE)).toEqual(local)
  })

  it('reads the layout before versions (citc 0.1: a local cluster keeps running after an upgrade)', () => {
    const {version: _, driver: __, ...old} = local
    expect(parseManagementContract(JSON.stringify({...old, local: {runDir: '/run/x'}}), FILE)).toEqual({...local, driver: {runDir: '/run/x'}})
    expect(parseManagementContract(JSON.stringify(old), FILE)).toEqual(local)
  })

  it('a file without a version that is not that layout (an older citc): names the file, the field and the way out', () => {
    const {version: _, driver: __, ...old} = aws
    const e = failure(old)
    expect(e.message).toBe(`${FILE} on root@mgmt was written by an older citc (it has no "version"; this citc reads version ${MANAGEMENT_CONTRACT_VERSION})`)
    expect(e.fields).toEqual(['version'])
    expect(e.clusterName).toBe('demo')
    expect(e.hint).toBe('re-run `citc create --name demo` where the cluster was created: its management playbook (re)writes this file')
    expect(e.exitCode).toBe(4)
    expect(e.details).toEqual({file: FILE, fields: ['version'], cluster: 'demo'})
  })

  it('an older version number, and a newer one (which no re-run with this citc should overwrite blindly)', () => {
    expect(failure({...local, version: 0}).message).toContain('was written by an older citc (version 0;')
    const newer = failure({...aws, version: MANAGEMENT_CONTRACT_VERSION + 1})
    expect(newer.message).toBe(`${FILE} on root@mgmt was written by a newer citc (version ${MANAGEMENT_CONTRACT_VERSION + 1}; this citc reads version ${MANAGEMENT_CONTRACT_VERSION})`)
    expect(newer.hint).toMatch(/^run the citc version that set up the cluster demo/)
  })

  it('a wrong or missing field: every one, by its path', () => {
    const e = failure({...aws, confPath: 'slurm.conf', driver: {...awsDriver, subnetId: '', baseImage: {os: 'ubuntu-24.04'}}})
    expect(e.fields.sort()).toEqual(['confPath', 'driver.baseImage.id', 'driver.subnetId'])
    expect(e.message).toMatch(new RegExp(`^${FILE} on root@mgmt is not what citc writes: `))
    expect(e.message).toContain('confPath: must be an absolute path')
    expect(e.message).toContain('driver.subnetId: must not be empty')
    expect(e.message).toContain('driver.baseImage.id: ')
  })

  it('a cloud file without its driver section, and an unknown provider', () => {
    const {driver: _, ...bare} = aws
    expect(failure(bare).fields).toEqual(['driver'])
    const azure = failure({...local, provider: 'azure'})
    expect(azure.fields).toEqual(['provider'])
  })

  it('not JSON, or not an object', () => {
    const e = failure('{"name": "demo",')
    expect(e.message).toMatch(new RegExp(`^${FILE} on root@mgmt is not JSON \\(.+\\): it is damaged$`))
    expect(e.hint).toContain('citc create --name <cluster>')
    expect(failure('[1]').message).toBe(`${FILE} on root@mgmt is not a JSON object`)
  })
})

describe('reading the file', () => {
  it('through a Transport: a missing file says so, and what to do', async () => {
    const missing = join(work, 'nope.json')
    const e = await readManagementContract(localTransport(), missing).catch((error: unknown) => error)
    expect(e).toBeInstanceOf(ManagementContractError)
    expect((e as Error).message).toBe(`${missing} does not exist on this machine: it is not a citc management node, or its setup did not finish`)
    const file = join(work, 'aws.json')
    writeFileSync(file, JSON.stringify(aws))
    expect(await readManagementContract(localTransport(), file)).toEqual(aws)
  })

  it('on this machine: optional when no cluster lives here, an error otherwise', () => {
    const missing = join(work, 'none.json')
    expect(readManagementContractFile(missing, {optional: true})).toBeUndefined()
    expect(() => readManagementContractFile(missing)).toThrow(/does not exist on this machine/)
    const bad = join(work, 'bad.json')
    writeFileSync(bad, JSON.stringify({...local, sharedDir: 'mnt'}))
    expect(() => readManagementContractFile(bad, {optional: true})).toThrow(/sharedDir: must be an absolute path/)
  })

  it('a file it cannot read: says so (not "missing")', () => {
    // A directory where the file should be: unreadable for root too (EACCES would not be).
    const dir = join(work, 'a-directory.json')
    mkdirSync(dir)
    expect(() => readManagementContractFile(dir)).toThrow(/^cannot read .*a-directory\.json on this machine: EISDIR/)
  })
})

describe('whose machine this is (local create\'s preflight)', () => {
  it('no file: nobody\'s; a file of this or an older citc: the cluster it names; one naming none: refused with the way out', () => {
    expect(clusterOnThisMachine(join(work, 'nobody.json'))).toBeUndefined()
    const file = join(work, 'whose.json')
    writeFileSync(file, JSON.stringify(local))
    expect(clusterOnThisMachine(file)).toBe('demo')
    writeFileSync(file, JSON.stringify({...local, version: 99, name: 'newer'}))
    expect(clusterOnThisMachine(file)).toBe('newer')
    writeFileSync(file, '{"version": 99}')
    const e = (() => {
      try {
        return clusterOnThisMachine(file)
      } catch (error) {
        return error
      }
    })()
    expect(e).toBeInstanceOf(CitcError)
    expect((e as CitcError).kind).toBe('invalidInput')
    expect((e as CitcError).hint).toBe(`if no citc cluster lives on this machine any more, remove ${file}; if one does, destroy it first (citc destroy)`)
  })
})

describe('the node programs', () => {
  it('get the local driver for a local cluster and the aws driver, given its section, for an aws cluster', async () => {
    // The aws driver is made, not run: running it needs EC2 (test/lib/providers/aws/driver.test.ts runs it against the fake).
    const made: DriverInput[] = []
    const real = await awsModule.nodeDriver()
    const spy = vi.spyOn(awsModule, 'nodeDriver').mockResolvedValue((input) => (made.push(input), real(input)))
    try {
      const d = await driverFor(parseManagementContract(JSON.stringify(aws), FILE))
      expect(made).toEqual([{cluster: 'demo', sharedDir: '/mnt/shared', confPath: '/etc/slurm/slurm.conf', section: awsDriver, standIn: undefined}])
      expect(Object.keys(d).sort()).toEqual(['bootImage', 'list', 'resume', 'suspend', 'terminate'])
      // A stand-in management node's cluster.json points the driver at doubles; a --stand-in file wins field by field.
      made.length = 0
      const standIn = {driver: {endpoints: {api: 'http://127.0.0.1:1/'}, imagesJson: '/tmp/images.json', concurrency: 2}}
      await driverFor(parseManagementContract(JSON.stringify({...aws, standIn}), FILE), {driver: {concurrency: 3}})
      expect(made[0]!.standIn).toEqual({endpoints: {api: 'http://127.0.0.1:1/'}, imagesJson: '/tmp/images.json', concurrency: 3})
    } finally {
      spy.mockRestore()
    }
    const local = await driverFor(parseManagementContract(JSON.stringify({...common, provider: 'local', driver: {runDir: join(work, 'run')}}), FILE))
    expect(await local.list()).toEqual([])
  })

  it("refuse a stand-in in cluster.json that is not one (a typo must not send a test's driver to the real cloud)", () => {
    expect(() => parseManagementContract(JSON.stringify({...aws, standIn: {driver: {endpoint: {api: 'http://127.0.0.1:1/'}}}}), FILE)).toThrow(/standIn\.driver/)
  })
})
