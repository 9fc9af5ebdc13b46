// "Machines" on this host for the tests of `citc node add`: each one a set of unnamed namespaces
// (network, UTS, mount, PID) on an overlay of a Debian 12 root filesystem, with its own address on a
// bridge the test made, its own sshd, and the packages citc's playbook installs waiting in its apt
// cache (a machine has no route out). Needs root. Every process is stopped by PID and every link
// removed by the name the fixture gave it; nothing is ever killed by name.
//
// Why unnamed namespaces (`unshare`), not `ip netns add`: the latter leaves a bind mount under
// /run/netns behind (shared/hybrid-notes.md §3); an unnamed namespace dies with its last process.
import {spawn, spawnSync} from 'node:child_process'
import {createHash, randomBytes} from 'node:crypto'
import {closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {connect} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {sleep} from '../../src/lib/proc.js'

export const MACHINE_CACHE_DIR = '/var/cache/citc-test'
const SUITE = 'bookworm'
/** Installed in the root filesystem: what any Debian server that citc joins would have. */
const INSTALLED = ['openssh-server', 'python3', 'python3-apt', 'sudo', 'iproute2', 'util-linux', 'procps', 'ca-certificates']
/** Only downloaded into /var/cache/apt/archives: what citc's playbook apt-installs on a joined machine,
 *  and what the filesystem role installs to build Amazon's EFS mount helper (test/playbooks/efs-utils.test.ts). */
const cachedPackages = (slurmVersion: string) => [
  `slurmd=${slurmVersion}`, `slurm-client=${slurmVersion}`, 'libpmi2-0', 'munge', 'libnss-ldapd', 'nfs-common',
  'binutils', 'gettext-base', 'stunnel4',
]
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

export interface RunResult {
  status: number | null
  signal: string | null
  stdout: string
  stderr: string
}

/** Run a program to its end, bounded: SIGKILL after timeoutMs. Resolves on exit, not on the pipes
 *  closing, so a daemon the program started with our pipes as its stdout does not hold us. */
function run(cmd: string, args: string[], o: {input?: string; timeoutMs?: number; env?: NodeJS.ProcessEnv} = {}): Promise<RunResult & {timedOut: boolean}> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {stdio: ['pipe', 'pipe', 'pipe'], env: o.env ?? process.env})
    let stdout = ''
    let stderr = ''
    let timedOut = false
    let closed = 0
    let exited: (() => void) | undefined
    const onClose = () => ++closed === 2 && exited?.()
    child.stdout.once('close', onClose)
    child.stderr.once('close', onClose)
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.stdin.on('error', () => {})
    child.stdin.end(o.input ?? '')
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, o.timeoutMs ?? 60_000)
    child.once('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.once('exit', (status, signal) => {
      clearTimeout(timer)
      // Whatever is still in the pipes arrives within a moment; a daemon that kept them is cut off.
      const grace = setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
        done()
      }, 500)
      const done = () => {
        clearTimeout(grace)
        resolve({status, signal, stdout, stderr, timedOut})
      }
      if (closed === 2) done()
      else exited = done
    })
  })
}

async function must(cmd: string, args: string[], what: string, o: {input?: string; timeoutMs?: number} = {}): Promise<string> {
  const r = await run(cmd, args, o)
  if (r.status !== 0) throw new Error(`${what}: ${cmd} ${args.join(' ')} failed (${r.timedOut ? 'timed out' : `exit ${r.status ?? r.signal}`}): ${r.stderr.trim()}`)
  return r.stdout
}

// ---------------------------------------------------------------------------------------------
// The root filesystem

/** The host's slurmd package version (dpkg's): a joined Debian 12 machine gets exactly it. */
export async function hostSlurmVersion(): Promise<string> {
  const r = await run('dpkg-query', ['-W', '-f=${Version}', 'slurmd'])
  if (r.status !== 0 || !r.stdout.trim()) throw new Error('machines fixture: slurmd is not installed on this host (dpkg-query -W slurmd); .ci/run installs it: apt-get install slurmd')
  return r.stdout.trim()
}

/** This host's apt sources for the suite, as the local provider's image build chooses them
 *  (templates/packer/local/rootfs.sh): its own mirror or proxy, so the build works where CI runs. */
function aptSources(): string[] {
  const files = ['/etc/apt/sources.list']
  for (const d of ['/etc/apt/sources.list.d']) {
    if (!existsSync(d)) continue
    for (const f of readdirSync(d).sort()) if (f.endsWith('.list') || f.endsWith('.sources')) files.push(join(d, f))
  }
  const chosen = files.filter((f) => existsSync(f) && new RegExp(`\\b${SUITE}\\b`).test(readFileSync(f, 'utf8')))
  return chosen.length > 0 ? chosen : ['http://deb.debian.org/debian']
}

// Runs under flock (one build at a time for every test file and every worktree on this host).
// mmdebstrap runs in a mount namespace of its own, so a build killed half-way leaves no mount behind
// and its .partial directory can be removed by the next one. The packages are downloaded only
// (`--download-only`, after `apt-get clean` so the cache holds just them; with their Recommends,
// which mmdebstrap's own apt settings leave out, so an install either way works) and the apt lists kept
// (--skip=cleanup/apt): inside a machine, `apt-get install` works from the cache with no network.
// The rootfs's sshd host keys are removed: every machine makes its own at first boot. dpkg skips
// fsync (force-unsafe-io): a test machine's disk never outlives this host's kernel.
const BUILD_SCRIPT = String.raw`set -euo pipefail
final=$1 suite=$2 include=$3 cached=$4
shift 4
[ -d "$final" ] && { echo "already built: $final"; exit 0; }
partial="$final.partial"
rm -rf --one-file-system "$partial"
echo "mmdebstrap $suite -> $partial (sources: $*)"
unshare --mount --propagation private mmdebstrap --mode=root --variant=minbase --format=directory \
  --include="$include" \
  --aptopt='Acquire::Retries "3"' \
  --customize-hook='chroot "$1" apt-get clean' \
  --customize-hook="chroot \"\$1\" env DEBIAN_FRONTEND=noninteractive apt-get install --download-only -y -o APT::Install-Recommends=true $cached" \
  --customize-hook='rm -f "$1"/etc/ssh/ssh_host_*' \
  --customize-hook='echo force-unsafe-io >"$1"/etc/dpkg/dpkg.cfg.d/citc-test-unsafe-io' \
  --skip=cleanup/apt \
  "$suite" "$partial" "$@"
ls "$partial"/var/cache/apt/archives/slurmd_*.deb >/dev/null
mv -T "$partial" "$final"
echo "built: $final"
`

let rootfsPromise: Promise<string> | undefined

/**
 * The machines' Debian 12 root filesystem, built once (mmdebstrap) and cached under
 * /var/cache/citc-test/machine-rootfs-<digest of its inputs> for later runs. Never written to:
 * machines use it as an overlay's lower layer.
 */
export function machineRootfs(): Promise<string> {
  rootfsPromise ??= buildRootfs().catch((e: unknown) => {
    rootfsPromise = undefined
    throw e
  })
  return rootfsPromise
}

async function buildRootfs(): Promise<string> {
  const version = await hostSlurmVersion()
  const sources = aptSources()
  const cached = cachedPackages(version)
  const inputs = JSON.stringify({
    suite: SUITE,
    installed: INSTALLED,
    cached,
    sources: sources.map((s) => (existsSync(s) ? readFileSync(s, 'utf8') : s)),
    script: BUILD_SCRIPT,
  })
  const digest = createHash('sha256').update(inputs).digest('hex').slice(0, 16)
  mkdirSync(MACHINE_CACHE_DIR, {recursive: true})
  const dir = join(MACHINE_CACHE_DIR, `machine-rootfs-${digest}`)
  if (existsSync(dir)) return dir
  // One log per process: a second test file waiting on the lock must not truncate the builder's.
  const log = `${dir}.build-${process.pid}.log`
  const fd = openSync(log, 'w')
  try {
    // flock -w: a second test file waits (bounded) for the first one's build, then finds it done.
    const r = await new Promise<{status: number | null}>((resolve, reject) => {
      const child = spawn('flock', ['-w', '1200', join(MACHINE_CACHE_DIR, 'machine-rootfs.lock'), 'bash', '-c', BUILD_SCRIPT, 'build', dir, SUITE, INSTALLED.join(','), cached.join(' '), ...sources], {stdio: ['ignore', fd, fd]})
      const timer = setTimeout(() => child.kill('SIGKILL'), 1500_000)
      child.once('error', reject)
      child.once('exit', (status) => {
        clearTimeout(timer)
        resolve({status})
      })
    })
    if (r.status !== 0 || !existsSync(dir)) {
      const tail = readFileSync(log, 'utf8').split('\n').slice(-25).join('\n')
      throw new Error(`machines fixture: building the root filesystem ${dir} failed (exit ${r.status}); log ${log}:\n${tail}`)
    }
  } finally {
    closeSync(fd)
  }
  rmSync(log, {force: true})
  return dir
}

// ---------------------------------------------------------------------------------------------
// The network

export interface ClusterNetwork {
  /** The bridge's name, citcbr<4 hex>. */
  bridge: string
  /** The host's address on the bridge, 10.250.N.1 (what machines reach the management node at). */
  hostAddr: string
  prefix: 24
  /** Machine i's address (i from 1 to 253): 10.250.N.(i+1). */
  addrFor(i: number): string
  /** Remove the bridge and every link the fixture put on it. */
  close(): Promise<void>
}

/** Links and init PIDs still alive, for the exit hook: a test that crashed leaves nothing behind. */
const live = {bridges: new Set<string>(), inits: new Set<number>(), links: new Set<string>()}
let exitHookSet = false
function exitHook() {
  if (exitHookSet) return
  exitHookSet = true
  process.once('exit', () => {
    for (const pid of live.inits) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // already gone
      }
    }
    // Synchronous on exit; the links go with their namespaces anyway, the bridge does not.
    for (const l of [...live.links, ...live.bridges]) spawnSyncQuiet('ip', ['link', 'del', l])
  })
}

function spawnSyncQuiet(cmd: string, args: string[]) {
  spawnSync(cmd, args, {stdio: 'ignore', timeout: 5000})
}

/** A locally administered MAC made of the address 10.250.n.host: a machine keeps it across restarts,
 *  as a real one keeps its NIC's, so its neighbours' ARP entries stay right. */
const macFor = (n: number, host: number) => `02:ce:0a:fa:${n.toString(16).padStart(2, '0')}:${host.toString(16).padStart(2, '0')}`

async function linkExists(name: string): Promise<boolean> {
  return (await run('ip', ['link', 'show', 'dev', name])).status === 0
}

/** The third octets of 10.250.N.0/24 networks this host already routes or has addresses in. */
async function usedSubnets(): Promise<Set<number>> {
  const out = (await run('ip', ['-4', '-o', 'route', 'show', 'table', 'all'])).stdout + (await run('ip', ['-4', '-o', 'addr'])).stdout
  return new Set([...out.matchAll(/\b10\.250\.(\d+)\./g)].map((m) => Number(m[1])))
}

export async function clusterNetwork(): Promise<ClusterNetwork> {
  exitHook()
  for (let attempt = 0; attempt < 20; attempt++) {
    const used = await usedSubnets()
    // 10.250.99 is the hand probe's network in shared/hybrid-notes.md: left alone.
    const n = 1 + (randomBytes(1)[0] % 250)
    if (n === 99 || used.has(n)) continue
    const bridge = `citcbr${randomBytes(2).toString('hex')}`
    if (await linkExists(bridge)) continue
    const hostAddr = `10.250.${n}.1`
    // A fixed MAC: a bridge otherwise takes its lowest port's, and changes it as machines come and go.
    await must('ip', ['link', 'add', bridge, 'address', macFor(n, 1), 'type', 'bridge'], 'machines fixture: the bridge')
    live.bridges.add(bridge)
    const close = async () => {
      for (const l of [...live.links].filter((x) => x.startsWith(`${bridge}v`))) {
        await run('ip', ['link', 'del', l])
        live.links.delete(l)
      }
      await run('ip', ['link', 'del', bridge])
      live.bridges.delete(bridge)
    }
    try {
      await must('ip', ['addr', 'add', `${hostAddr}/24`, 'dev', bridge], 'machines fixture: the bridge address')
      await must('ip', ['link', 'set', bridge, 'up'], 'machines fixture: the bridge up')
      // Another test file may have picked the same network a moment ago: then one of us moves on.
      const routes = (await run('ip', ['-4', '-o', 'route', 'show', `10.250.${n}.0/24`])).stdout.trim().split('\n')
      if (routes.length > 1) {
        await close()
        continue
      }
    } catch (e) {
      await close()
      throw e
    }
    return {
      bridge,
      hostAddr,
      prefix: 24,
      addrFor(i: number) {
        if (!Number.isInteger(i) || i < 1 || i > 253) throw new Error(`machines fixture: machine index ${i} is not in 1..253`)
        return `10.250.${n}.${i + 1}`
      },
      close,
    }
  }
  throw new Error('machines fixture: found no free 10.250.N.0/24 network in 20 tries (see ip -4 route)')
}

// ---------------------------------------------------------------------------------------------
// A machine

export interface ExecOptions {
  /** Standard input. */
  input?: string
  /** Default 120 s (an apt-get install fits); then the command is killed and exec throws. */
  timeoutMs?: number
  /** Added to the clean environment (PATH, HOME=/root, LANG=C.UTF-8). */
  env?: Record<string, string>
}

export interface MachineOptions {
  net: ClusterNetwork
  /** Hostname (UTS namespace and /etc/hostname). */
  name: string
  /** Its address is net.addrFor(index). */
  index: number
  /** machineRootfs(): the overlay's lower layer. */
  rootfs: string
  /** A public key line, written to the machine's /root/.ssh/authorized_keys at each start. */
  authorizedKey: string
  /** A host directory bind-mounted at the same path inside: the STAND-IN for the cluster's NFS
   *  mount (this kernel has no NFS), not NFS itself. Made on the host if missing; bound at each start. */
  sharedDir?: string
  /** How long a boot may take until sshd answers; default 30 s. */
  bootTimeoutMs?: number
}

export interface Machine {
  readonly name: string
  readonly address: string
  readonly index: number
  /** Its temp dir on the host: upper/ (its "disk", kept across restarts), work/, merged/, console.log. */
  readonly dir: string
  /** The namespace's init as the host sees it (changes at each start); 0 when not running. */
  readonly pid: number
  readonly running: boolean
  /** SHA256:… of its ed25519 host key (made at first boot, kept across restarts). */
  readonly hostKeyFingerprint: string
  /** Its ed25519 public host key line ("ssh-ed25519 AAAA…"), for a known_hosts line. */
  readonly hostKey: string
  /** Run a program inside (nsenter into its namespaces and root), as root, bounded; synchronous
   *  (blocks this process: no in-process server answers meanwhile). Throws when it times out. */
  exec(cmd: string[], opts?: ExecOptions): RunResult
  /** exec without blocking this process (for tests whose own servers must keep answering). */
  execAsync(cmd: string[], opts?: ExecOptions): Promise<RunResult>
  /** A power cut: SIGKILL its init (every process inside dies with it), wait until it is gone,
   *  remove its veth. The upper dir stays. */
  kill(): Promise<void>
  /** Boot again: same upper dir, same address, same host key (a reboot after kill()). */
  start(): Promise<void>
  /** kill(), then remove its temp dir (with the upper dir). */
  destroy(): Promise<void>
  /** Drop TCP to `port` inside its network namespace (nft, this host's binary): 'in' = connections to
   *  the machine's port, 'out' = connections it makes to that port elsewhere. Kept across restarts,
   *  like a firewall configured at boot. */
  blockPort(port: number, direction?: 'in' | 'out'): Promise<void>
  unblockPort(port: number, direction?: 'in' | 'out'): Promise<void>
  /** What its init and boot scripts printed. */
  consoleLog(): string
}

// PID 1 of the new namespaces, before it enters the machine's root: waits for the host to finish
// the network (a line on stdin), mounts the overlay and the kernel filesystems, then execs the
// machine's init inside. A minimal /dev (a few nodes and its own devpts), not the host's.
const BOOT_SCRIPT = String.raw`set -eu
dir=$1 rootfs=$2 name=$3 address=$4 shared=$5 init=$6
m=$dir/merged
read -r go || exit 1
mount -t overlay overlay -o "lowerdir=$rootfs,upperdir=$dir/upper,workdir=$dir/work" "$m"
mount -t proc proc "$m/proc"
mount -t sysfs sysfs "$m/sys" || mount --rbind /sys "$m/sys"
# A real machine has its cgroup hierarchy mounted (slurmd's cgroup plugin refuses to start without one).
[ -d /sys/fs/cgroup ] && mount --rbind /sys/fs/cgroup "$m/sys/fs/cgroup"
mount -t tmpfs -o mode=755,size=16m tmpfs "$m/dev"
for spec in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  IFS=: read -r n ma mi <<EOF
$spec
EOF
  mknod -m 666 "$m/dev/$n" c "$ma" "$mi"
done
mkdir "$m/dev/pts" "$m/dev/shm"
mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts "$m/dev/pts"
ln -s pts/ptmx "$m/dev/ptmx"
mount -t tmpfs -o mode=1777 tmpfs "$m/dev/shm"
ln -s /proc/self/fd "$m/dev/fd"
ln -s /proc/self/fd/0 "$m/dev/stdin"; ln -s /proc/self/fd/1 "$m/dev/stdout"; ln -s /proc/self/fd/2 "$m/dev/stderr"
mount -t tmpfs -o mode=755 tmpfs "$m/run"
mkdir -m 1777 "$m/run/lock"
mount -t tmpfs -o mode=1777 tmpfs "$m/tmp"
if [ -n "$shared" ]; then
  # The STAND-IN for the NFS mount of the cluster's shared directory: this kernel has no NFS.
  mkdir -p "$m$shared"
  mount --bind "$shared" "$m$shared"
fi
hostname "$name"
echo "$name" >"$m/etc/hostname"
# No DNS on the test network: with no nameserver line lookups fail at once (127.0.0.1:53 refuses)
# instead of waiting out the host's resolver, which the machine cannot reach (nslcd's postinst
# alone would spend 40 s there).
rm -f "$m/etc/resolv.conf"
echo '# the test cluster network has no DNS server' >"$m/etc/resolv.conf"
printf '127.0.0.1\tlocalhost\n%s\t%s\n::1\tlocalhost ip6-localhost ip6-loopback\n' "$address" "$name" >"$m/etc/hosts"
install -d -m 700 "$m/root/.ssh"
install -m 600 "$dir/authorized_keys" "$m/root/.ssh/authorized_keys"
exec chroot "$m" /bin/sh -c "$init" </dev/null
`

// The machine's own init, like a Debian boot without systemd: host keys made once (they persist in
// the upper dir), sshd first (so a hanging service cannot lock the test out), then every
// /etc/rc2.d/S* script with `start` in order (services the playbook enables with update-rc.d start
// at boot), then PID 1 waits forever reaping orphans (python3: a shell reaps only its own children).
// PID 1 calls itself "init", so Ansible's facts say ansible_service_mgr=sysvinit, as on a Debian
// booted without systemd (with "python3" they named no known manager).
const INIT_SCRIPT = String.raw`export PATH=${PATH} HOME=/root LANG=C.UTF-8
cd /
ssh-keygen -A
(
  if [ -x /etc/init.d/ssh ]; then /etc/init.d/ssh start; else mkdir -p /run/sshd && /usr/sbin/sshd; fi
  for s in /etc/rc2.d/S*; do
    case "$s" in */S[0-9][0-9]ssh) continue ;; esac
    [ -x "$s" ] && "$s" start
  done
  echo "citc-machine: booted"
) &
exec python3 -c '
import os, time
with open("/proc/self/comm", "w") as f:
    f.write("init")
while True:
    try:
        os.wait()
    except ChildProcessError:
        time.sleep(1)
'
`.replace('${PATH}', PATH)

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

const alive = (pid: number) => pid > 0 && existsSync(`/proc/${pid}`)

/** sshd answers on address:22 with its banner. */
function sshBanner(address: string, timeoutMs = 2000): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({host: address, port: 22})
    const timer = setTimeout(() => {
      sock.destroy()
      resolve(false)
    }, timeoutMs)
    sock.once('data', (d: Buffer) => {
      clearTimeout(timer)
      sock.destroy()
      resolve(d.toString().startsWith('SSH-2.0-'))
    })
    sock.once('error', () => {
      clearTimeout(timer)
      resolve(false)
    })
  })
}

function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter((p): p is string => p !== undefined && (p === dir || p.startsWith(`${dir}/`)))
    .sort((a, b) => b.length - a.length)
}

export async function startMachine(o: MachineOptions): Promise<Machine> {
  exitHook()
  if (!/^[a-z][a-z0-9-]{0,62}$/.test(o.name)) throw new Error(`machines fixture: ${o.name} is not a hostname`)
  if (o.sharedDir !== undefined) {
    if (!o.sharedDir.startsWith('/')) throw new Error(`machines fixture: sharedDir ${o.sharedDir} is not an absolute path`)
    // Made if missing (a machine may start before the cluster that fills it): the bind is of this
    // directory, so a host that replaces it later needs the machine restarted to see the new one.
    mkdirSync(o.sharedDir, {recursive: true, mode: 0o755})
  }
  const address = o.net.addrFor(o.index)
  const dir = mkdtempSync(join(tmpdir(), `citc-machine-${o.name}-`))
  for (const d of ['upper', 'work', 'merged']) mkdirSync(join(dir, d))
  const consolePath = join(dir, 'console.log')
  const hostLink = `${o.net.bridge}v${o.index}`
  const peerLink = `${o.net.bridge}p${o.index}`
  const blocked = {in: new Set<number>(), out: new Set<number>()}
  let pid = 0
  let unsharePid = 0
  let firewallReady = false

  /** Its ed25519 public host key line, from the upper dir (made at first boot) or the rootfs. */
  function readHostKey(): string {
    const pub = [join(dir, 'upper/etc/ssh/ssh_host_ed25519_key.pub'), join(o.rootfs, 'etc/ssh/ssh_host_ed25519_key.pub')].find((f) => existsSync(f))
    if (!pub) throw new Error(`machine ${o.name}: no /etc/ssh/ssh_host_ed25519_key.pub in its upper dir ${dir}/upper or the rootfs`)
    return readFileSync(pub, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ')
  }

  const nsenter = (args: string[], what: string, input?: string) => must('nsenter', ['-t', String(pid), '-n', ...args], `machine ${o.name}: ${what}`, {input, timeoutMs: 15_000})

  async function firewall(op: 'add' | 'delete', port: number, direction: 'in' | 'out') {
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`machine ${o.name}: ${port} is not a TCP port`)
    if (!(await run('sh', ['-c', 'command -v nft'])).stdout.trim()) throw new Error('machines fixture: nft is not installed on this host (Debian package nftables; .ci/run installs it)')
    if (!firewallReady) {
      const table = `table inet citc_test {
  set blocked_in { type inet_service; }
  set blocked_out { type inet_service; }
  chain input { type filter hook input priority 0; policy accept; tcp dport @blocked_in drop; }
  chain output { type filter hook output priority 0; policy accept; tcp dport @blocked_out drop; }
}
`
      await nsenter(['nft', '-f', '-'], 'the test firewall table', table)
      firewallReady = true
    }
    await nsenter(['nft', op, 'element', 'inet', 'citc_test', `blocked_${direction}`, `{ ${port} }`], `${op} port ${port} ${direction}`)
  }

  async function removeLinks() {
    for (const l of [hostLink, peerLink]) {
      if (await linkExists(l)) await run('ip', ['link', 'del', l])
      live.links.delete(l)
    }
  }

  async function kill() {
    if (pid && alive(pid)) {
      process.kill(pid, 'SIGKILL')
      const deadline = Date.now() + 10_000
      while (alive(pid) || alive(unsharePid)) {
        if (Date.now() > deadline) throw new Error(`machine ${o.name}: its init ${pid} is still there 10 s after SIGKILL`)
        await sleep(20)
      }
    }
    live.inits.delete(pid)
    pid = 0
    // The veth normally goes with the namespace; wait a moment for the kernel, then remove it.
    const deadline = Date.now() + 3000
    while ((await linkExists(hostLink)) && Date.now() < deadline) await sleep(50)
    await removeLinks()
  }

  async function start() {
    if (pid && alive(pid)) throw new Error(`machine ${o.name} is running already (init ${pid})`)
    firewallReady = false
    writeFileSync(join(dir, 'authorized_keys'), `${o.authorizedKey.trim()}\n`, {mode: 0o600})
    await removeLinks()
    const log = openSync(consolePath, 'a')
    const child = spawn('unshare', ['--net', '--uts', '--mount', '--pid', '--fork', '--mount-proc', '--propagation', 'private', 'bash', '-c', BOOT_SCRIPT, 'boot', dir, o.rootfs, o.name, address, o.sharedDir ?? '', INIT_SCRIPT], {
      stdio: ['pipe', log, log],
      detached: true,
    })
    closeSync(log)
    child.unref()
    const stdin = child.stdin
    if (!stdin) throw new Error(`machine ${o.name}: unshare has no stdin`)
    stdin.on('error', () => {})
    unsharePid = child.pid ?? 0
    if (!unsharePid) throw new Error(`machine ${o.name}: unshare did not start`)
    try {
      const deadline = Date.now() + 5000
      while (!(pid = childrenOf(unsharePid)[0] ?? 0)) {
        if (!alive(unsharePid) || Date.now() > deadline) throw new Error(`machine ${o.name}: unshare made no init (${consoleTail()})`)
        await sleep(10)
      }
      live.inits.add(pid)
      await must('ip', ['link', 'add', hostLink, 'type', 'veth', 'peer', 'name', peerLink, 'address', macFor(Number(address.split('.')[2]), Number(address.split('.')[3]))], `machine ${o.name}: its veth`)
      live.links.add(hostLink)
      await must('ip', ['link', 'set', peerLink, 'netns', String(pid)], `machine ${o.name}: its veth into the namespace`)
      await must('ip', ['link', 'set', hostLink, 'master', o.net.bridge, 'up'], `machine ${o.name}: its veth on the bridge`)
      const batch = [`link set ${peerLink} name eth0`, `addr add ${address}/${o.net.prefix} dev eth0`, 'link set eth0 up', 'link set lo up', `route add default via ${o.net.hostAddr}`].join('\n')
      await nsenter(['ip', '-batch', '-'], 'its network', `${batch}\n`)
      stdin.end('go\n')
      const deadline2 = Date.now() + (o.bootTimeoutMs ?? 30_000)
      while (!(await sshBanner(address))) {
        if (!alive(pid)) throw new Error(`machine ${o.name}: its init died while booting (${consoleTail()})`)
        if (Date.now() > deadline2) throw new Error(`machine ${o.name}: sshd did not answer on ${address}:22 within ${o.bootTimeoutMs ?? 30_000} ms (${consoleTail()})`)
        await sleep(100)
      }
      readHostKey()
      for (const d of ['in', 'out'] as const) for (const p of blocked[d]) await firewall('add', p, d)
    } catch (e) {
      await kill().catch(() => undefined)
      throw e
    }
  }

  function consoleTail(): string {
    try {
      return `console: ${readFileSync(consolePath, 'utf8').trim().split('\n').slice(-8).join(' | ')}`
    } catch {
      return 'no console log'
    }
  }

  let execCount = 0
  function execArgs(cmd: string[], opts: ExecOptions) {
    if (!alive(pid)) throw new Error(`machine ${o.name} is not running: cannot run ${cmd.join(' ')}`)
    const timeoutMs = opts.timeoutMs ?? 120_000
    const env = Object.entries({PATH, HOME: '/root', LANG: 'C.UTF-8', ...opts.env}).map(([k, v]) => `${k}=${v}`)
    // nsenter -p forks the command into the machine's PID namespace; killing nsenter would leave it,
    // so `timeout` inside bounds the command itself too.
    const secs = String(Math.max(1, Math.ceil(timeoutMs / 1000)))
    const args = ['-t', String(pid), '-m', '-u', '-n', '-p', '-r', '-w', '--', '/usr/bin/env', '-i', ...env, 'timeout', '-s', 'KILL', secs, ...cmd]
    return {args, timeoutMs, started: Date.now()}
  }
  function execResult(cmd: string[], r: RunResult, timeoutMs: number, started: number, hostTimedOut: boolean): RunResult {
    // `timeout -s KILL` kills the command's process group, itself included; nsenter then dies of the
    // same signal (it passes its child's death on).
    if (hostTimedOut || ((r.signal === 'SIGKILL' || r.status === 124 || r.status === 137) && Date.now() - started >= timeoutMs - 1000)) {
      throw new Error(`machine ${o.name}: ${cmd.join(' ')} did not finish within ${timeoutMs} ms`)
    }
    return r
  }

  const machine: Machine = {
    name: o.name,
    address,
    index: o.index,
    dir,
    get pid() {
      return pid
    },
    get running() {
      return alive(pid)
    },
    // Read at each use: a test (or the playbook) may replace the key while the machine runs.
    get hostKey() {
      return readHostKey()
    },
    get hostKeyFingerprint() {
      // As ssh-keygen -lf prints it: SHA-256 of the key blob, base64 without padding.
      const blob = Buffer.from(readHostKey().split(' ')[1] ?? '', 'base64')
      return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`
    },
    exec(cmd, opts = {}) {
      const {args, timeoutMs, started} = execArgs(cmd, opts)
      // stdout and stderr go to files, not pipes: spawnSync then returns when the command exits, even
      // if a daemon it started (`service munge start`) still holds them.
      const out = join(dir, `exec-${process.pid}-${execCount++}`)
      const fds = [openSync(`${out}.out`, 'w'), openSync(`${out}.err`, 'w')]
      try {
        const r = spawnSync('nsenter', args, {input: opts.input ?? '', stdio: ['pipe', fds[0], fds[1]], timeout: timeoutMs + 5000, killSignal: 'SIGKILL'})
        if (r.error && (r.error as NodeJS.ErrnoException).code !== 'ETIMEDOUT') throw r.error
        const result = {status: r.status, signal: r.signal, stdout: readFileSync(`${out}.out`, 'utf8'), stderr: readFileSync(`${out}.err`, 'utf8')}
        return execResult(cmd, result, timeoutMs, started, r.error !== undefined)
      } finally {
        for (const fd of fds) closeSync(fd)
        rmSync(`${out}.out`, {force: true})
        rmSync(`${out}.err`, {force: true})
      }
    },
    async execAsync(cmd, opts = {}) {
      const {args, timeoutMs, started} = execArgs(cmd, opts)
      const r = await run('nsenter', args, {input: opts.input, timeoutMs: timeoutMs + 5000})
      return execResult(cmd, {status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr}, timeoutMs, started, r.timedOut)
    },
    kill,
    start,
    async destroy() {
      await kill()
      for (const m of mountsUnder(dir)) await run('umount', ['--lazy', m])
      await must('rm', ['-rf', '--one-file-system', dir], `machine ${o.name}: removing ${dir}`)
    },
    async blockPort(port, direction = 'in') {
      blocked[direction].add(port)
      if (alive(pid)) await firewall('add', port, direction)
    },
    async unblockPort(port, direction = 'in') {
      const had = blocked[direction].delete(port)
      if (had && alive(pid)) await firewall('delete', port, direction)
    },
    consoleLog: () => (existsSync(consolePath) ? readFileSync(consolePath, 'utf8') : ''),
  }
  try {
    await start()
  } catch (e) {
    await must('rm', ['-rf', '--one-file-system', dir], `machine ${o.name}: removing ${dir}`).catch(() => undefined)
    throw e
  }
  return machine
}
