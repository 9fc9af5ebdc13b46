// The collector of `citc doctor --security`: one bash script run on the management node, as root,
// through the cluster's Transport (this machine for a local cluster, else SSH), that prints what the
// checks judge as NUL-terminated records (security-facts.ts). The cluster's secrets are compared with
// file contents ON the node: the script reads /etc/citc/secrets/* into a 0600 file of a 0700
// temporary directory (bash builtins only: no value in any argv) and runs grep -F -f on it; only the
// names of matching files come back. The scan is bounded: -xdev, homes not entered, files over
// MAX_BYTES not read, at most MAX_FILES entries (the report says when it stopped there).
import type {Transport} from '../../transport/types.js'
import {parseIpAddrLine, parseSsLine, type SecurityFacts, type StatFact} from './security-facts.js'
import type {SecurityLayout} from './security-checks.js'

export const MAX_FILES = 20_000
export const MAX_BYTES = 1024 * 1024

// Arguments: etcCitc etcSlurm secretsDir mungeKey slurmdbdConf sharedDir sharedSlurmdbdConf homeDir exportsRoot maxFiles maxBytes.
// Records: "TAG\t…\0". U uid · S ss line · E ss's error · N host name · A `ip -o addr` line ·
// M/T secret file (lstat / stat through a link) · H homes · F scanned entry · CAP the cap was hit ·
// K secrets compared · C a readable file holding a secret · XF/XC an exports file and its text.
// Written with @{ for bash's parameter expansions (a template literal would take them as its own).
// Stat records are find's "%y\t%m\t%u\t%g\t%s\t%l\t%p" (the path last: it may hold any byte but NUL).
export const COLLECTOR_SCRIPT = String.raw`
set -u
etc_citc=$1 etc_slurm=$2 secrets=$3 munge_key=$4 dbd=$5 shared=$6 shared_dbd=$7 homes=$8 exports_root=$9
max=@{10} maxbytes=@{11}
umask 077
T=$(mktemp -d) || exit 3
trap 'rm -rf "$T"' EXIT
fmt='%y\t%m\t%u\t%g\t%s\t%l\t%p\0'
printf 'U\t%s\0' "$(id -u)"

if command -v ss >/dev/null 2>&1; then
  ss -H -ltnup >"$T/ss" 2>"$T/ss.err" || printf 'E\tss -H -ltnup failed: %s\0' "$(head -c 300 "$T/ss.err")"
  while IFS= read -r l; do printf 'S\t%s\0' "$l"; done <"$T/ss"
else
  printf 'E\tss is not installed (Debian and Ubuntu: package iproute2)\0'
fi
# Plain LDAP the ldap role kept for nodes from before the directory went over TLS.
if [ -f "$etc_citc/slapd-plain-uris" ]; then
  while IFS= read -r l; do [ -n "$l" ] && printf 'P\t%s\0' "$l"; done <"$etc_citc/slapd-plain-uris"
fi
# citc's local guard (local clusters): Slurm's daemons listen on every interface, the table keeps them to lo.
if command -v nft >/dev/null 2>&1; then
  nft list table inet citc_local_guard 2>/dev/null | while IFS= read -r l; do printf 'G\t%s\0' "$l"; done
fi
printf 'N\t%s\0' "$(hostname 2>/dev/null)" "$(hostname -f 2>/dev/null)"
ip -o addr show 2>/dev/null | while IFS= read -r l; do printf 'A\t%s\0' "$l"; done

one() { # lstat of $1 (and stat through it when it is a link)
  [ -e "$1" ] || [ -L "$1" ] || return 0
  find -P "$1" -maxdepth 0 -printf "M\t$fmt"
  if [ -L "$1" ]; then find -L "$1" -maxdepth 0 -printf "T\t$fmt" 2>/dev/null; fi
}
one "$secrets"
if [ -d "$secrets" ] && [ ! -L "$secrets" ]; then find -P "$secrets" -mindepth 1 -maxdepth 1 -printf "M\t$fmt" | head -z -n "$max"; fi
one "$munge_key"; one "$dbd"; one "$shared_dbd"
if [ -d "$homes" ]; then find -P "$homes" -maxdepth 1 -printf "H\t$fmt" | head -z -n "$max"; fi

# The secrets to look for: one-line values of at least 12 characters (passwords), not keys or certificates.
: >"$T/pat"
k=0
if [ -d "$secrets" ]; then
  for f in "$secrets"/*; do
    [ -f "$f" ] && [ ! -L "$f" ] || continue
    case $f in *.key | *.pem | *.crt | *.csr | *.pub) continue ;; esac
    [ "$(stat -c %s -- "$f")" -le 4096 ] || continue
    v=$(<"$f")
    case $v in *$'\n'*) continue ;; esac
    [ "@{#v}" -ge 12 ] || continue
    printf '%s\n' "$v" >>"$T/pat"
    k=$((k + 1))
  done
  v=
fi
printf 'K\t%s\0' "$k"

# The scan follows a root that is a link (/etc/slurm to the shared copy), nothing below it (-H).
roots=()
for d in "$etc_citc" "$etc_slurm" "$shared"; do [ -d "$d" ] && roots+=("$d"); done
: >"$T/scan"
if [ @{#roots[@]} -gt 0 ]; then
  find -H "@{roots[@]}" -xdev -path "$homes" -prune -o \( -type f -o -type d \) -printf "$fmt" 2>/dev/null | head -z -n $((max + 1)) >"$T/scan"
fi
n=0
: >"$T/cand"
while IFS= read -r -d '' r; do
  n=$((n + 1))
  if [ "$n" -gt "$max" ]; then printf 'CAP\t%s\0' "$max"; break; fi
  printf 'F\t%s\0' "$r"
  y=@{r%%$'\t'*}; t=@{r#*$'\t'}; m=@{t%%$'\t'*}
  t=@{t#*$'\t'}; t=@{t#*$'\t'}; t=@{t#*$'\t'}; s=@{t%%$'\t'*}; t=@{t#*$'\t'}; p=@{t#*$'\t'}
  if [ "$y" = f ] && [ $((8#$m & 8#044)) -ne 0 ] && [ "$s" -le "$maxbytes" ]; then printf '%s\0' "$p" >>"$T/cand"; fi
done <"$T/scan"
if [ "$k" -gt 0 ] && [ -s "$T/cand" ]; then
  xargs -0 -r grep -F -l -Z -s -f "$T/pat" -- <"$T/cand" | while IFS= read -r -d '' p; do printf 'C\t%s\0' "$p"; done
fi

for f in "$exports_root/etc/exports" "$exports_root/etc/exports.d"/*.exports; do
  [ -f "$f" ] || continue
  printf 'XF\t%s\0' "$f"
  printf 'XC\t'; head -c "$maxbytes" -- "$f" | tr -d '\0'; printf '\0'
done
exit 0
`.replaceAll('@{', '${')

/** A stat record (find's "%y\t%m\t%u\t%g\t%s\t%l\t%p"). */
export function parseStat(rec: string): StatFact | undefined {
  const parts = rec.split('\t')
  if (parts.length < 7) return undefined
  const [type, mode, owner, group, size, target] = parts
  return {path: parts.slice(6).join('\t'), type, mode: Number.parseInt(mode, 8), owner, group, size: Number(size), ...(type === 'l' ? {target} : {})}
}

/** The collector's output as facts (unknown records are ignored: a newer script may add some). */
export function parseCollectorOutput(out: string, cap: number): SecurityFacts {
  const facts: SecurityFacts = {uid: -1, sockets: [], addresses: [], hostnames: [], secretFiles: [], linkTargets: new Map(), homes: [], scan: [], scanned: 0, capped: false, cap, holdingSecret: new Set(), secretsCompared: 0, exports: [], plainLdap: []}
  let exportsFile: string | undefined
  for (const rec of out.split('\0')) {
    const tab = rec.indexOf('\t')
    if (tab < 0) continue
    const tag = rec.slice(0, tab)
    const body = rec.slice(tab + 1)
    const stat = () => parseStat(body)
    switch (tag) {
      case 'U':
        facts.uid = Number(body)
        break
      case 'S': {
        const s = parseSsLine(body)
        if (s) facts.sockets.push(s)
        break
      }
      case 'E':
        facts.socketsError = body.trim()
        break
      case 'P':
        if (body.trim()) facts.plainLdap.push(body.trim())
        break
      case 'G':
        ;(facts.guard ??= []).push(body)
        break
      case 'N':
        if (body.trim() && !facts.hostnames.includes(body.trim())) facts.hostnames.push(body.trim())
        break
      case 'A': {
        const a = parseIpAddrLine(body)
        if (a) facts.addresses.push(a)
        break
      }
      case 'M':
      case 'T':
      case 'H':
      case 'F': {
        const st = stat()
        if (!st) break
        if (tag === 'M') facts.secretFiles.push(st)
        else if (tag === 'T') facts.linkTargets.set(st.path, st)
        else if (tag === 'H') facts.homes.push(st)
        else {
          facts.scan.push(st)
          facts.scanned++
        }
        break
      }
      case 'CAP':
        facts.capped = true
        break
      case 'K':
        facts.secretsCompared = Number(body)
        break
      case 'C':
        facts.holdingSecret.add(body)
        break
      case 'XF':
        exportsFile = body
        break
      case 'XC':
        if (exportsFile !== undefined) facts.exports.push({file: exportsFile, text: body})
        exportsFile = undefined
        break
    }
  }
  return facts
}

/** Run the collector on the node (as whoever `t` is: root for the report to be whole). */
export async function collectSecurityFacts(t: Transport, layout: SecurityLayout, o: {exportsRoot: string; maxFiles?: number; maxBytes?: number; signal?: AbortSignal}): Promise<SecurityFacts> {
  const max = o.maxFiles ?? MAX_FILES
  const args = [layout.etcCitc, layout.etcSlurm, layout.secretsDir, layout.mungeKey, layout.slurmdbdConf, layout.sharedDir, layout.sharedSlurmdbdConf, layout.homeDir, o.exportsRoot, String(max), String(o.maxBytes ?? MAX_BYTES)]
  const r = await t.check(['bash', '-c', COLLECTOR_SCRIPT, 'citc-doctor-security', ...args], {timeoutMs: 5 * 60_000, ...(o.signal ? {signal: o.signal} : {})})
  const facts = parseCollectorOutput(r.stdout, max)
  if (facts.uid < 0) throw new Error(`the security collector printed nothing on ${t.description}${r.stderr ? `: ${r.stderr.trim().split('\n')[0]}` : ''}`)
  return facts
}
