// The local node driver: each compute node is a slurmd process on this machine.
// - slurmd -b, started in the second after the power-up request's, so the node "booted" after it
//   (Slurm ignores a powering-up node whose boot time is older than the request: msToNextSecond);
// - own UTS namespace, so `hostname` in a job prints the node's name;
// - own mount namespace booting the cluster's current image (`citc rebuild-image`): the image's root
//   filesystem under a fresh writable layer (tmpfs overlay: every start boots clean, like a cloud VM),
//   with /proc, /sys, /dev, this machine's /run (munged's and nslcd's sockets, slurmd's pid file),
//   /etc/hosts and resolv.conf (read-only), the shared filesystem and Slurm's log directory bound in.
//   The mounts vanish with the node's last process. A cluster without an image (made before images
//   existed) runs this machine's own slurmd, as before;
// - own port and spool/log/pid files (slurm.conf's Port= and %n do that);
// - started detached with absolute paths (slurmctld runs us with a minimal PATH), stopped for sure:
//   SIGTERM, then SIGKILL after a grace period, until the process is gone and its port is free.
import {existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {basename, join} from 'node:path'

import {spawnDetached} from '../../tools/exec.js'
import {checkSection} from '../driver-section.js'
import type {CloudInstance, NodeDriver, NodeDriverFactory, NodeOutcome, NodeSpec} from '../types.js'
import {driverUserspace, gpuFilesOf, NVIDIA_CONTROL_DEVICES, readGresConf} from './gpu-node.js'
import {localNodeConfig} from './node-config.js'
import {pidAlive, sleep} from '../../proc.js'

export interface LocalDriverOptions {
  /** Where citc keeps one pid file per running node. */
  runDir: string
  confPath: string
  logDir: string
  slurmd: string
  unshare: string
  /** Seconds to wait for slurmd to be up (its pid file written, the process alive). */
  startTimeoutS: number
  /** Seconds between SIGTERM and SIGKILL. */
  stopGraceS: number
  /** Slurm's SlurmdPidFile pattern with %n. */
  slurmdPidFile: string
  /** The cluster's images (`current` names the one new nodes boot); undefined: /var/lib/citc/images/<cluster>. */
  imagesDir?: string
  /** The cluster (cluster.json's name), for the default imagesDir. */
  cluster?: string
  /** The shared filesystem, bound into every node at the same path. */
  sharedDir: string
  /** Slurm's log directory (SlurmdLogFile's), bound into every node. */
  slurmLogDir: string
  /** Where this machine's NVIDIA devices (dev/) and driver user-space are: '/' except under a stand-in (its driver.gpuRoot). */
  gpuRoot: string
}

export const LOCAL_DRIVER_DEFAULTS: LocalDriverOptions = {
  runDir: '/run/citc/nodes',
  confPath: '/etc/slurm/slurm.conf',
  logDir: '/var/log/citc/nodes',
  slurmd: '/usr/sbin/slurmd',
  unshare: '/usr/bin/unshare',
  startTimeoutS: 15,
  stopGraceS: 10,
  slurmdPidFile: '/run/slurmd-%n.pid',
  sharedDir: '/mnt/shared',
  slurmLogDir: '/var/log/slurm',
  gpuRoot: '/',
}

/** Where local images live: <root>/<cluster>/<image>/rootfs, and <root>/<cluster>/current → <image>. */
export const LOCAL_IMAGES_ROOT = '/var/lib/citc/images'

/**
 * The node's boot inside its namespaces: $1 name, $2 image root filesystem, $3 state dir, $4 shared dir,
 * $5 log dir, $6 slurm.conf; for a GPU node $7 its device names under /dev (its GPUs', NVIDIA's control
 * devices) and $8 the directory they come from, then pairs of (host file, path in the node) for the
 * driver's user-space (gpu-node.ts).
 *
 * A GPU node's /dev is its own tmpfs: everything of this machine's /dev but NVIDIA's devices (device
 * nodes copied, directories such as pts and shm bound, sockets bound), then its own. A job there finds
 * only its node's GPUs, as in a container; Slurm's CUDA_VISIBLE_DEVICES then numbers them from 0.
 */
const BOOT_FROM_IMAGE = `set -e
r="$3/root"
mount -t tmpfs -o mode=0755 citc-node "$3"
mkdir "$3/upper" "$3/work" "$r"
mount -t overlay overlay -o "lowerdir=$2,upperdir=$3/upper,workdir=$3/work" "$r"
mount -t proc proc "$r/proc"
mount --rbind /sys "$r/sys"
if [ -n "$7" ]; then
  mount -t tmpfs -o mode=0755,nosuid citc-dev "$r/dev"
  nodes=
  for e in /dev/*; do
    case "\${e#/dev/}" in nvidia*) continue ;; esac
    if [ -L "$e" ]; then cp -P "$e" "$r$e"
    elif [ -d "$e" ]; then mkdir "$r$e"; mount --rbind "$e" "$r$e"
    elif [ -c "$e" ] || [ -b "$e" ]; then nodes="$nodes $e"
    elif [ -e "$e" ]; then : > "$r$e"; mount --bind "$e" "$r$e"
    fi
  done
  cp -a $nodes "$r/dev/"
  for d in $7; do
    if [ -d "$8/$d" ]; then mkdir "$r/dev/$d"; mount --rbind "$8/$d" "$r/dev/$d"; else cp -a "$8/$d" "$r/dev/$d"; fi
  done
else
  mount --rbind /dev "$r/dev"
fi
mount --bind /run "$r/run"
for f in /etc/hosts /etc/resolv.conf; do
  [ -e "$r$f" ] || : > "$r$f"
  mount --bind -o ro "$f" "$r$f"
done
mkdir -p "$r$4" "$r$5"
mount --bind "$4" "$r$4"
mount --bind "$5" "$r$5"
name="$1" conf="$6"
shift 8
[ $# -eq 0 ] || {
  while [ $# -ge 2 ]; do
    t="$r$2"
    mkdir -p "\${t%/*}"
    if [ -L "$1" ]; then rm -f "$t"; cp -P "$1" "$t"
    else [ -e "$t" ] || : > "$t"; mount --bind -o ro "$1" "$t"; fi
    shift 2
  done
  chroot "$r" /sbin/ldconfig
}
hostname "$name"
exec chroot "$r" /usr/sbin/slurmd -D -b -N "$name" -f "$conf"`

/** The image a node booted (its name), recorded in <runDir>/<node>.image while it runs. */
export function localNodeImage(runDir: string, node: string): string | undefined {
  try {
    return readFileSync(join(runDir, `${node}.image`), 'utf8').trim() || undefined
  } catch {
    return undefined
  }
}

/** The image new nodes boot: `current`'s target, with its root filesystem; undefined when the cluster has none. */
export function currentLocalImage(imagesDir: string): {name: string; rootfs: string} | undefined {
  let target: string
  try {
    target = readlinkSync(join(imagesDir, 'current'))
  } catch {
    return undefined
  }
  const name = basename(target)
  return {name, rootfs: join(imagesDir, name, 'rootfs')}
}

/** True if pid runs the program at `exe` (a pid file can outlive its process and the pid be reused). */
function runs(pid: number, exe: string): boolean {
  try {
    return exeOf(pid) === realpathSync(exe)
  } catch {
    return false // no such program here
  }
}

/**
 * True if pid is a slurmd booted in a node whose root is `nodeRoot`. Its executable shows as the path
 * inside the node's mount namespace (an empty directory from here, and /usr/sbin/slurmd is a link to
 * slurmd-wlm in Debian's package): compare the strings, never resolve them.
 */
function runsInNode(pid: number, nodeRoot: string): boolean {
  const exe = exeOf(pid)
  return exe !== undefined && exe.startsWith(`${nodeRoot}/usr/sbin/slurmd`)
}

function exeOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/exe`)
  } catch {
    return undefined
  }
}

/** When the file was last written (ms since the epoch), or now if it is gone. */
function mtimeMs(file: string): number {
  try {
    return statSync(file).mtimeMs
  } catch {
    return Date.now()
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * How long to wait before starting a node's slurmd, in ms. slurmctld takes a powering-up node's
 * registration only when the boot time it reports (slurmctld's now − slurmd's uptime, whole seconds,
 * the uptime rounded up) is not before the second of the power-up request; an earlier one it ignores
 * without a word, and the node's job waits until ResumeTimeout fails it (CI saw it twice). slurmd -b
 * counts its uptime from its own start, which makes that boot time no earlier than one second before
 * slurmd's start: so slurmd must start in a later second than the request, which came before this
 * program ran. (A time namespace's boot-time offset is whole seconds: it left the uptime up to 1 s old
 * at the start, too old with the rounding, so nodes use none.)
 */
export function msToNextSecond(nowMs: number): number {
  return 1000 - (nowMs % 1000) + 50
}

/** Node names are ours (cluster id, shape, number): still, refuse anything that could be a path. */
const SAFE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/

/** The node programs' local driver: cluster.json's cluster and paths, its section's overrides on top (confPath is the file's). */
export const localNodeDriver: NodeDriverFactory = ({cluster, sharedDir, confPath, section, standIn}) =>
  localDriver({cluster, sharedDir, ...checkSection('local', localNodeConfig.schema, section), confPath, ...(standIn?.gpuRoot ? {gpuRoot: standIn.gpuRoot} : {})})

export function localDriver(overrides: Partial<LocalDriverOptions> = {}): NodeDriver {
  const o = {...LOCAL_DRIVER_DEFAULTS, ...overrides}
  const pidFile = (name: string) => join(o.runDir, `${name}.pid`)
  const slurmdPidFile = (name: string) => o.slurmdPidFile.replace('%n', name)
  /** Where a node booted from an image has its writable layer and root (mounted in its namespace only). */
  const stateDir = (name: string) => join(o.runDir, `${name}.node`)
  const imagesDir = o.imagesDir ?? (o.cluster ? join(LOCAL_IMAGES_ROOT, o.cluster) : undefined)
  /** The node's slurmd, if its pid file names a live slurmd (this machine's, or the one in its image). */
  const slurmdPid = (name: string) => {
    const pid = readPid(slurmdPidFile(name))
    return pid !== undefined && pidAlive(pid) && (runs(pid, o.slurmd) || runsInNode(pid, join(stateDir(name), 'root'))) ? pid : undefined
  }
  /** The node's launcher (unshare), if its pid file names a live one. */
  const launcherPid = (name: string) => {
    const pid = readPid(pidFile(name))
    return pid !== undefined && pidAlive(pid) && runs(pid, o.unshare) ? pid : undefined
  }

  /**
   * One node program at a time per node: a suspend that arrives while the node is starting (finish
   * powering down a POWERING_UP node) waits for the start, then stops what it started.
   */
  async function withNodeLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    mkdirSync(o.runDir, {recursive: true})
    const file = join(o.runDir, `${name}.lock`)
    const deadline = Date.now() + (o.startTimeoutS + o.stopGraceS + 30) * 1000
    for (;;) {
      try {
        writeFileSync(file, `${process.pid}\n`, {flag: 'wx'})
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        const holder = readPid(file)
        // Empty for a moment while its writer is between open and write: only stale when old.
        const stale = holder === undefined ? Date.now() - mtimeMs(file) > 5000 : !pidAlive(holder)
        if (stale) {
          rmSync(file, {force: true}) // left by a node program that died
          continue
        }
        if (Date.now() > deadline) throw new Error(`another node program (pid ${holder}) is still working on ${name}`)
        await sleep(200)
      }
    }
    try {
      return await fn()
    } finally {
      rmSync(file, {force: true})
    }
  }

  /** Never throws: a failure to start is an outcome, so it is reported to Slurm at once. */
  async function start(node: NodeSpec, log: (m: string) => void): Promise<NodeOutcome> {
    try {
      return await withNodeLock(node.name, () => startOnce(node, log))
    } catch (error) {
      return {name: node.name, ok: false, error: error instanceof Error ? error.message : String(error)}
    }
  }

  /**
   * The boot script's GPU arguments for a node ($7, $8, then the user-space pairs): none for a node
   * gres.conf gives no GPU; an error a user can act on when its devices are not all here.
   */
  function gpuBoot(node: NodeSpec, fromImage: boolean): {args: string[]} | {error: string} {
    const files = gpuFilesOf(readGresConf(o.confPath), node.name)
    if (files === undefined) {
      return (node.gpus ?? 0) > 0 ? {error: `citc: config: gres.conf gives ${node.name} no GPU device file; run citc finish`} : {args: ['', '']}
    }
    if (!fromImage) return {error: 'citc: config: GPU nodes boot from an image (their own /dev); run citc rebuild-image'}
    const devDir = join(o.gpuRoot, 'dev')
    const names: string[] = []
    for (const file of files) {
      const rel = file.startsWith('/dev/') ? file.slice('/dev/'.length) : undefined
      if (!rel || rel.includes('/') || !existsSync(join(devDir, rel))) {
        return {error: `citc: gpu: ${file} is not on this machine (gres.conf's File= for ${node.name}); is NVIDIA's driver loaded? nvidia-smi -L lists the GPUs`}
      }
      names.push(rel)
    }
    for (const c of NVIDIA_CONTROL_DEVICES) if (existsSync(join(devDir, c))) names.push(c)
    return {args: [names.join(' '), devDir, ...driverUserspace(o.gpuRoot).flatMap((f) => [f.source, f.target])]}
  }

  async function startOnce(node: NodeSpec, log: (m: string) => void): Promise<NodeOutcome> {
    const {name} = node
    if (!SAFE_NAME.test(name)) return {name, ok: false, error: `refusing node name "${name}"`}
    const existing = launcherPid(name)
    if (existing) {
      log(`${name}: already running (pid ${existing})`)
      return {name, ok: true}
    }
    mkdirSync(o.runDir, {recursive: true})
    mkdirSync(o.logDir, {recursive: true})
    // A pid file left by a slurmd that was killed would make the wait below trust a stranger.
    rmSync(slurmdPidFile(name), {force: true})
    const image = imagesDir ? currentLocalImage(imagesDir) : undefined
    if (image && !existsSync(join(image.rootfs, 'usr/sbin/slurmd'))) {
      return {name, ok: false, error: `image ${image.name} cannot boot: ${image.rootfs}/usr/sbin/slurmd is missing (citc rebuild-image makes a new one)`}
    }
    const gpu = gpuBoot(node, image !== undefined)
    if ('error' in gpu) return {name, ok: false, error: gpu.error}
    await sleep(msToNextSecond(Date.now()))
    const boot = image
      ? ['--mount', '--propagation', 'private', '--', '/bin/sh', '-c', BOOT_FROM_IMAGE, 'citc-node', name, image.rootfs, stateDir(name), o.sharedDir, o.slurmLogDir, o.confPath, ...gpu.args]
      : ['--', '/bin/sh', '-c', 'hostname "$1" && exec "$2" -D -b -N "$1" -f "$3"', 'citc-node', name, o.slurmd, o.confPath]
    if (image) mkdirSync(stateDir(name), {recursive: true})
    const argv = ['--fork', '--kill-child', '--uts', ...boot]
    const outLog = join(o.logDir, `${name}.out`)
    const pid = await spawnDetached(o.unshare, argv, {logFile: outLog})
    writeFileSync(pidFile(name), `${pid}\n`)
    if (image) writeFileSync(join(o.runDir, `${name}.image`), `${image.name}\n`)
    else rmSync(join(o.runDir, `${name}.image`), {force: true})
    log(`${name}: started slurmd ${image ? `from image ${image.name}` : "(this machine's, no image)"} (launcher pid ${pid})`)

    const deadline = Date.now() + o.startTimeoutS * 1000
    while (Date.now() < deadline) {
      if (!pidAlive(pid)) break
      const sp = slurmdPid(name)
      if (sp) {
        log(`${name}: slurmd is up (pid ${sp})`)
        return {name, ok: true}
      }
      await sleep(200)
    }
    const tail = lastLines(outLog, 3)
    const why = pidAlive(pid) ? `slurmd did not start within ${o.startTimeoutS} s` : 'slurmd exited at start'
    await stopOnce(node, log)
    return {name, ok: false, error: `${why}${tail ? `: ${tail}` : ''}`}
  }

  function stop(node: NodeSpec, log: (m: string) => void): Promise<NodeOutcome> {
    return withNodeLock(node.name, () => stopOnce(node, log)).catch((error: unknown) => ({
      name: node.name,
      ok: false,
      error: error instanceof Error ? error.message : String(error),
    }))
  }

  async function stopOnce(node: NodeSpec, log: (m: string) => void): Promise<NodeOutcome> {
    const {name} = node
    if (!SAFE_NAME.test(name)) return {name, ok: false, error: `refusing node name "${name}"`}
    // Only processes that still are this node's slurmd or launcher: pid files outlive processes.
    const pids = [slurmdPid(name), launcherPid(name)].filter((p): p is number => p !== undefined)
    for (const p of pids) signal(p, 'SIGTERM')
    const deadline = Date.now() + o.stopGraceS * 1000
    while (pids.some(pidAlive) && Date.now() < deadline) await sleep(200)
    // slurmd sometimes ignores SIGTERM while a job is torn down: make sure.
    for (const p of pids.filter(pidAlive)) {
      log(`${name}: pid ${p} ignored SIGTERM for ${o.stopGraceS} s, sending SIGKILL`)
      signal(p, 'SIGKILL')
    }
    const killDeadline = Date.now() + 5000
    while (pids.some(pidAlive) && Date.now() < killDeadline) await sleep(100)
    const left = pids.filter(pidAlive)
    if (left.length > 0) return {name, ok: false, error: `process ${left.join(', ')} would not die`}
    rmSync(pidFile(name), {force: true})
    rmSync(slurmdPidFile(name), {force: true})
    rmSync(join(o.runDir, `${name}.image`), {force: true})
    log(`${name}: stopped`)
    return {name, ok: true}
  }

  return {
    resume: (nodes, ctx) => Promise.all(nodes.map((n) => start(n, ctx.log))),
    suspend: (nodes, ctx) => Promise.all(nodes.map((n) => stop(n, ctx.log))),
    /** A node runs while its launcher does: id is the launcher's pid, launched when its pid file was written. */
    async list() {
      if (!existsSync(o.runDir)) return []
      const instances: CloudInstance[] = []
      for (const f of readdirSync(o.runDir).filter((x) => x.endsWith('.pid'))) {
        const name = f.slice(0, -4)
        const pid = launcherPid(name)
        if (pid !== undefined) instances.push({id: String(pid), name, state: 'running', launchedAt: mtimeMs(pidFile(name))})
      }
      return instances
    },
    /** Stop the nodes these launchers run — only while the pid still is that node's launcher. */
    terminate: (instances, ctx) =>
      Promise.all(
        instances.map((i) =>
          launcherPid(i.name) === Number(i.id)
            ? stop({name: i.name, shape: i.shape ?? 'unknown'}, ctx.log)
            : Promise.resolve({name: i.name, ok: true, instanceId: i.id}),
        ),
      ),
  }
}

function signal(pid: number, sig: NodeJS.Signals) {
  try {
    process.kill(pid, sig)
  } catch {
    // already gone
  }
}

function lastLines(file: string, n: number): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-n).join(' | ')
  } catch {
    return ''
  }
}
