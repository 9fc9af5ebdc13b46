// `citc doctor --security -c NAME` (the built CLI) on a local cluster: the real collector runs on this
// machine, as root, against a planted management node tree given through the stand-in (securityRoot:
// /etc/citc, /etc/slurm, /etc/munge, /etc/exports*, /mnt/shared under a directory of the test's own).
// Planted: a world-readable file holding the LDAP admin password, a secret file at 0644, a no_root_squash
// export for another machine, a home open to others, slurmdbd.conf linked to the shared filesystem.
// Each is found with its fix; the fixes the report gives are then run as given and nothing is found.
// The secrets are never in the output nor in any process's argv while doctor runs. Sockets are this
// machine's own (whatever listens here): only their shape is asserted.
import {spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {MANAGEMENT_CONTRACT_VERSION} from '../../src/lib/cluster/management-contract.js'
import {argvTexts, findSecrets, sampleArgv, type Secret} from '../helpers/secrets.js'
import {cliSandbox, localClusterWithoutController} from './support.js'

const sandbox = cliSandbox('doctor-security')
const root = join(sandbox.tmp, 'node')
const at = (p: string) => join(root, p)
const ldapPassword = randomBytes(18).toString('base64url')
const dbPassword = randomBytes(18).toString('base64url')
const secrets: Secret[] = [
  {name: 'LDAP admin password', where: 'planted', value: ldapPassword, forms: [ldapPassword]},
  {name: 'accounting database password', where: 'planted', value: dbPassword, forms: [dbPassword]},
]
const uidOf = (user: string) => Number(spawnSync('id', ['-u', user], {encoding: 'utf8'}).stdout.trim())

function write(p: string, text: string, mode: number) {
  mkdirSync(join(at(p), '..'), {recursive: true})
  writeFileSync(at(p), text)
  chmodSync(at(p), mode)
}

let standIn = ''

beforeAll(() => {
  localClusterWithoutController(sandbox.dataDir, 'lab')
  const contract = {version: MANAGEMENT_CONTRACT_VERSION, name: 'lab', sharedDir: '/mnt/shared', slurmUser: 'root', programsDir: '/usr/local/libexec/citc', confPath: '/etc/slurm/slurm.conf', elasticLog: '/var/log/citc/elastic.log', provider: 'local', driver: {}}
  write('/etc/citc/cluster.json', JSON.stringify(contract), 0o644)
  mkdirSync(at('/etc/citc/secrets'), {recursive: true, mode: 0o700})
  chmodSync(at('/etc/citc/secrets'), 0o700)
  write('/etc/citc/secrets/ldap-admin-password', ldapPassword, 0o600)
  write('/etc/citc/secrets/slurmdbd-db-password', `${dbPassword}\n`, 0o600)
  write('/etc/munge/munge.key', randomBytes(128).toString('latin1'), 0o400)
  chownSync(at('/etc/munge/munge.key'), uidOf('munge'), -1)
  write('/etc/slurm/slurm.conf', 'ClusterName=lab\n', 0o644)
  write('/etc/slurm/slurmdbd.conf', `DbdHost=localhost\nStoragePass=${dbPassword}\n`, 0o600)
  write('/mnt/shared/apps/README', 'shared software\n', 0o644)
  mkdirSync(at('/mnt/shared/home/alice'), {recursive: true})
  chmodSync(at('/mnt/shared/home/alice'), 0o700)
  write('/mnt/shared/home/alice/notes', `alice's own copy: ${ldapPassword}\n`, 0o644) // inside a home: not looked at
  write('/etc/exports', '/mnt/shared 127.0.0.1(rw,sync,no_subtree_check,no_root_squash)\n', 0o644)
  standIn = join(sandbox.tmp, 'stand-in.json')
  writeFileSync(standIn, JSON.stringify({securityRoot: root}))
})

afterAll(() => sandbox.cleanup())

type Item = {ok: boolean; subject: string; summary: string; fix?: string}
type Check = {name: string; ok: boolean; summary: string; items: Item[]; notes: string[]}

async function security(label: string) {
  const sampler = sampleArgv()
  await sampler.ready
  const json = await sandbox.run(['doctor', '--security', '-c', 'lab', '--stand-in', standIn, '--json'])
  const human = await sandbox.run(['doctor', '--security', '-c', 'lab', '--stand-in', standIn])
  const argv = sampler.stop()
  // Never the secret: not in what doctor prints, not in any command line while it ran.
  expect(findSecrets(secrets, [
    {where: `${label} --json stdout`, text: json.stdout + json.stderr},
    {where: `${label} stdout`, text: human.stdout + human.stderr},
    ...argvTexts(argv),
  ])).toEqual([])
  expect(json.code, json.stderr).toBe(json.json().ok ? 0 : 4)
  const doc = json.json() as {cluster: string; where: string; ok: boolean; checks: Check[]; scan: {entries: number; capped: boolean; secretsCompared: number}}
  const byName = Object.fromEntries(doc.checks.map((c) => [c.name, c]))
  return {doc, byName, human, failing: (name: string) => byName[name].items.filter((i) => !i.ok)}
}

describe('citc doctor --security on a planted management node', () => {
  it('as citc leaves it: no finding in files, secret files, homes or exports; the sockets listed', async () => {
    const {doc, byName, human} = await security('clean')
    expect(doc).toMatchObject({cluster: 'lab', where: 'this machine'})
    expect(doc.checks.map((c) => c.name)).toEqual(['sockets', 'readable files', 'secret files', 'homes', 'exports'])
    for (const name of ['readable files', 'secret files', 'homes', 'exports']) expect(byName[name], name).toMatchObject({ok: true})
    expect(doc.scan).toMatchObject({capped: false, secretsCompared: 2})
    expect(doc.scan.entries).toBeGreaterThan(10)
    expect(byName['secret files'].items.map((i) => i.subject)).toEqual([at('/etc/citc/secrets'), at('/etc/citc/secrets/ldap-admin-password'), at('/etc/citc/secrets/slurmdbd-db-password'), at('/etc/munge/munge.key'), at('/etc/slurm/slurmdbd.conf')])
    expect(byName.exports.items).toEqual([{ok: true, subject: `${at('/etc/exports')}:1 /mnt/shared 127.0.0.1`, summary: 'no_root_squash for the management node itself (it makes the homes)'}])
    // This machine's sockets, whatever they are: each with where it listens and who can reach it.
    for (const i of byName.sockets.items) expect(i.subject).toMatch(/^(tcp|udp) \S+:\d+$/)
    expect(human.stdout).toMatch(/^Security of cluster lab \(this machine\):$/m)
    expect(human.stdout).toMatch(/^✓ secret files +5 paths as they should be$/m)
  })

  it('planted: a readable file with a secret, a 0644 secret, a no_root_squash export, an open home, slurmdbd.conf on the shared filesystem; fixed by the fixes given', async () => {
    write('/mnt/shared/apps/job.sh', `#!/bin/sh\nldapsearch -w ${ldapPassword} -x\n`, 0o644)
    chmodSync(at('/etc/citc/secrets/slurmdbd-db-password'), 0o644)
    write('/etc/exports.d/citc.exports', '/mnt/shared 10.9.8.7(rw,sync,no_subtree_check,no_root_squash)\n', 0o644)
    mkdirSync(at('/mnt/shared/home/bob'), {mode: 0o755})
    chmodSync(at('/mnt/shared/home/bob'), 0o755)
    mkdirSync(at('/mnt/shared/etc/slurm'), {recursive: true})
    write('/mnt/shared/etc/slurm/slurmdbd.conf', `StoragePass=${dbPassword}\n`, 0o600)
    rmSync(at('/etc/slurm/slurmdbd.conf'))
    symlinkSync(at('/mnt/shared/etc/slurm/slurmdbd.conf'), at('/etc/slurm/slurmdbd.conf'))

    const {doc, failing, human} = await security('planted')
    expect(doc.ok).toBe(false)
    expect(failing('readable files')).toEqual([
      {ok: false, subject: at('/mnt/shared/apps/job.sh'), summary: "readable by others (0644 root:root): its content holds one of the cluster's secrets", fix: `chmod go-rwx ${at('/mnt/shared/apps/job.sh')}`},
    ])
    expect(failing('secret files').map((i) => [i.subject, i.fix])).toEqual([
      [at('/etc/citc/secrets/slurmdbd-db-password'), `chown root:root ${at('/etc/citc/secrets/slurmdbd-db-password')} && chmod 0600 ${at('/etc/citc/secrets/slurmdbd-db-password')}`],
      [at('/etc/slurm/slurmdbd.conf'), 'citc create --name lab'],
    ])
    expect(failing('homes').map((i) => i.subject)).toEqual([at('/mnt/shared/home/bob')])
    expect(failing('exports')).toEqual([
      {
        ok: false,
        subject: `${at('/etc/exports.d/citc.exports')}:1 /mnt/shared 10.9.8.7`,
        summary: 'no_root_squash: root on 10.9.8.7 is root on /mnt/shared',
        fix: `sed -i '1s/\\bno_root_squash\\b/root_squash/' ${at('/etc/exports.d/citc.exports')} && exportfs -ra`,
      },
    ])
    expect(human.code).toBe(4)
    expect(human.stdout).toContain(`✗ ${at('/mnt/shared/apps/job.sh')}: readable by others (0644 root:root): its content holds one of the cluster's secrets`)
    expect(human.stdout).toContain(`    fix: chmod go-rwx ${at('/mnt/shared/apps/job.sh')}`)
    expect(human.stdout).toMatch(/^The security of lab needs attention: .*readable files, secret files, homes, exports\.$/m)

    // The fixes as given (exportfs left out: this test exports nothing for real); what citc create would do, by hand.
    for (const name of ['readable files', 'secret files', 'homes', 'exports']) {
      for (const i of failing(name)) {
        if (i.fix?.startsWith('citc ')) continue
        const r = spawnSync('sh', ['-c', i.fix!.replace(/ && exportfs -ra$/, '')], {encoding: 'utf8'})
        expect(r.status, `${i.fix}: ${r.stderr}`).toBe(0)
      }
    }
    rmSync(at('/etc/slurm/slurmdbd.conf'))
    write('/etc/slurm/slurmdbd.conf', `StoragePass=${dbPassword}\n`, 0o600)
    rmSync(at('/mnt/shared/etc/slurm/slurmdbd.conf'))

    const after = await security('fixed')
    for (const name of ['readable files', 'secret files', 'homes', 'exports']) expect(after.byName[name], name).toMatchObject({ok: true})
    expect(after.byName.exports.items.map((i) => i.summary)).toEqual(['no_root_squash for the management node itself (it makes the homes)', 'squashes root'])
  })

  it('--security without a cluster says to pass -c', async () => {
    const r = await sandbox.run(['doctor', '--security'])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--security checks one cluster’s management node/)
    expect(r.stderr).toMatch(/pass -c NAME \(or set CITC_CLUSTER\)/)
  })
})
