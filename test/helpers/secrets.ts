// Issue #23's secret check: every secret of a local cluster, read from where citc and its playbooks put
// them, and the places a secret must never reach — the argv of any process (sampled from
// /proc/*/cmdline while a command runs), logs, JSON output and world-readable files. A hit names the
// secret and the place, never the secret itself, so a failing test does not leak what it guards.
//
// Where the secrets live on a local cluster (playbooks/README.md "What it leaves on the management node"):
//   /etc/munge/munge.key                          the munge key (binary, role munge)
//   /etc/citc/secrets/ldap-admin-password         the directory admin's password (ldap.json's adminPasswordFile)
//   /etc/citc/secrets/slurmdbd-db-password        MariaDB's password for slurmdbd (= slurmdbd.conf's StoragePass)
//   /etc/slurm/slurmdbd.conf                      StoragePass= (the same value, read on its own in case they differ)
//   <data dir>/clusters/<name>/keys/*             private keys citc generated (clouds: admin and host key)
//   <data dir>/clusters/<name>/terraform/*.tfvars.json   the management node's host key (clouds)
//   /etc/citc/compute-host-keys/ssh_host_*_key    compute nodes' shared host keys (clouds)
//   /var/lib/citc/images/<name>/*/rootfs/etc/ssh/ssh_host_*_key   host keys inside local images, if any
//   <homeDir>/<user>/.password                    each directory user's password (add-user; homeDir from ldap.json)
//   cloud credential files and variables a test gives
import {spawn} from 'node:child_process'
import {existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

export interface Secret {
  /** What it is, e.g. "munge key" (what a hit prints). */
  name: string
  /** Where it was read from (a path, or "env NAME"). */
  where: string
  /** The secret as text (binary secrets: base64). */
  value: string
  /** Every form findSecrets looks for (text forms; binary secrets add their raw bytes in `bytes`). */
  forms: string[]
  /** A binary secret's raw bytes (looked for in Buffer texts). */
  bytes?: Buffer
}

export interface ClusterSecretsOptions {
  /** The cluster's state directory: CITC_DATA_DIR/clusters/NAME. */
  clusterDir: string
  /** Prefix for the management node's system paths (a planted tree in tests); default "/". */
  root?: string
  /** The cluster's shared directory (users' homes are under <shared>/home unless ldap.json says otherwise); default /mnt/shared. */
  sharedDir?: string
  /** The cluster's name, for its local images' directory (/var/lib/citc/images/NAME); default the clusterDir's base name. */
  cluster?: string
  /** Cloud credential files the test gave citc (INI, JSON service-account keys, PEM keys). */
  credentialFiles?: string[]
  /** Cloud credentials the test gave in the environment (AWS_SECRET_ACCESS_KEY…): name → value. */
  credentialEnv?: Record<string, string>
}

/** Shortest value looked for: anything shorter would match by chance (and nothing citc makes is that short). */
const MIN_SECRET = 12
const PEM_RE = /-----BEGIN ([A-Z0-9 ]*PRIVATE KEY)-----\r?\n([\s\S]*?)-----END \1-----/g

function readIf(path: string): Buffer | undefined {
  try {
    return statSync(path).isFile() ? readFileSync(path) : undefined
  } catch {
    return undefined
  }
}

function textSecret(name: string, where: string, value: string): Secret | undefined {
  const v = value.trim()
  if (v.length < MIN_SECRET) return undefined
  // JSON output escapes quotes and backslashes: look for the escaped form too.
  const escaped = JSON.stringify(v).slice(1, -1)
  return {name, where, value: v, forms: [...new Set([v, escaped])]}
}

/** A binary secret: its base64 and hex (whole, and a prefix so a partial dump is caught), and its raw bytes. */
export function binarySecret(name: string, where: string, bytes: Buffer): Secret {
  const b64 = bytes.toString('base64')
  const hex = bytes.toString('hex')
  const forms = [b64, b64.slice(0, 64), hex, hex.slice(0, 64), hex.toUpperCase().slice(0, 64)]
  return {name, where, value: b64, forms: [...new Set(forms.filter((f) => f.length >= MIN_SECRET))], bytes: bytes.subarray(0, Math.min(bytes.length, 32))}
}

/**
 * Each private key in a text (PEM) as a secret. Looked for: the whole key, the whole key with JSON's
 * escaped newlines, and each base64 line after the first two — an OpenSSH key's first lines hold its
 * header and public key, the same in every key of a type or public anyway; the later lines are private.
 */
export function pemSecrets(name: string, where: string, text: string): Secret[] {
  const out: Secret[] = []
  for (const m of text.matchAll(PEM_RE)) {
    const whole = m[0]
    const lines = m[2].split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0 && !l.includes(':'))
    const privateLines = (lines.length > 3 ? lines.slice(2) : lines).filter((l) => l.length >= MIN_SECRET)
    out.push({name, where, value: whole, forms: [...new Set([whole, JSON.stringify(whole).slice(1, -1), ...privateLines])]})
  }
  return out
}

/** Files under dir (not following symlinks), at most maxDepth levels down. */
/** Regular files under dir, at most maxDepth directories down; an error past 20,000 entries (never a silent stop). */
export function filesUnder(dir: string, maxDepth: number, budget = {left: 20_000}): string[] {
  const out: string[] = []
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return out
  }
  for (const e of entries) {
    if (--budget.left < 0) throw new Error(`secrets: more than 20000 entries under ${dir}: give a narrower directory`)
    const p = join(dir, e)
    const st = lstatSync(p, {throwIfNoEntry: false})
    if (!st) continue
    if (st.isFile()) out.push(p)
    else if (st.isDirectory() && maxDepth > 0) out.push(...filesUnder(p, maxDepth - 1, budget))
  }
  return out
}

/** The secrets in a cloud credential file: private keys, and the values of secret-looking keys (INI, JSON). */
export function credentialFileSecrets(path: string): Secret[] {
  const data = readIf(path)
  if (!data) throw new Error(`secrets: credential file ${path} cannot be read`)
  const text = data.toString('utf8')
  const out: Secret[] = pemSecrets(`private key in ${path}`, path, text)
  const secretKey = /secret|private_key_id|token|password|passphrase|refresh/i
  try {
    const doc: unknown = JSON.parse(text)
    if (doc && typeof doc === 'object') {
      for (const [k, v] of Object.entries(doc as Record<string, unknown>)) {
        // A service account's private_key: a PEM key inside a JSON string.
        if (typeof v === 'string' && v.includes('PRIVATE KEY-----')) out.push(...pemSecrets(`cloud credential ${k}`, path, v))
        else if (typeof v === 'string' && secretKey.test(k)) {
          const s = textSecret(`cloud credential ${k}`, path, v)
          if (s) out.push(s)
        }
      }
    }
  } catch {
    for (const line of text.split('\n')) {
      const m = /^\s*([A-Za-z0-9_.-]+)\s*[=:]\s*(\S.*?)\s*$/.exec(line)
      if (m && secretKey.test(m[1])) {
        const s = textSecret(`cloud credential ${m[1]}`, path, m[2])
        if (s) out.push(s)
      }
    }
  }
  if (out.length === 0) throw new Error(`secrets: no secret found in credential file ${path}: say which value is secret`)
  return out
}

/**
 * Every secret of a cluster whose management node is this machine (or a planted tree under `root`).
 * Secrets that are not there (a cloud key on a local cluster, a missing image) are left out; the munge
 * key and the two passwords are required once the management playbook ran: say which are missing.
 */
export function clusterSecrets(o: ClusterSecretsOptions): Secret[] {
  const at = (p: string) => join(o.root ?? '/', p)
  const cluster = o.cluster ?? o.clusterDir.split('/').filter(Boolean).pop() ?? ''
  const out: Secret[] = []
  const add = (s: Secret | undefined) => {
    if (s) out.push(s)
  }

  const munge = readIf(at('/etc/munge/munge.key'))
  if (munge) out.push(binarySecret('munge key', at('/etc/munge/munge.key'), munge))

  // ldap.json names the admin password's file and the homes (the contract add-user reads); defaults otherwise.
  let ldapFile = at('/etc/citc/secrets/ldap-admin-password')
  let homeDir = join(o.sharedDir ?? '/mnt/shared', 'home')
  try {
    const ldap = JSON.parse(readFileSync(at('/etc/citc/ldap.json'), 'utf8')) as {adminPasswordFile?: string; homeDir?: string}
    if (ldap.adminPasswordFile) ldapFile = at(ldap.adminPasswordFile)
    if (ldap.homeDir) homeDir = ldap.homeDir
  } catch {
    // no ldap.json: the default paths
  }
  add(textSecret('LDAP admin password', ldapFile, readIf(ldapFile)?.toString('utf8') ?? ''))
  const dbFile = at('/etc/citc/secrets/slurmdbd-db-password')
  add(textSecret('accounting database password', dbFile, readIf(dbFile)?.toString('utf8') ?? ''))
  const dbdConf = at('/etc/slurm/slurmdbd.conf')
  const storagePass = /^\s*StoragePass\s*=\s*(.*)$/im.exec(readIf(dbdConf)?.toString('utf8') ?? '')?.[1]
  if (storagePass !== undefined && !out.some((s) => s.value === storagePass.trim())) add(textSecret('slurmdbd StoragePass', dbdConf, storagePass))

  // Private keys: the cluster's state directory (keys/, terraform's variables), compute host keys,
  // and any host key baked into a local image.
  const imagesDir = at(join('/var/lib/citc/images', cluster))
  const keyFiles = [
    // Not the whole state directory: terraform/.terraform can hold provider plugins of hundreds of MB.
    ...[o.clusterDir, join(o.clusterDir, 'keys'), join(o.clusterDir, 'terraform')].flatMap((d) => filesUnder(d, 0)),
    ...filesUnder(at('/etc/citc/compute-host-keys'), 0),
    ...(cluster === '' ? [] : readdirSafe(imagesDir).flatMap((img) => filesUnder(join(imagesDir, img, 'rootfs/etc/ssh'), 0).filter((f) => f.endsWith('_key')))),
  ]
  for (const f of keyFiles) {
    const data = readIf(f)
    if (!data || data.length > 1_000_000 || !data.includes('PRIVATE KEY-----')) continue
    const rel = f.startsWith(o.clusterDir) ? `cluster key ${f.slice(o.clusterDir.length + 1)}` : `host key ${f}`
    for (const s of pemSecrets(`private key (${rel})`, f, data.toString('utf8'))) {
      if (!out.some((x) => x.value === s.value)) out.push(s)
    }
  }

  // Each directory user's password (add-user: ~/.password, 0400, the only place it is written).
  for (const user of readdirSafe(at(homeDir)).sort()) {
    const file = at(join(homeDir, user, '.password'))
    add(textSecret(`password of ${user}`, file, readIf(file)?.toString('utf8') ?? ''))
  }

  for (const f of o.credentialFiles ?? []) out.push(...credentialFileSecrets(f))
  for (const [k, v] of Object.entries(o.credentialEnv ?? {})) add(textSecret(`cloud credential ${k}`, `env ${k}`, v))

  const missing = [
    munge ? undefined : at('/etc/munge/munge.key'),
    out.some((s) => s.name === 'LDAP admin password') ? undefined : ldapFile,
    out.some((s) => s.name === 'accounting database password') ? undefined : dbFile,
  ].filter((x): x is string => x !== undefined)
  if (missing.length > 0) throw new Error(`secrets: not found (has the management playbook run, and does this test run as root?): ${missing.join(', ')}`)
  return out
}

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

export interface Text {
  where: string
  text: string | Buffer
}

/**
 * Each secret found in the texts, as "secret name @ where" (never the secret itself), once per pair.
 * A secret's own file is not excluded: scan only places where the secret must not be.
 */
export function findSecrets(secrets: Secret[], texts: Text[]): string[] {
  const hits = new Set<string>()
  for (const t of texts) {
    const asText = typeof t.text === 'string' ? t.text : t.text.toString('latin1')
    for (const s of secrets) {
      const found = s.forms.some((f) => asText.includes(f)) || (s.bytes !== undefined && Buffer.isBuffer(t.text) && t.text.includes(s.bytes))
      if (found) hits.add(`${s.name} @ ${t.where}`)
    }
  }
  return [...hits]
}

/** Files as texts for findSecrets (a file that vanished is skipped; big files are read whole up to maxBytes). */
export function fileTexts(paths: string[], maxBytes = 64 * 1024 * 1024): Text[] {
  const out: Text[] = []
  for (const p of paths) {
    const st = lstatSync(p, {throwIfNoEntry: false})
    if (!st?.isFile()) continue
    if (st.size > maxBytes) throw new Error(`secrets: ${p} is ${st.size} bytes, above ${maxBytes}: scan it another way`)
    const data = readIf(p)
    if (data) out.push({where: p, text: data})
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// argv

// Kept cheap (about 130 processes here, every 20 ms): one reused buffer, open/read/close only, and
// pids whose cmdline is empty (kernel threads, zombies: it stays empty) are not read again.
const SAMPLER = `
const fs = require('fs')
const [out, every, end] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])]
const seen = new Set()
let empty = new Set()
const self = String(process.pid)
let buf = Buffer.alloc(1 << 16)
function cmdline(pid) {
  let fd
  try { fd = fs.openSync('/proc/' + pid + '/cmdline', 'r') } catch { return undefined }
  try {
    let n = 0
    for (;;) {
      const r = fs.readSync(fd, buf, n, buf.length - n, null)
      if (r === 0) break
      n += r
      if (n === buf.length) { const b = Buffer.alloc(buf.length * 2); buf.copy(b); buf = b }
    }
    return buf.toString('utf8', 0, n)
  } catch { return undefined } finally { fs.closeSync(fd) }
}
function pass() {
  if (Date.now() >= end) process.exit(0)
  let pids = []
  try { pids = fs.readdirSync('/proc').filter((p) => p.charCodeAt(0) <= 57 && p !== self) } catch {}
  const stillEmpty = new Set()
  for (const pid of pids) {
    if (empty.has(pid)) { stillEmpty.add(pid); continue }
    const c = cmdline(pid)
    if (c === undefined) continue
    if (c.length === 0) { stillEmpty.add(pid); continue }
    const line = pid + ': ' + c.replace(/\\0+$/, '').split('\\0').join(' ').replace(/\\n/g, '\\\\n')
    if (seen.has(line)) continue
    seen.add(line)
    fs.appendFileSync(out, line + '\\n')
  }
  empty = stillEmpty
}
pass()
fs.writeFileSync(out + '.ready', '')
setInterval(pass, every)
`

export interface ArgvSampler {
  /** Stop sampling: every distinct command line seen, as "PID: arg0 arg1 …" (newlines in arguments as \n). */
  stop(): string[]
  /** The file the sampler writes (one line per command line). */
  readonly file: string
  /** Resolves once the first pass is done (the sampler is a process of its own: it takes a moment to start). */
  readonly ready: Promise<void>
}

/**
 * Sample every process's argv (/proc/PID/cmdline) every `everyMs` until stop() or `maxMs` (default
 * 10 min). A child process samples, so a test that blocks its own event loop (spawnSync) is sampled
 * too. Processes that live less than everyMs can be missed: a leak in a short command shows when the
 * same command runs several times, as it does across create, add-user, finish, rebuild-image, destroy.
 */
export function sampleArgv(o: {everyMs?: number; maxMs?: number} = {}): ArgvSampler {
  const dir = mkdtempSync(join(tmpdir(), 'citc-argv-'))
  const file = join(dir, 'argv')
  // The deadline is absolute: a sampler slow to start (a loaded machine) stops when it was told to.
  const child = spawn(process.execPath, ['-e', SAMPLER, file, String(o.everyMs ?? 20), String(Date.now() + (o.maxMs ?? 600_000))], {stdio: 'ignore'})
  child.unref()
  let lines: string[] | undefined
  const ready = (async () => {
    for (let waited = 0; !existsSync(`${file}.ready`); waited += 10) {
      if (child.exitCode !== null) throw new Error(`sampleArgv: the sampler ended before its first pass (exit ${child.exitCode}; past its maxMs already?)`)
      if (waited > 15_000) throw new Error('sampleArgv: the sampler did not start within 15 s')
      await new Promise((r) => setTimeout(r, 10))
    }
  })()
  ready.catch(() => undefined) // a caller that never awaits it must not see an unhandled rejection
  return {
    file,
    ready,
    stop() {
      if (lines) return lines
      if (child.exitCode === null && child.pid !== undefined) {
        try {
          process.kill(child.pid, 'SIGKILL')
        } catch {
          // already gone (its lifetime ran out)
        }
      }
      lines = [...new Set((readIf(file)?.toString('utf8') ?? '').split('\n').filter((l) => l.length > 0))]
      rmSync(dir, {recursive: true, force: true})
      return lines
    },
  }
}

/** Sampled command lines as texts for findSecrets ("argv of PID: command"). */
export function argvTexts(lines: string[]): Text[] {
  return lines.map((l) => {
    const pid = l.slice(0, l.indexOf(':'))
    const cmd = l.slice(l.indexOf(':') + 2)
    return {where: `argv of ${pid} (${cmd.split(' ')[0]})`, text: cmd}
  })
}

// ---------------------------------------------------------------------------------------------
// World-readable files

/** True when every directory from / down to `dir` lets others through (o+x). */
function othersCanReach(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    const st = statSync(d, {throwIfNoEntry: false})
    if (!st || (st.mode & 0o001) === 0) return false
    if (d === dirname(d)) return true
  }
}

/**
 * Regular files under `roots` that any user can read: mode o+r and every directory above them o+x
 * (a 0644 file in a 0700 directory is not readable by others). Symlinks are not followed; at most
 * maxEntries entries are looked at (an error beyond: a check that silently stopped would pass).
 */
export function worldReadableFiles(roots: string[], o: {maxEntries?: number; maxDepth?: number} = {}): string[] {
  const budget = {left: o.maxEntries ?? 200_000}
  const out: string[] = []
  const walk = (dir: string, depth: number) => {
    let entries: string[]
    try {
      entries = readdirSync(dir)
    } catch {
      return
    }
    for (const e of entries) {
      if (--budget.left < 0) throw new Error(`worldReadableFiles: more than ${o.maxEntries ?? 200_000} entries under ${roots.join(', ')}: give narrower roots`)
      const p = join(dir, e)
      const st = lstatSync(p, {throwIfNoEntry: false})
      if (!st) continue
      if (st.isFile() && (st.mode & 0o004) !== 0) out.push(p)
      // Others go no further than a directory without o+x.
      else if (st.isDirectory() && (st.mode & 0o001) !== 0 && depth < (o.maxDepth ?? 32)) walk(p, depth + 1)
    }
  }
  for (const r of roots) {
    const st = lstatSync(r, {throwIfNoEntry: false})
    if (!st) continue
    if (st.isFile()) {
      if ((st.mode & 0o004) !== 0 && othersCanReach(dirname(r))) out.push(r)
    } else if (st.isDirectory() && othersCanReach(r)) walk(r, 0)
  }
  return [...new Set(out)]
}

// ---------------------------------------------------------------------------------------------
// Logs

/**
 * The log files of a local cluster to scan: citc's own (the cluster's logs/: full Ansible, Packer and
 * command output), Slurm's (/var/log/slurm*), citc's on the management node (/var/log/citc: nodes'
 * slurmd output, the watchdog, monitoring), munge's, and MariaDB's and slapd's files when they have
 * any (Debian's send both to syslog by default: /var/log/syslog and daemon.log when a syslog runs).
 */
export function clusterLogFiles(o: {clusterDir: string; root?: string}): string[] {
  const at = (p: string) => join(o.root ?? '/', p)
  const dirs = [
    join(o.clusterDir, 'logs'),
    ...readdirSafe(at('/var/log'))
      .filter((e) => /^(slurm|citc|munge|mysql|mariadb|slapd|ldap)/.test(e))
      .map((e) => at(join('/var/log', e))),
  ]
  const files = dirs.flatMap((d) => (lstatSync(d, {throwIfNoEntry: false})?.isFile() ? [d] : filesUnder(d, 4)))
  for (const f of ['/var/log/syslog', '/var/log/daemon.log', '/var/log/messages']) if (existsSync(at(f))) files.push(at(f))
  return [...new Set(files)]
}

/**
 * Where to look for world-readable files on a local cluster's management node: what citc and its
 * playbooks write (/etc, the shared directory, logs, /run/citc, /var/lib/citc) and, in each of the
 * cluster's images, the places a secret left by a build would be (etc, root, tmp, var/tmp) — not a
 * whole root filesystem, whose hundreds of megabytes of programs hold no secret citc could put there.
 */
export function clusterScanRoots(o: {cluster: string; root?: string; sharedDir?: string}): string[] {
  const at = (p: string) => join(o.root ?? '/', p)
  const libCitc = at('/var/lib/citc')
  const imagesDir = join(libCitc, 'images', o.cluster)
  return [
    at('/etc'),
    at(o.sharedDir ?? '/mnt/shared'),
    at('/var/log'),
    at('/run/citc'),
    ...readdirSafe(libCitc).filter((e) => e !== 'images').map((e) => join(libCitc, e)),
    ...readdirSafe(imagesDir)
      .filter((img) => lstatSync(join(imagesDir, img), {throwIfNoEntry: false})?.isDirectory())
      .flatMap((img) => ['etc', 'root', 'tmp', 'var/tmp'].map((d) => join(imagesDir, img, 'rootfs', d))),
  ]
}
