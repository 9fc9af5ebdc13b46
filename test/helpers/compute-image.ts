// A cloud compute image's root filesystem on this machine, and a first boot of it (root only).
//
// The image: an overlay layer over the machines' Debian 12 root (machines.ts, cached and never written
// to) holding what a cloud image build puts there — the packages templates/packer/local/rootfs.sh
// includes (installed from the root's apt cache, no network), then playbooks/compute.yml run into it
// through citc's chroot connection with the cloud's variables, as Packer's ansible provisioner runs it
// on a cloud's build machine. About 40 s.
//
// A boot: a fresh overlay over that layer in namespaces of its own (mount, UTS, PID; the network is
// this machine's, so daemons inside reach a test's slurmctld on loopback), /proc, /dev, /sys and a
// tmpfs /run, the export a cloud's NFS server would serve bound at /srv/citc-shared-export (the
// image's fstab names it, type none, options bind), and a systemctl stand-in
// (systemctl-standin.py) — then the user-data run as cloud-init runs it: once, as root, by its #!
// line. What cannot run here is stood in for: systemd (the stand-in starts the units the image has),
// the metadata service (the script is handed over directly) and NFS (a bind mount). The namespace
// lives until stop(): killing the unshare process SIGKILLs the namespace's init (--kill-child), and
// with it every daemon started inside; the mounts go with the namespace.
import {type ChildProcess, spawn, spawnSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'

import {machineRootfs} from './machines.js'
import {waitFor} from './wait.js'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const PLAYBOOKS = join(ROOT, 'playbooks')
/** Where the image's fstab finds the shared filesystem's export (the tests' stand-in for NFS). */
export const EXPORT_IN_IMAGE = '/srv/citc-shared-export'
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** The packages the image build's mmdebstrap step includes (rootfs.sh's --include, pins dropped). */
export function imagePackages(): string[] {
  const script = readFileSync(join(ROOT, 'templates/packer/local/rootfs.sh'), 'utf8')
  const include = /--include="([^"]+)"/.exec(script)?.[1]
  if (!include) throw new Error('compute-image: no --include="…" in templates/packer/local/rootfs.sh')
  return include.split(',').map((p) => p.replace(/^\$\(pin (\S+)\)$/, '$1'))
}

function must(cmd: string, args: string[], what: string, timeoutMs: number): string {
  const r = spawnSync(cmd, args, {encoding: 'utf8', timeout: timeoutMs, killSignal: 'SIGKILL'})
  if (r.status !== 0) throw new Error(`${what}: ${cmd} exit ${r.status ?? r.signal}${r.error ? ` (${r.error.message})` : ''}\n${(r.stdout ?? '').slice(-3000)}\n${(r.stderr ?? '').slice(-3000)}`)
  return r.stdout
}

export interface ComputeImage {
  /** overlayfs lowerdir of a boot: the image's layer over the machines' root. */
  lower: string
  /** The image's own layer (what apt and compute.yml wrote). */
  layer: string
}

/**
 * Build the image layer under `work` with compute.yml's variables `vars` (a cloud's: provider,
 * shared_fs_*, mgmt_private_ip…); `mungeKey` is the cluster's key, handed to compute.yml as Packer
 * uploads it (munge_key_src).
 */
export async function buildComputeImage(work: string, vars: Record<string, unknown>, mungeKey: string): Promise<ComputeImage> {
  const base = await machineRootfs()
  const layer = join(work, 'image-layer')
  for (const d of [layer, join(work, 'image-work'), join(work, 'image-root'), join(layer, 'tmp')]) mkdirSync(d, {recursive: true})
  copyFileSync(mungeKey, join(layer, 'tmp', 'citc-munge.key'))
  const varsFile = join(work, 'compute-vars.json')
  writeFileSync(varsFile, JSON.stringify({...vars, munge_key_src: '/tmp/citc-munge.key'}), {mode: 0o600})
  const script = String.raw`set -eu
base=$1 layer=$2 wk=$3 root=$4 vars=$5 playbooks=$6 packages=$7
mount -t overlay overlay -o "lowerdir=$base,upperdir=$layer,workdir=$wk" "$root"
mount -t proc proc "$root/proc"
chroot "$root" env -i PATH=${PATH} DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-download --no-install-recommends $packages
umount "$root/proc"
ANSIBLE_CONFIG="$playbooks/ansible.cfg" ansible-playbook -i "$root," -c citc_chroot -e "@$vars" -e citc_image_build=true "$playbooks/compute.yml"
rm -f "$root/tmp/citc-munge.key"
`
  must(
    'unshare',
    ['--mount', '--propagation', 'private', 'bash', '-c', script, 'build', base, layer, join(work, 'image-work'), join(work, 'image-root'), varsFile, PLAYBOOKS, imagePackages().join(' ')],
    'building the compute image (apt from the cache, then compute.yml)',
    600_000,
  )
  return {lower: `${layer}:${base}`, layer}
}

export interface BootedNode {
  /** The boot's overlay upper layer: every file the boot wrote, readable from here. */
  upper: string
  /** A file as the node sees it after boot (its upper layer, else the image's). */
  read(path: string): string | undefined
  /** The user-data's exit status and output, and the node's host name after it. */
  result: {status: number; output: string; hostname: string}
  /** Calls the systemctl stand-in recorded, one a line. */
  systemctl(): string[]
  stop(): Promise<void>
}

const BOOT = String.raw`set -eu
root=$1 lower=$2 upper=$3 wk=$4 export=$5 standin=$6
mount -t overlay overlay -o "lowerdir=$lower,upperdir=$upper,workdir=$wk" "$root"
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /sys "$root/sys"
mount -t tmpfs tmpfs "$root/run"
mkdir -p "$root${EXPORT_IN_IMAGE}"
mount --bind "$export" "$root${EXPORT_IN_IMAGE}"
# A new instance's host name before cloud-init runs the user-data.
hostname ip-10-0-0-99
mkdir -p "$root/var/lib/cloud/instance/scripts"
install -m 0755 "$standin" "$root/usr/local/sbin/systemctl"
cat >"$root/var/lib/cloud/instance/scripts/part-001"
chmod 0700 "$root/var/lib/cloud/instance/scripts/part-001"
set +e
chroot "$root" env -i PATH=${PATH} HOME=/root /var/lib/cloud/instance/scripts/part-001 >"$root/var/log/citc-test-user-data.out" 2>&1
echo $? >"$root/var/log/citc-test-user-data.rc.tmp"
hostname >"$root/var/log/citc-test-user-data.hostname"
mv "$root/var/log/citc-test-user-data.rc.tmp" "$root/var/log/citc-test-user-data.rc"
exec sleep 3600
`

/** Boot the image under `work/<name>` with `userData`, the shared filesystem's export at `exportDir`. */
export async function bootNode(image: ComputeImage, work: string, name: string, o: {userData: string; exportDir: string; timeoutMs?: number}): Promise<BootedNode> {
  const dir = join(work, name)
  const upper = join(dir, 'upper')
  for (const d of [upper, join(dir, 'work'), join(dir, 'root')]) mkdirSync(d, {recursive: true})
  const standin = join(ROOT, 'test/helpers/systemctl-standin.py')
  const child: ChildProcess = spawn(
    'unshare',
    ['--mount', '--uts', '--pid', '--fork', '--kill-child', '--propagation', 'private', 'bash', '-c', BOOT, 'boot', join(dir, 'root'), image.lower, upper, join(dir, 'work'), o.exportDir, standin],
    {stdio: ['pipe', 'pipe', 'pipe']},
  )
  let stderr = ''
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()))
  child.stdout!.resume()
  child.stdin!.end(o.userData)
  let exited = false
  child.once('exit', () => (exited = true))
  const inUpper = (p: string) => join(upper, p)
  const read = (p: string) => {
    for (const f of [inUpper(p), join(image.layer, p)]) if (existsSync(f)) return readFileSync(f, 'utf8')
    return undefined
  }
  const stop = async () => {
    if (exited) return
    child.kill('SIGKILL')
    await waitFor(`the boot namespace of ${name} to end`, () => exited, 10_000)
  }
  try {
    await waitFor(`the user-data of ${name} to finish`, () => exited || existsSync(inUpper('var/log/citc-test-user-data.rc')), o.timeoutMs ?? 120_000, 200)
  } catch (e) {
    await stop()
    throw e
  }
  if (!existsSync(inUpper('var/log/citc-test-user-data.rc'))) throw new Error(`the boot of ${name} ended before the user-data ran: ${stderr}`)
  return {
    upper,
    read,
    result: {
      status: Number(read('var/log/citc-test-user-data.rc')!.trim()),
      output: read('var/log/citc-test-user-data.out') ?? '',
      hostname: (read('var/log/citc-test-user-data.hostname') ?? '').trim(),
    },
    systemctl: () => (read('var/log/systemctl-standin.log') ?? '').split('\n').filter(Boolean),
    stop,
  }
}
