// A private OpenLDAP slapd for tests: its own cn=config (made with slapadd -n0), an mdb database for
// dc=citc,dc=local with the same ACLs as citc's ldap role, the admin password in a 0600 file, listening
// on a free 127.0.0.1 port (and, when asked, on an ldapi socket of its own where root manages cn=config,
// and on more URIs). Stopped by PID, never by name; the system's slapd is never touched.
import {execFileSync, spawn, type ChildProcess} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {freePort} from './slurm.js'
import {portAccepts} from './net.js'
import {sleep} from '../../src/lib/proc.js'

export const SLAPD = '/usr/sbin/slapd'
const SCHEMAS = ['core', 'cosine', 'nis', 'inetorgperson']

export interface SlapdOptions {
  /** Also listen on ldapi (a socket in the sandbox, SlapdSandbox.ldapiUri), where root binds with
   *  SASL EXTERNAL and manages cn=config, as on a Debian slapd (what citc's ldap role uses). */
  ldapi?: boolean
  /** More URIs to listen on (e.g. ldaps://ADDRESS:PORT/ on a network the test made). */
  extraUris?: string[]
}

export interface SlapdSandbox {
  dir: string
  port: number
  uri: string
  /** ldapi://… of the sandbox's socket (SlapdOptions.ldapi), else undefined. */
  ldapiUri?: string
  baseDn: string
  peopleDn: string
  groupsDn: string
  adminDn: string
  adminPasswordFile: string
  /** An ldap.json for citc add-user, pointing at this server. */
  ldapJsonPath: string
  pid: number
  log(): string
  /** Every entry under the base, as `ldapsearch -LLL` prints it (sorted by DN), for "unchanged" checks. */
  dump(): string
  /** The entries matching `filter` with these attributes, as `ldapsearch -LLL` prints them (unwrapped LDIF). */
  search(filter: string, attrs: string[]): string
  stop(): Promise<void>
}


// cn=config: nobody, or (ldapi) root through SASL EXTERNAL, as Debian's slapd package sets it up.
const CONFIG_ACCESS = {closed: 'to * by * none', root: 'to * by dn.exact=gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth manage by * none'}

function configLdif(dir: string, rootPwHash: string, baseDn: string, adminDn: string, configAccess: string): string {
  return [
    `dn: cn=config
objectClass: olcGlobal
cn: config
olcPidFile: ${dir}/slapd.pid
olcArgsFile: ${dir}/slapd.args
`,
    `dn: cn=schema,cn=config
objectClass: olcSchemaConfig
cn: schema
`,
    ...SCHEMAS.map((s) => `include: file:///etc/ldap/schema/${s}.ldif\n`),
    `dn: cn=module{0},cn=config
objectClass: olcModuleList
cn: module{0}
olcModulePath: /usr/lib/ldap
olcModuleLoad: {0}back_mdb
`,
    `dn: olcDatabase={-1}frontend,cn=config
objectClass: olcDatabaseConfig
objectClass: olcFrontendConfig
olcDatabase: {-1}frontend
`,
    `dn: olcDatabase={0}config,cn=config
objectClass: olcDatabaseConfig
olcDatabase: {0}config
olcAccess: {0}${configAccess}
`,
    `dn: olcDatabase={1}mdb,cn=config
objectClass: olcDatabaseConfig
objectClass: olcMdbConfig
olcDatabase: {1}mdb
olcSuffix: ${baseDn}
olcDbDirectory: ${dir}/db
olcRootDN: ${adminDn}
olcRootPW: ${rootPwHash}
olcDbMaxSize: 104857600
olcDbIndex: objectClass eq
olcDbIndex: uid eq
olcDbIndex: uidNumber eq
olcAccess: {0}to attrs=userPassword by self write by anonymous auth by * none
olcAccess: {1}to attrs=shadowLastChange by self write by * read
olcAccess: {2}to * by * read
`,
  ].join('\n')
}

export async function startSlapd(opts: SlapdOptions = {}): Promise<SlapdSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'citc-slapd-'))
  const baseDn = 'dc=citc,dc=local'
  const adminDn = `cn=admin,${baseDn}`
  const peopleDn = `ou=People,${baseDn}`
  const groupsDn = `ou=Groups,${baseDn}`
  const adminPasswordFile = join(dir, 'admin-password')
  let child: ChildProcess | undefined
  let stderr = ''
  try {
    writeFileSync(adminPasswordFile, randomBytes(18).toString('base64url'), {mode: 0o600}) // no newline: -y uses it all
    const hash = execFileSync('slappasswd', ['-h', '{SSHA}', '-T', adminPasswordFile], {encoding: 'utf8'}).trim()
    const confDir = join(dir, 'slapd.d')
    mkdirSync(confDir)
    mkdirSync(join(dir, 'db'))
    writeFileSync(join(dir, 'config.ldif'), configLdif(dir, hash, baseDn, adminDn, opts.ldapi ? CONFIG_ACCESS.root : CONFIG_ACCESS.closed))
    const ldapiUri = opts.ldapi ? `ldapi://${encodeURIComponent(join(dir, 'ldapi'))}` : undefined
    execFileSync('slapadd', ['-n0', '-F', confDir, '-l', join(dir, 'config.ldif')], {stdio: ['ignore', 'pipe', 'pipe']})

    for (let attempt = 1; ; attempt++) {
      const port = await freePort()
      const uri = `ldap://127.0.0.1:${port}/`
      stderr = ''
      // -d 0: stay in the foreground (so the PID is ours and the test can stop it), log nothing extra.
      const uris = [uri, ...(ldapiUri ? [ldapiUri] : []), ...(opts.extraUris ?? [])]
      child = spawn(SLAPD, ['-d', '0', '-h', uris.join(' '), '-F', confDir], {stdio: ['ignore', 'ignore', 'pipe']})
      child.stderr!.on('data', (d: Buffer) => {
        stderr += d.toString()
      })
      const deadline = Date.now() + 10_000
      let up = false
      while (Date.now() < deadline && child.exitCode === null) {
        if (await portAccepts(port)) {
          up = true
          break
        }
        await sleep(50)
      }
      if (!up) {
        const exited = child.exitCode !== null
        child.kill('SIGKILL')
        if (exited && attempt < 3) continue // port taken meanwhile
        throw new Error(`slapd did not start on ${uri}:\n${stderr}`)
      }
      const ldap = (tool: string, args: string[], input?: string) =>
        execFileSync(tool, ['-x', '-H', uri, ...args], {input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe']})
      ldap('ldapadd', ['-D', adminDn, '-y', adminPasswordFile], `dn: ${baseDn}
objectClass: top
objectClass: dcObject
objectClass: organization
dc: citc
o: citc test directory

dn: ${peopleDn}
objectClass: top
objectClass: organizationalUnit
ou: People

dn: ${groupsDn}
objectClass: top
objectClass: organizationalUnit
ou: Groups
`)
      const ldapJsonPath = join(dir, 'ldap.json')
      writeFileSync(ldapJsonPath, JSON.stringify({uri, baseDn, peopleDn, groupsDn, adminDn, adminPasswordFile, usersGid: 100}, null, 2) + '\n')
      const proc = child
      return {
        dir,
        port,
        uri,
        ldapiUri,
        baseDn,
        peopleDn,
        groupsDn,
        adminDn,
        adminPasswordFile,
        ldapJsonPath,
        pid: proc.pid!,
        log: () => stderr,
        search: (filter, attrs) => ldap('ldapsearch', ['-LLL', '-o', 'ldif-wrap=no', '-D', adminDn, '-y', adminPasswordFile, '-b', baseDn, filter, ...attrs]),
        dump: () => {
          const out = ldap('ldapsearch', ['-LLL', '-o', 'ldif-wrap=no', '-D', adminDn, '-y', adminPasswordFile, '-b', baseDn, '(objectClass=*)', '*', '+'])
          // Sort entries by DN; drop operational attributes that change without a write (none do here, but be safe).
          return out
            .trim()
            .split(/\n\n+/)
            .map((e) => e.split('\n').filter((l) => !/^(contextCSN|entryCSN|modifyTimestamp|modifiersName):/.test(l)).join('\n'))
            .sort()
            .join('\n\n')
        },
        stop: async () => {
          if (proc.exitCode === null && proc.signalCode === null) {
            const gone = new Promise<void>((r) => proc.once('exit', () => r()))
            proc.kill('SIGTERM')
            if ((await Promise.race([gone.then(() => 'ok' as const), sleep(5000).then(() => 'timeout' as const)])) === 'timeout') {
              proc.kill('SIGKILL')
              await Promise.race([gone, sleep(5000)])
            }
          }
          rmSync(dir, {recursive: true, force: true})
        },
      }
    }
  } catch (error) {
    if (child && child.exitCode === null) child.kill('SIGKILL')
    rmSync(dir, {recursive: true, force: true})
    throw error
  }
}

/** Read a file of the sandbox (for assertions). */
export const readText = (path: string) => readFileSync(path, 'utf8')
