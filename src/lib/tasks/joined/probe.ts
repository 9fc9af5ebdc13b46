// What citc learns about a machine before it joins, read-only: one shell script run over SSH prints
// `key=value` lines (probeScript), parsed here (parseProbe). Nothing on the machine is changed: the
// reachability probes open a TCP connection and close it.

/** `${` inside String.raw would be TypeScript's: the shell's `${VAR}` is written `${D}{VAR}`. */
const D = '$'

/** The script's arguments: the management node's address, then the ports to try from the machine. */
export const PROBE_SCRIPT = String.raw`
set -u
ctl="$1"; shift
kv() { printf '%s=%s\n' "$1" "$2"; }
. /etc/os-release 2>/dev/null
kv os_id "${D}{ID:-unknown}"
kv os_version "${D}{VERSION_ID:-unknown}"
kv os_name "${D}{PRETTY_NAME:-unknown}"
kv arch "$(uname -m)"
kv hostname "$(hostname -s 2>/dev/null || hostname)"
kv now "$(date +%s)"
kv uid "$(id -u)"
kv python3 "$(command -v python3 || true)"
kv slurmd_version "$(slurmd -V 2>/dev/null | awk '{print $NF}')"
kv slurmd_package "$(dpkg-query -W -f='${D}{Version}' slurmd 2>/dev/null || true)"
kv slurmd_hardware "$(slurmd -C 2>/dev/null | head -1)"
kv slurmd_running "$(pidof slurmd >/dev/null 2>&1 && echo 1 || echo 0)"
kv munged_running "$(pidof munged >/dev/null 2>&1 && echo 1 || echo 0)"
kv etc_slurm "$(ls -A /etc/slurm 2>/dev/null | grep -v '^citc' | tr '\n' ' ')"
kv joined_marker "$(cat /etc/citc-joined 2>/dev/null | tr '\n' ' ')"
kv apt_versions "$(apt-cache madison slurmd 2>/dev/null | awk -F'|' '{gsub(/ /,"",$2); print $2}' | tr '\n' ' ')"
kv sockets "$(lscpu 2>/dev/null | awk -F: '/^Socket\(s\)/{gsub(/ /,"",$2); print $2}')"
kv cores_per_socket "$(lscpu 2>/dev/null | awk -F: '/^Core\(s\) per socket/{gsub(/ /,"",$2); print $2}')"
kv threads_per_core "$(lscpu 2>/dev/null | awk -F: '/^Thread\(s\) per core/{gsub(/ /,"",$2); print $2}')"
kv cpus "$(nproc --all 2>/dev/null)"
kv mem_kib "$(awk '/^MemTotal:/{print $2}' /proc/meminfo)"
kv passwd "$(awk -F: '$3>=1000 && $3<65534 {printf "%s:%s ", $1, $3}' /etc/passwd)"
if [ "$(id -u)" != 0 ]; then kv sudo "$(sudo -n true 2>/dev/null && echo ok || echo no)"; fi
for port in "$@"; do
  if ! command -v bash >/dev/null 2>&1; then kv "reach_$port" unknown; continue; fi
  out=$(timeout 4 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$ctl" "$port" 2>&1); rc=$?
  if [ $rc = 0 ]; then kv "reach_$port" open
  elif [ $rc = 124 ]; then kv "reach_$port" timeout
  else case "$out" in *refused*) kv "reach_$port" refused ;; *) kv "reach_$port" "error: $(echo "$out" | tail -1)" ;; esac
  fi
done
kv probe_done 1
`

export type Reach = 'open' | 'refused' | 'timeout' | string

export interface MachineFacts {
  osId: string
  osVersion: string
  osName: string
  arch: string
  hostname: string
  /** The machine's clock, epoch seconds. */
  now: number
  uid: number
  python3: boolean
  /** Upstream version of an installed slurmd ("22.05.8"), if any. */
  slurmdVersion?: string
  /** Its Debian package version, if installed from a package. */
  slurmdPackage?: string
  /** `slurmd -C`'s first line, when slurmd is installed. */
  slurmdHardware?: string
  slurmdRunning: boolean
  mungedRunning: boolean
  /** Files in /etc/slurm (not citc's). */
  etcSlurm: string[]
  /** /etc/citc-joined: "<cluster> <node name>" when citc joined this machine before. */
  joinedMarker?: {cluster: string; name: string}
  /** slurmd package versions apt can install. */
  aptVersions: string[]
  hardware: {sockets: number; coresPerSocket: number; threadsPerCore: number; cpus: number; memMiB: number}
  /** Local accounts (uid ≥ 1000) from /etc/passwd: name → uid. */
  passwd: Map<string, number>
  /** Without root: whether `sudo -n` works. */
  sudo?: boolean
  /** Each port tried from the machine to the management node. */
  reach: Map<number, Reach>
}

/** The probe's output → facts. Throws when the probe did not run to its end. */
export function parseProbe(text: string): MachineFacts {
  const kv = new Map<string, string>()
  for (const line of text.split('\n')) {
    const i = line.indexOf('=')
    if (i > 0) kv.set(line.slice(0, i), line.slice(i + 1).trim())
  }
  if (kv.get('probe_done') !== '1') throw new Error(`the machine's probe stopped early; it printed:\n${text.trim().split('\n').slice(-5).join('\n')}`)
  const str = (k: string) => kv.get(k) ?? ''
  const int = (k: string) => {
    const n = Number.parseInt(str(k), 10)
    return Number.isFinite(n) ? n : 0
  }
  const words = (k: string) => str(k).split(/\s+/).filter(Boolean)
  const passwd = new Map<string, number>()
  for (const w of words('passwd')) {
    const [name, uid] = w.split(':')
    if (name && uid) passwd.set(name, Number(uid))
  }
  const reach = new Map<number, Reach>()
  for (const [k, v] of kv) if (k.startsWith('reach_')) reach.set(Number(k.slice(6)), v)
  const marker = words('joined_marker')
  const cpus = int('cpus')
  const sockets = int('sockets') || 1
  const threads = int('threads_per_core') || 1
  return {
    osId: str('os_id'),
    osVersion: str('os_version'),
    osName: str('os_name'),
    arch: str('arch'),
    hostname: str('hostname'),
    now: int('now'),
    uid: int('uid'),
    python3: str('python3') !== '',
    ...(str('slurmd_version') ? {slurmdVersion: str('slurmd_version')} : {}),
    ...(str('slurmd_package') ? {slurmdPackage: str('slurmd_package')} : {}),
    ...(str('slurmd_hardware') ? {slurmdHardware: str('slurmd_hardware')} : {}),
    slurmdRunning: str('slurmd_running') === '1',
    mungedRunning: str('munged_running') === '1',
    etcSlurm: words('etc_slurm'),
    ...(marker.length === 2 ? {joinedMarker: {cluster: marker[0], name: marker[1]}} : {}),
    aptVersions: words('apt_versions'),
    hardware: {
      sockets,
      coresPerSocket: int('cores_per_socket') || Math.max(1, Math.floor(cpus / sockets / threads)),
      threadsPerCore: threads,
      cpus,
      memMiB: Math.floor(int('mem_kib') / 1024),
    },
    passwd,
    ...(kv.has('sudo') ? {sudo: str('sudo') === 'ok'} : {}),
    reach,
  }
}
