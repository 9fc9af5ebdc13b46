// The management playbook and the teardown playbook, for real on this machine (Debian 12, root, no
// systemd): munge, MariaDB + slurmdbd, slapd + nslcd, the shared layout and citc's node programs,
// run through runPlaybook and the local Transport as `citc create --provider local` runs them. Then a
// second run that must change nothing, and the teardown, which must leave no daemon of the cluster
// and must not touch anybody else's (a private munged started here stands in for another cluster's).
//
// It changes this machine's system state (/mnt/shared, /etc/citc, slapd, MariaDB, nsswitch.conf), so
// it refuses to run where a citc cluster already lives, and takes a machine-wide lock that other
// tests changing system state can share (LOCK_DIR below).
import {type ChildProcess, execFileSync, spawn, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {lockSystem} from '../helpers/system-lock.js'
import {waitFor} from '../helpers/wait.js'

import {MANAGEMENT_CONTRACT_VERSION, readManagementContractFile} from '../../src/lib/cluster/management-contract.js'
import {pidAlive, sleep} from '../../src/lib/proc.js'
import {type PlaybookResult, runPlaybook} from '../../src/lib/tools/ansible.js'
import {localTransport} from '../../src/lib/transport/local.js'
import {freePort} from '../helpers/slurm.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const PLAYBOOKS = join(ROOT, 'playbooks')
const CITC_BIN = join(ROOT, 'bin', 'run.js')
const SHARED = '/mnt/shared'
const PROGRAMS = '/usr/local/libexec/citc'
const SECRETS = ['/etc/citc/secrets/slurmdbd-db-password', '/etc/citc/secrets/ldap-admin-password']
const FAKE_NODE = 'e2epb-fake1'

const isRoot = process.getuid?.() === 0
const hasAnsible = spawnSync('sh', ['-c', 'command -v ansible-playbook'], {encoding: 'utf8'}).status === 0

function sh(cmd: string, opts: {timeout?: number} = {}) {
  const r = spawnSync('sh', ['-c', cmd], {encoding: 'utf8', timeout: opts.timeout ?? 30_000})
  return {status: r.status ?? -1, stdout: r.stdout ?? '', stderr: r.stderr ?? ''}
}

const readPid = (file: string) => {
  try {
    const n = Number(readFileSync(file, 'utf8').trim().split(/\s+/)[0])
    return Number.isInteger(n) && n > 0 ? n : undefined
  } catch {
    return undefined
  }
}

let work: string
let varsFile: string
let nsswitchBefore: string
let release: (() => void) | undefined
let ranPlaybook = false
let tornDown = false
let otherMunged: {pid: number; dir: string} | undefined
let fakeNode: ChildProcess | undefined
const logs: string[] = []

async function play(playbook: 'management.yml' | 'teardown.yml', log: string, tasks?: string[]): Promise<PlaybookResult> {
  const logFile = join(work, log)
  logs.push(logFile)
  return runPlaybook(localTransport(), {
    playbookPath: join(PLAYBOOKS, playbook),
    extraVarsPath: varsFile,
    logFile,
    onTask: (t) => tasks?.push(t),
    timeoutMs: 20 * 60_000,
  })
}

describe('the management and teardown playbooks on this machine', () => {
  beforeAll(async () => {
    // Fail, never skip, where this test cannot run: CI installs what it needs and runs as root.
    if (!isRoot || !hasAnsible) throw new Error('this test needs root and ansible-playbook (bash .ci/run installs it)')
    const held = await lockSystem('playbooks e2e test')
    release = () => held.release()
    // A cluster made by citc already lives here (a developer's own): never take it down from a test.
    if (existsSync('/etc/citc/cluster.json')) {
      throw new Error('a citc cluster lives on this machine (/etc/citc/cluster.json): destroy it first, this test would take it down')
    }
    work = mkdtempSync(join(tmpdir(), 'citc-playbooks-e2e-'))
    nsswitchBefore = readFileSync('/etc/nsswitch.conf', 'utf8')
    varsFile = join(work, 'vars.json')
    writeFileSync(
      varsFile,
      JSON.stringify({provider: 'local', cluster_name: 'e2e-pb', slurm_user: 'root', citc_bin: CITC_BIN, citc_node_bin: process.execPath}),
      {mode: 0o600},
    )
    // Another cluster's munged (or a test's): its own key, socket and pid file. Nothing citc does may
    // count it, start over it or stop it.
    const dir = join(work, 'other-munge')
    mkdirSync(dir)
    writeFileSync(join(dir, 'munge.key'), randomBytes(1024))
    chmodSync(join(dir, 'munge.key'), 0o400)
    execFileSync('/usr/sbin/munged', [
      `--socket=${dir}/munge.sock`,
      `--key-file=${dir}/munge.key`,
      `--pid-file=${dir}/munged.pid`,
      `--log-file=${dir}/munged.log`,
      `--seed-file=${dir}/munge.seed`,
      '--force',
    ])
    otherMunged = {pid: readPid(join(dir, 'munged.pid'))!, dir}
  }, 25 * 60_000)

  afterAll(async () => {
    try {
      if (fakeNode?.pid && pidAlive(fakeNode.pid)) process.kill(fakeNode.pid, 'SIGKILL')
      // A test failed half-way: leave the machine as it was anyway.
      if (ranPlaybook && !tornDown) await play('teardown.yml', 'teardown-cleanup.log').catch((e) => console.error(e))
    } finally {
      if (otherMunged && pidAlive(otherMunged.pid)) {
        process.kill(otherMunged.pid, 'SIGTERM')
        // munged removes its socket files as it exits: let it finish before removing its directory.
        for (let i = 0; i < 50 && pidAlive(otherMunged.pid); i++) await sleep(100)
      }
      if (work) rmSync(work, {recursive: true, force: true, maxRetries: 5, retryDelay: 200})
      release?.()
    }
  }, 5 * 60_000)

  it('converges on the first run', async () => {
    const tasks: string[] = []
    ranPlaybook = true
    const r = await play('management.yml', 'run1.log', tasks)
    expect(r.ok).toBe(true)
    expect(r.recap.localhost).toMatchObject({failed: 0, unreachable: 0})
    expect(tasks).toContain('common : Install packages')
    expect(tasks).toContain('ldap : Add the cluster\'s database to slapd')
    expect(tasks).toContain('citc_programs : Describe the cluster for the node programs')
    // No systemd here: the watchdog runs as a service, and monitoring's services are started last.
    expect(tasks).toContain('citc_watchdog : Run the watchdog every 60 s (no systemd)')
    expect(tasks.at(-1)).toBe("monitoring : Start citc's monitoring services (no systemd)")
  }, 20 * 60_000)

  it('runs munged: a credential round trip', () => {
    const r = sh('munge -n | unmunge')
    expect(r.stdout).toMatch(/STATUS:\s+Success \(0\)/)
    const key = statSync('/etc/munge/munge.key')
    expect(key.mode & 0o777).toBe(0o400)
  })

  it('serves the directory with People and Groups, and the admin password in its file binds', () => {
    const r = sh('ldapsearch -x -LLL -H ldap://127.0.0.1 -b dc=citc,dc=local dn')
    expect(r.status).toBe(0)
    expect(r.stdout).toContain('dn: ou=People,dc=citc,dc=local')
    expect(r.stdout).toContain('dn: ou=Groups,dc=citc,dc=local')
    const who = sh('ldapwhoami -x -H ldap://127.0.0.1 -D cn=admin,dc=citc,dc=local -y /etc/citc/secrets/ldap-admin-password')
    expect(who.stdout.trim()).toBe('dn:cn=admin,dc=citc,dc=local')
    expect(JSON.parse(readFileSync('/etc/citc/ldap.json', 'utf8'))).toMatchObject({
      uri: 'ldap://127.0.0.1/',
      baseDn: 'dc=citc,dc=local',
      peopleDn: 'ou=People,dc=citc,dc=local',
      groupsDn: 'ou=Groups,dc=citc,dc=local',
      adminDn: 'cn=admin,dc=citc,dc=local',
      adminPasswordFile: '/etc/citc/secrets/ldap-admin-password',
    })
    expect(statSync('/etc/citc/ldap.json').mode & 0o777).toBe(0o644)
  })

  it('looks users up in files, then LDAP, and local lookups still work', () => {
    const nss = readFileSync('/etc/nsswitch.conf', 'utf8')
    for (const db of ['passwd', 'group', 'shadow']) expect(nss).toMatch(new RegExp(`^${db}:\\s+files ldap$`, 'm'))
    expect(sh('getent passwd root').stdout).toMatch(/^root:x:0:0:/)
    expect(sh('getent group users').stdout).toMatch(/^users:x:100:/)
    expect(sh('service nslcd status').status).toBe(0)
  })

  it('has the accounting database in MariaDB and slurmdbd answering', async () => {
    expect(sh("mysql -N -e \"SHOW DATABASES LIKE 'slurm_acct_db'\"").stdout.trim()).toBe('slurm_acct_db')
    // sacctmgr talks to slurmdbd directly (no slurmctld needed), authenticated by munge.
    const probe = join(work, 'probe-slurm.conf')
    writeFileSync(
      probe,
      'ClusterName=probe\nSlurmctldHost=localhost\nAuthType=auth/munge\n' +
        'AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=localhost\nAccountingStoragePort=6819\n',
    )
    let out = ''
    await waitFor('slurmdbd to answer sacctmgr', () => {
      out = sh(`SLURM_CONF=${probe} sacctmgr -n -P show user`, {timeout: 15_000}).stdout
      return /^root\|/m.test(out)
    }, 60_000, 250)
    expect(out).toMatch(/^root\|\|Administrator$/m)
    // The database password stays on this machine: a 0600 file of the Slurm user's, not on the shared filesystem.
    const conf = lstatSync('/etc/slurm/slurmdbd.conf')
    expect(conf.isFile()).toBe(true)
    expect(conf.mode & 0o777).toBe(0o600)
    expect(conf.uid).toBe(0) // slurm_user root for the local provider
    expect(readFileSync('/etc/slurm/slurmdbd.conf', 'utf8')).toMatch(/^StoragePass=\S+$/m)
    expect(existsSync(`${SHARED}/etc/slurm/slurmdbd.conf`)).toBe(false)
  })

  it('lays out the shared filesystem but leaves slurm.conf, and slurmctld, to citc finish', () => {
    for (const d of ['etc/slurm', 'home', 'apps']) expect(statSync(join(SHARED, d)).isDirectory()).toBe(true)
    expect(existsSync(`${SHARED}/etc/slurm/slurm.conf`)).toBe(false)
    expect(readlinkSync('/etc/slurm/slurm.conf')).toBe(`${SHARED}/etc/slurm/slurm.conf`)
    expect(readlinkSync('/etc/slurm/gres.conf')).toBe(`${SHARED}/etc/slurm/gres.conf`)
    expect(sh('service slurmctld status').status).toBe(3)
    for (const d of ['/var/spool/slurmctld', '/var/log/slurm', '/var/spool/slurmd', '/var/log/citc']) {
      expect(statSync(d).uid).toBe(0) // slurm_user root for the local provider
    }
  })

  it('installs the node programs with absolute paths', () => {
    for (const [file, command] of [['resume', 'resume'], ['suspend', 'suspend'], ['resume-fail', 'fail']]) {
      const path = join(PROGRAMS, file)
      expect(statSync(path).mode & 0o777).toBe(0o755)
      const text = readFileSync(path, 'utf8')
      expect(text.startsWith('#!/bin/sh\n')).toBe(true)
      expect(text.trimEnd().split('\n').at(-1)).toBe(`exec ${process.execPath} ${CITC_BIN} node ${command} "$@"`)
      expect(sh(`sh -n ${path}`).status).toBe(0)
    }
    expect(JSON.parse(readFileSync('/etc/citc/cluster.json', 'utf8'))).toMatchObject({
      name: 'e2e-pb',
      provider: 'local',
      sharedDir: SHARED,
      slurmUser: 'root',
      programsDir: PROGRAMS,
      confPath: '/etc/slurm/slurm.conf',
      elasticLog: '/var/log/citc/elastic.log',
    })
    // What the node programs, add-user and preflight read: the contract's own reader accepts it.
    expect(readManagementContractFile('/etc/citc/cluster.json')).toMatchObject({version: MANAGEMENT_CONTRACT_VERSION, provider: 'local', driver: {}})
  })

  it('changes nothing on a second run', async () => {
    const r = await play('management.yml', 'run2.log')
    expect(r.recap.localhost).toMatchObject({changed: 0, failed: 0, unreachable: 0})
  }, 10 * 60_000)

  it('moves the slurmdbd.conf of a cluster made before it left the shared filesystem, on the next run', async () => {
    // How clusters were laid out before: the file on the shared filesystem, /etc/slurm linking to it.
    const hadOriginal = existsSync('/etc/citc-slurm-slurmdbd.conf.orig')
    execFileSync('mv', ['/etc/slurm/slurmdbd.conf', `${SHARED}/etc/slurm/slurmdbd.conf`])
    symlinkSync(`${SHARED}/etc/slurm/slurmdbd.conf`, '/etc/slurm/slurmdbd.conf')
    const r = await play('management.yml', 'run-move.log')
    expect(r.recap.localhost).toMatchObject({failed: 0, unreachable: 0})
    expect(lstatSync('/etc/slurm/slurmdbd.conf').isFile()).toBe(true)
    expect(statSync('/etc/slurm/slurmdbd.conf').mode & 0o777).toBe(0o600)
    expect(existsSync(`${SHARED}/etc/slurm/slurmdbd.conf`)).toBe(false)
    // citc's own file is not taken for one that was there before citc (that would be moved aside).
    expect(existsSync('/etc/citc-slurm-slurmdbd.conf.orig')).toBe(hadOriginal)
    const again = await play('management.yml', 'run-move-2.log')
    expect(again.recap.localhost).toMatchObject({changed: 0, failed: 0})
  }, 10 * 60_000)

  it('keeps plain LDAP, on those addresses only, for the nodes of a cluster made before the directory went over TLS, until the file goes', async () => {
    // A cluster made by an older citc: slapd on plain ldap:// beyond loopback (here 127.0.0.2, where its
    // joined machines would read it), and no TLS names file yet.
    const defaults = readFileSync('/etc/default/slapd', 'utf8')
    writeFileSync('/etc/default/slapd', defaults.replace(/^SLAPD_SERVICES=.*$/m, 'SLAPD_SERVICES="ldap://127.0.0.1/ ldap://127.0.0.2/ ldapi:///"'))
    rmSync('/etc/citc/ldap-tls-names', {force: true})
    const plainAnswers = () => sh(`ldapsearch -x -LLL -o nettimeout=5 -H ldap://127.0.0.2/ -b dc=citc,dc=local -s base dn`, {timeout: 15_000}).status === 0
    const r = await play('management.yml', 'run-plain.log')
    expect(r.recap.localhost).toMatchObject({failed: 0, unreachable: 0})
    expect(readFileSync('/etc/citc/slapd-plain-uris', 'utf8')).toBe('ldap://127.0.0.2/\n')
    expect(readFileSync('/etc/default/slapd', 'utf8')).toMatch(/^SLAPD_SERVICES=".*ldap:\/\/127\.0\.0\.2\/.*"$/m)
    await waitFor('slapd on the kept plain address', plainAnswers, 30_000, 250)
    // Kept once: a later run (TLS now set up) adds nothing, and the admin's removal of the file ends it.
    rmSync('/etc/citc/slapd-plain-uris')
    const after = await play('management.yml', 'run-plain-2.log')
    expect(after.recap.localhost).toMatchObject({failed: 0, unreachable: 0})
    expect(existsSync('/etc/citc/slapd-plain-uris')).toBe(false)
    expect(readFileSync('/etc/default/slapd', 'utf8')).not.toContain('127.0.0.2')
    await waitFor('slapd gone from the plain address', () => !plainAnswers(), 30_000, 250)
  }, 10 * 60_000)

  it('starts slurmctld on a re-run once citc finish has written slurm.conf', async () => {
    // What finish would write, reduced to what slurmctld needs to start (own port: other tests run
    // their own controllers on this machine).
    const port = await freePort()
    writeFileSync(
      `${SHARED}/etc/slurm/slurm.conf`,
      [
        'ClusterName=e2epb',
        'SlurmctldHost=localhost(127.0.0.1)',
        `SlurmctldPort=${port}`,
        'SlurmUser=root',
        'AuthType=auth/munge',
        'StateSaveLocation=/var/spool/slurmctld',
        'SlurmctldPidFile=/run/slurmctld.pid',
        'SlurmctldLogFile=/var/log/slurm/slurmctld.log',
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        'NodeName=e2epb-n1 CPUs=1 State=CLOUD',
        'PartitionName=e2e Nodes=e2epb-n1 Default=YES',
        '',
      ].join('\n'),
    )
    const tasks: string[] = []
    const r = await play('management.yml', 'run3.log', tasks)
    expect(r.recap.localhost).toMatchObject({changed: 1, failed: 0})
    expect(readFileSync(logs.at(-1)!, 'utf8')).toMatch(/TASK \[slurm : Start slurmctld \(once citc finish has written slurm.conf\)\] \**\nchanged: \[localhost\]/)
    await waitFor('slurmctld to answer', () => /is UP/.test(sh('scontrol ping', {timeout: 15_000}).stdout), 30_000, 250)
    expect(sh('service slurmctld status').stdout).toContain(`(pid ${readPid('/run/slurmctld.pid')})`)
  }, 10 * 60_000)

  it('keeps secrets in 0600 files and out of every Ansible log', () => {
    expect(statSync('/etc/citc/secrets').mode & 0o777).toBe(0o700)
    for (const file of SECRETS) {
      const st = statSync(file)
      expect(st.mode & 0o777).toBe(0o600)
      expect(st.uid).toBe(0)
      const secret = readFileSync(file, 'utf8')
      expect(secret).toMatch(/^[A-Za-z0-9]{32}$/)
      for (const log of logs) expect(readFileSync(log, 'utf8')).not.toContain(secret)
    }
  })

  it("goes by pid file: another cluster's munged is not this cluster's", () => {
    expect(pidAlive(otherMunged!.pid)).toBe(true)
    const ours = readPid('/run/munge/munged.pid')
    expect(ours).toBeDefined()
    expect(ours).not.toBe(otherMunged!.pid)
    expect(sh('service munge status').stdout).toContain(`(pid ${ours})`)
  })

  it('tears everything down, nodes included, and leaves nobody else\'s daemons', async () => {
    // A node as the local driver starts it: slurmd in its own time namespace, launched by unshare,
    // with the launcher's pid in /run/citc/nodes/<node>.pid.
    const port = await freePort()
    const conf = join(work, 'node-slurm.conf')
    writeFileSync(
      conf,
      [
        'ClusterName=e2epb',
        `SlurmctldHost=localhost(127.0.0.1)`,
        `SlurmctldPort=${await freePort()}`,
        'SlurmUser=root',
        'AuthType=auth/munge',
        `SlurmdSpoolDir=${work}/spool-%n`,
        'SlurmdPidFile=/run/slurmd-%n.pid',
        `SlurmdLogFile=${work}/slurmd-%n.log`,
        'ProctrackType=proctrack/linuxproc',
        'TaskPlugin=task/none',
        `NodeName=${FAKE_NODE} NodeAddr=127.0.0.1 Port=${port} CPUs=1 State=CLOUD`,
        `PartitionName=e2e Nodes=${FAKE_NODE}`,
        '',
      ].join('\n'),
    )
    fakeNode = spawn('/usr/bin/unshare', ['--fork', '--time', '/usr/sbin/slurmd', '-D', '-N', FAKE_NODE, '-f', conf], {
      detached: true,
      stdio: 'ignore',
    })
    fakeNode.unref()
    writeFileSync(`/run/citc/nodes/${FAKE_NODE}.pid`, `${fakeNode.pid}\n`)
    await waitFor('the node\'s slurmd', () => (readPid(`/run/slurmd-${FAKE_NODE}.pid`) ?? 0) > 0 && pidAlive(readPid(`/run/slurmd-${FAKE_NODE}.pid`)!), 20_000, 250)
    const nodeSlurmd = readPid(`/run/slurmd-${FAKE_NODE}.pid`)!

    const startedByCitc = readFileSync('/etc/citc/started-services', 'utf8').split('\n').filter(Boolean)
    const pidFiles: Record<string, string> = {
      munge: '/run/munge/munged.pid',
      mariadb: '/run/mysqld/mysqld.pid',
      slapd: '/run/slapd/slapd.pid',
      nslcd: '/run/nslcd/nslcd.pid',
    }
    const daemons: Record<string, number | undefined> = {slurmdbd: readPid('/run/slurmdbd.pid'), slurmctld: readPid('/run/slurmctld.pid')}
    for (const s of startedByCitc) daemons[s] = readPid(pidFiles[s])
    expect(daemons.slurmdbd).toBeDefined()
    expect(daemons.slurmctld).toBeDefined()

    const r = await play('teardown.yml', 'teardown.log')
    tornDown = true
    expect(r.recap.localhost).toMatchObject({failed: 0, unreachable: 0})

    // No process of the cluster is left (a zombie waiting for its reaper counts as gone).
    await waitFor('the cluster\'s processes to be gone', () => [fakeNode!.pid!, nodeSlurmd, ...Object.values(daemons)].every((p) => p === undefined || !pidAlive(p)), 10_000, 250)
    for (const [name, pid] of Object.entries(daemons)) expect({name, alive: pid !== undefined && pidAlive(pid)}).toEqual({name, alive: false})
    // ...and the other cluster's munged still runs.
    expect(pidAlive(otherMunged!.pid)).toBe(true)

    for (const gone of [SHARED, '/etc/citc', PROGRAMS, '/var/log/citc', '/run/citc', '/var/lib/ldap-citc', '/var/spool/slurmctld',
      '/etc/citc-nsswitch.conf.orig', '/etc/mysql/mariadb.conf.d/60-citc-slurmdbd.cnf', '/var/lib/mysql/slurm_acct_db',
      // The directory's TLS (role ldap): slapd's certificates and the daily renewal.
      '/etc/ldap/citc-tls', '/etc/cron.daily/citc-ldap-cert']) {
      expect({path: gone, exists: existsSync(gone)}).toEqual({path: gone, exists: false})
    }
    for (const link of ['slurm.conf', 'gres.conf', 'slurmdbd.conf']) expect(existsSync(`/etc/slurm/${link}`)).toBe(false)
    expect(readFileSync('/etc/nsswitch.conf', 'utf8')).toBe(nsswitchBefore)
    // Debian's init scripts are back, with no diversion left.
    for (const s of ['munge', 'slurmdbd', 'slurmctld']) expect(readFileSync(`/etc/init.d/${s}`, 'utf8')).not.toContain('citc')
    expect(sh('dpkg-divert --list').stdout).not.toMatch(/\/etc\/init\.d\/(munge|slurmdbd|slurmctld)/)
  }, 10 * 60_000)

  it('tears down again without complaint', async () => {
    const r = await play('teardown.yml', 'teardown2.log')
    expect(r.recap.localhost).toMatchObject({failed: 0, unreachable: 0})
  }, 10 * 60_000)
})
