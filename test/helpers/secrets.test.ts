// The secret check's tools on a planted tree: each secret found where citc puts it, each form of a leak
// found (and nothing found where there is none), argv sampled from a real process, world-readable files
// told from files only their owner can reach, and the log files a local cluster writes.
import {execFileSync, spawn} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {randomBytes} from 'node:crypto'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {argvTexts, clusterLogFiles, clusterScanRoots, clusterSecrets, credentialFileSecrets, fileTexts, findSecrets, sampleArgv, worldReadableFiles, type Secret} from './secrets.js'

let root: string
let clusterDir: string
const munge = randomBytes(1024)
const ldapPassword = 'Ldap' + randomBytes(12).toString('hex')
const dbPassword = 'Db' + randomBytes(12).toString('hex')

function plant(path: string, data: string | Buffer, mode = 0o600) {
  mkdirSync(dirname(path), {recursive: true})
  writeFileSync(path, data, {mode})
  chmodSync(path, mode)
}

function sshKey(path: string) {
  mkdirSync(dirname(path), {recursive: true})
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test', '-f', path])
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'citc-secrets-'))
  clusterDir = join(root, 'data/clusters/c1')
  plant(join(root, 'etc/munge/munge.key'), munge, 0o400)
  plant(join(root, 'etc/citc/ldap.json'), JSON.stringify({adminPasswordFile: '/etc/citc/secrets/ldap-admin-password'}), 0o644)
  plant(join(root, 'etc/citc/secrets/ldap-admin-password'), ldapPassword)
  plant(join(root, 'etc/citc/secrets/slurmdbd-db-password'), dbPassword)
  plant(join(root, 'etc/slurm/slurmdbd.conf'), `AuthType=auth/munge\nStoragePass=${dbPassword}\n`)
  sshKey(join(clusterDir, 'keys/admin_ed25519'))
  plant(join(root, 'mnt/shared/home/alice/.password'), 'alicePassword-0123456789\n', 0o400)
  sshKey(join(root, 'etc/citc/compute-host-keys/ssh_host_ed25519_key'))
  sshKey(join(root, 'var/lib/citc/images/c1/img-1/rootfs/etc/ssh/ssh_host_ed25519_key'))
})

afterAll(() => rmSync(root, {recursive: true, force: true}))

const byName = (secrets: Secret[]) => Object.fromEntries(secrets.map((s) => [s.name, s.where]))

describe('clusterSecrets', () => {
  it('reads every secret from where the playbooks and citc put it', () => {
    const secrets = clusterSecrets({clusterDir, root})
    expect(byName(secrets)).toEqual({
      'munge key': join(root, 'etc/munge/munge.key'),
      'LDAP admin password': join(root, 'etc/citc/secrets/ldap-admin-password'),
      'accounting database password': join(root, 'etc/citc/secrets/slurmdbd-db-password'),
      'password of alice': join(root, 'mnt/shared/home/alice/.password'),
      'private key (cluster key keys/admin_ed25519)': join(clusterDir, 'keys/admin_ed25519'),
      [`private key (host key ${join(root, 'etc/citc/compute-host-keys/ssh_host_ed25519_key')})`]: join(root, 'etc/citc/compute-host-keys/ssh_host_ed25519_key'),
      [`private key (host key ${join(root, 'var/lib/citc/images/c1/img-1/rootfs/etc/ssh/ssh_host_ed25519_key')})`]: join(root, 'var/lib/citc/images/c1/img-1/rootfs/etc/ssh/ssh_host_ed25519_key'),
    })
    const value = (n: string) => secrets.find((s) => s.name === n)?.value
    expect(value('munge key')).toBe(munge.toString('base64'))
    expect(value('LDAP admin password')).toBe(ldapPassword)
    expect(value('accounting database password')).toBe(dbPassword)
    expect(value('password of alice')).toBe('alicePassword-0123456789')
  })

  it('reads StoragePass on its own when it is not the password file', () => {
    const other = mkdtempSync(join(tmpdir(), 'citc-secrets-'))
    try {
      plant(join(other, 'etc/munge/munge.key'), munge)
      plant(join(other, 'etc/citc/secrets/ldap-admin-password'), ldapPassword)
      plant(join(other, 'etc/citc/secrets/slurmdbd-db-password'), dbPassword)
      plant(join(other, 'etc/slurm/slurmdbd.conf'), 'StoragePass=AnotherPassword123\n')
      const secrets = clusterSecrets({clusterDir: join(other, 'none'), root: other, sharedDir: '/srv/shared'})
      expect(secrets.find((s) => s.name === 'slurmdbd StoragePass')?.value).toBe('AnotherPassword123')
    } finally {
      rmSync(other, {recursive: true, force: true})
    }
  })

  it('refuses a tree without the management node secrets, naming what is missing', () => {
    expect(() => clusterSecrets({clusterDir, root: join(root, 'nothing')})).toThrow(/not found.*munge\.key.*ldap-admin-password.*slurmdbd-db-password/)
  })

  it('reads cloud credentials: INI secrets, JSON service-account keys, environment', () => {
    const ini = join(root, 'aws-credentials')
    plant(ini, '[default]\naws_access_key_id = AKIAEXAMPLE0000000000\naws_secret_access_key = wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY\n')
    const json = join(root, 'sa.json')
    const pem = execFileSync('openssl', ['genpkey', '-algorithm', 'ed25519']).toString()
    plant(json, JSON.stringify({type: 'service_account', private_key_id: 'abcdef0123456789abcdef', private_key: pem, client_email: 'x@y.iam'}))
    expect(credentialFileSecrets(ini).map((s) => s.value)).toEqual(['wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY'])
    expect(credentialFileSecrets(json).map((s) => s.name).sort()).toEqual(['cloud credential private_key', 'cloud credential private_key_id'])
    const all = clusterSecrets({clusterDir, root, credentialFiles: [ini], credentialEnv: {OCI_KEY: 'env-secret-value-1234'}})
    expect(all.filter((s) => s.name.startsWith('cloud credential')).map((s) => s.where)).toEqual([ini, 'env OCI_KEY'])
  })
})

describe('findSecrets', () => {
  it('finds each form of a leak and prints the secret name and place only', () => {
    const secrets = clusterSecrets({clusterDir, root})
    const adminKey = secrets.find((s) => s.name.includes('admin_ed25519'))!.value
    const middleLine = adminKey.split('\n')[3]
    const texts = [
      {where: 'b64 log', text: `key: ${munge.toString('base64')}\n`},
      {where: 'hex dump', text: munge.subarray(0, 40).toString('hex')},
      {where: 'raw file', text: Buffer.concat([Buffer.from('head'), munge, Buffer.from('tail')])},
      {where: 'json', text: JSON.stringify({password: dbPassword, key: adminKey})},
      {where: 'argv', text: `ldapadd -x -w ${ldapPassword}`},
      {where: 'pem line', text: `...${middleLine}...`},
      {where: 'clean', text: 'nothing to see: ' + 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI public'},
    ]
    const hits = findSecrets(secrets, texts)
    expect(hits.sort()).toEqual(
      [
        'munge key @ b64 log',
        'munge key @ hex dump',
        'munge key @ raw file',
        'accounting database password @ json',
        'private key (cluster key keys/admin_ed25519) @ json',
        'LDAP admin password @ argv',
        'private key (cluster key keys/admin_ed25519) @ pem line',
      ].sort(),
    )
    for (const h of hits) for (const s of secrets) expect(h).not.toContain(s.value.slice(0, 16))
  })

  it("does not take a key's public lines for a leak", () => {
    const secrets = clusterSecrets({clusterDir, root})
    const pub = execFileSync('ssh-keygen', ['-y', '-f', join(clusterDir, 'keys/admin_ed25519')]).toString()
    expect(findSecrets(secrets, [{where: 'authorized_keys', text: pub}])).toEqual([])
    // while the private key itself is one
    expect(findSecrets(secrets, fileTexts([join(clusterDir, 'keys/admin_ed25519')]))).toHaveLength(1)
  })

  it('reads files as texts', () => {
    const f = join(root, 'some.log')
    plant(f, `StoragePass=${dbPassword}\n`)
    expect(findSecrets(clusterSecrets({clusterDir, root}), fileTexts([f, join(root, 'gone.log')]))).toEqual([`accounting database password @ ${f}`])
  })
})

describe('sampleArgv', () => {
  it("sees a short-lived process's argv", async () => {
    // Its life covers a slow start (ready waits up to 15 s) and the 20-s wait below: a sampler past its
    // deadline stops, and would miss the process for that reason alone.
    const sampler = sampleArgv({everyMs: 20, maxMs: 60_000})
    const marker = `citc-argv-marker-${randomBytes(6).toString('hex')}`
    await sampler.ready
    // Two commands: dash would exec a single one in place of itself, and the marker ($0) would go.
    // It lives until the sampler has written its line (at most 20 s): on a busy machine one pass over
    // /proc can take longer than any fixed short life (0.4 s and 2 s both were missed in full runs).
    const child = spawn('sh', ['-c', 'sleep 20; true', marker], {stdio: 'ignore'})
    const exited = new Promise((r) => child.on('exit', r))
    for (let waited = 0; waited < 20_000 && !(existsSync(sampler.file) && readFileSync(sampler.file, 'utf8').includes(marker)); waited += 20) await new Promise((r) => setTimeout(r, 20))
    child.kill('SIGKILL')
    await exited
    const lines = sampler.stop()
    // sh's own pid, and sometimes its fork for `sleep` caught before the exec (a copy of sh's argv).
    const seen = lines.filter((l) => l.includes(marker))
    expect(seen).toContain(`${child.pid}: sh -c sleep 20; true ${marker}`)
    for (const l of seen) expect(l).toMatch(new RegExp(`^\\d+: sh -c sleep 20; true ${marker}$`))
    expect(findSecrets([{name: 'marker', where: 'x', value: marker, forms: [marker]}], argvTexts(lines))).toContain(`marker @ argv of ${child.pid} (sh)`)
    expect(sampler.stop()).toBe(lines)
  })

  it('stops on its own after maxMs', async () => {
    const sampler = sampleArgv({everyMs: 20, maxMs: 100})
    await sampler.ready.catch(() => undefined) // it may be past its deadline before its first pass
    await new Promise((r) => setTimeout(r, 300))
    const marker = `citc-late-${randomBytes(6).toString('hex')}`
    const child = spawn('sh', ['-c', 'sleep 0.3; true', marker], {stdio: 'ignore'})
    await new Promise((r) => child.on('exit', r))
    const lines = sampler.stop()
    expect(lines.some((l) => l.includes(marker))).toBe(false)
  })
})

describe('worldReadableFiles', () => {
  it('lists files others can read, and no file behind a closed directory or a symlink', () => {
    const t = join(root, 'wr')
    plant(join(t, 'open/readable.conf'), 'x', 0o644)
    plant(join(t, 'open/private.conf'), 'x', 0o600)
    plant(join(t, 'closed/behind.conf'), 'x', 0o644)
    plant(join(root, 'outside/readable.conf'), 'x', 0o644)
    chmodSync(root, 0o755)
    chmodSync(t, 0o755)
    chmodSync(join(t, 'open'), 0o755)
    chmodSync(join(t, 'closed'), 0o700)
    chmodSync(join(root, 'outside'), 0o755)
    symlinkSync(join(root, 'outside'), join(t, 'link-dir'))
    symlinkSync(join(root, 'outside/readable.conf'), join(t, 'open/link-file'))
    expect(worldReadableFiles([t])).toEqual([join(t, 'open/readable.conf')])
    expect(worldReadableFiles([join(t, 'closed/behind.conf'), join(t, 'open/readable.conf')])).toEqual([join(t, 'open/readable.conf')])
    expect(() => worldReadableFiles([t], {maxEntries: 2})).toThrow(/more than 2 entries/)
  })
})

describe('clusterLogFiles', () => {
  it("lists citc's, Slurm's and the daemons' logs, not other logs", () => {
    const logs = join(root, 'logs-tree')
    const cdir = join(logs, 'data/clusters/c1')
    for (const f of ['var/log/slurm/slurmctld.log', 'var/log/slurm/slurmdbd.log', 'var/log/citc/nodes/c1-1.out', 'var/log/munge/munged.log', 'var/log/mysql/error.log', 'var/log/apt/history.log', 'var/log/syslog'])
      plant(join(logs, f), 'x')
    plant(join(cdir, 'logs/ansible-1.log'), 'x')
    expect(clusterLogFiles({clusterDir: cdir, root: logs}).sort()).toEqual(
      [
        join(cdir, 'logs/ansible-1.log'),
        ...['var/log/slurm/slurmctld.log', 'var/log/slurm/slurmdbd.log', 'var/log/citc/nodes/c1-1.out', 'var/log/munge/munged.log', 'var/log/mysql/error.log', 'var/log/syslog'].map((f) => join(logs, f)),
      ].sort(),
    )
  })
})

describe('clusterScanRoots', () => {
  it("names the system's places and each image's etc, root and tmp, not whole images", () => {
    const t = join(root, 'scan-tree')
    mkdirSync(join(t, 'var/lib/citc/images/c1/img-1/rootfs/usr'), {recursive: true})
    mkdirSync(join(t, 'var/lib/citc/node-sync'), {recursive: true})
    symlinkSync('img-1', join(t, 'var/lib/citc/images/c1/current'))
    const img = join(t, 'var/lib/citc/images/c1/img-1/rootfs')
    expect(clusterScanRoots({cluster: 'c1', root: t})).toEqual([
      join(t, 'etc'),
      join(t, 'mnt/shared'),
      join(t, 'var/log'),
      join(t, 'run/citc'),
      join(t, 'var/lib/citc/node-sync'),
      ...['etc', 'root', 'tmp', 'var/tmp'].map((d) => join(img, d)),
    ])
  })
})
