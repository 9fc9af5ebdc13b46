// Getting a fresh cloud management node ready for citc's playbooks, over SSH: wait until SSH answers
// with the pinned host key (bounded backoff), let cloud-init finish, install Node.js >= 20 and
// ansible-core with apt, and install citc itself from the bundle built here (tools/bundle.ts: the
// package with its production node_modules), so the playbooks, templates and node programs on the
// node are exactly this version's and the install needs no npm registry. Every step that can wait on
// the network has a bound, and a timeout says what it was waiting for.
import {CitcError, HostKeyMismatchError, remoteError, type Hint} from '../../errors.js'
import {PROVIDER_MODULES} from '../../providers/registry.js'
import {connectSsh, type SshConnectOptions, type SshTransport} from '../../transport/ssh/index.js'
import type {Transport} from '../../transport/types.js'
import {sleep} from '../../proc.js'

/** Where citc is installed on a management node (its own npm prefix, out of the distribution's way). */
export const DEFAULT_REMOTE_PREFIX = '/opt/citc'

export interface WaitForSshOptions extends Omit<SshConnectOptions, 'readyTimeoutMs' | 'signal'> {
  timeoutMs: number
  signal?: AbortSignal
  /** Each failed attempt, for the task output. */
  report?: (message: string) => void
  /** First pause between attempts (doubles up to maxDelayMs). */
  initialDelayMs?: number
  maxDelayMs?: number
}

/** A host key that does not match is never retried: it will not get better, and may be an attack. */
function isHostKeyMismatch(error: unknown): boolean {
  return error instanceof HostKeyMismatchError
}

/**
 * Connect as soon as the machine answers: retries refused connections, timeouts and failed logins
 * (cloud-init may not have installed the admin key yet) with exponential backoff until timeoutMs.
 * A changed host key fails at once. Gives up with one line saying what the last attempt saw.
 */
export async function waitForSsh(o: WaitForSshOptions): Promise<SshTransport> {
  const started = Date.now()
  const deadline = started + o.timeoutMs
  let delay = o.initialDelayMs ?? 1000
  const maxDelay = o.maxDelayMs ?? 15_000
  let attempts = 0
  for (;;) {
    if (o.signal?.aborted) throw new CitcError('cancelled', `cancelled while waiting for SSH on ${o.host}:${o.port}`)
    attempts++
    try {
      return await connectSsh({...o, readyTimeoutMs: Math.max(2000, Math.min(20_000, deadline - Date.now())), signal: o.signal})
    } catch (error) {
      if (error instanceof CitcError && error.kind === 'cancelled') throw error
      if (isHostKeyMismatch(error)) {
        const e = error as CitcError
        throw new CitcError('remote', e.message, {
          hint: `the management node does not present the host key citc generated and handed over by cloud-init; if this is a new machine, check its console log (cloud-init). ${e.hint ?? ''}`.trim(),
          details: e.details,
        })
      }
      if (error instanceof CitcError && error.kind === 'invalidInput') throw error
      const why = error instanceof Error ? error.message.split('\n')[0] : String(error)
      if (Date.now() + delay >= deadline) {
        const waited = Math.round((Date.now() - started) / 1000)
        throw remoteError(`SSH on the management node ${o.user}@${o.host}:${o.port} never came up: ${attempts} attempt(s) in ${waited} s, the last one: ${why}`, {
          hint:
            'check in the cloud console that the instance is running and read its console log (cloud-init), and that port 22 is open to this address (--ssh-cidr); ' +
            'a longer --ssh-timeout waits more',
          details: {attempts, waitedSeconds: waited, lastError: why},
        })
      }
      o.report?.(`attempt ${attempts}: ${why}; retrying in ${Math.round(delay / 1000)} s`)
      await sleep(delay, o.signal)
      delay = Math.min(delay * 2, maxDelay)
    }
  }
}

/** Give up on cloud-init's first boot after this long (it holds apt's lock and writes the host key). */
export const CLOUD_INIT_TIMEOUT_MS = 15 * 60_000
/** Wait for cloud-init's first boot to finish; a no-op without cloud-init. Its own failure is not ours (its log says). */
export const CLOUD_INIT_WAIT = ['sh', '-c', 'if command -v cloud-init >/dev/null 2>&1; then cloud-init status --wait >/dev/null 2>&1 || true; fi; echo cloud-init-done']

/** Wait for cloud-init (as root), bounded: a node whose first boot never ends fails with that, not a test timeout. */
export async function waitForCloudInit(root: Transport, o: {signal?: AbortSignal; timeoutMs?: number} = {}): Promise<void> {
  await runSetupScript(root, CLOUD_INIT_WAIT, {timeoutMs: o.timeoutMs ?? CLOUD_INIT_TIMEOUT_MS, signal: o.signal}, {
    what: "waiting for cloud-init's first boot on the management node",
    waitingFor: "cloud-init's first boot (`cloud-init status --wait`)",
    hint: {fix: "read cloud-init's log on the node (`citc ssh` then /var/log/cloud-init-output.log)", retry: 'then run `citc create --resume`'},
  })
}

/** Bound on the whole tools script: apt updates, NodeSource's key and packages. */
export const TOOLS_TIMEOUT_MS = 20 * 60_000

/**
 * Is there a `packer` package in the distribution's apt lists? (sh, after `apt-get update`.) Debian 12
 * has one (1.6.6, every plugin built in: what the local provider and the tests run); Ubuntu 24.04's
 * lists have none, and `apt-cache policy` then prints nothing or "Candidate: (none)".
 */
export const PACKER_IN_DISTRIBUTION = 'packer_in_distribution() { apt-cache policy packer 2>/dev/null | grep -Eq "^ *Candidate: [0-9]"; }'

/**
 * The Packer plugins cloud.pkr.hcl's sources (one per cloud: its module's packerPlugin) and its
 * provisioner need, when Packer does not bundle them (>= 1.10).
 */
export const PACKER_PLUGINS = [...PROVIDER_MODULES.flatMap((m) => (m.cloud ? [m.cloud.packerPlugin] : [])), 'ansible']

/**
 * The script (run as root) that installs what citc needs on the management node: ansible-core from
 * the distribution, Node.js 24 (the active LTS line) from NodeSource when the node has no Node >= 20
 * (Ubuntu 24.04 and Debian 12 ship Node 18, older than citc needs; 20 reached its end of life in April
 * 2026), and Packer, which builds the compute-node images there (create's first image,
 * `citc rebuild-image`). npm is not needed: citc arrives with its dependencies.
 *
 * Packer: the distribution's when it has one (Debian 12: 1.6.6, the version cloud.pkr.hcl is written
 * for and `packer validate`d against in the tests). Ubuntu 24.04 has none, so it comes from HashiCorp's
 * apt repository (the node reaches it as it reaches NodeSource), and as a Packer from there (>= 1.10)
 * bundles no plugins, the ones the template uses are installed with `packer plugins install` into
 * root's plugin directory, where the builds (run as root with HOME=/root) find them without
 * required_plugins (which 1.6.6 would refuse). Those Packer versions are BUSL-licensed: fine for
 * building one's own images, and the user's node fetches it, citc does not ship it.
 *
 * Every network wait is bounded (apt's per-connection timeouts and retries, curl's --max-time,
 * `timeout` on the plugin downloads) and the last "citc-tools: step" line says which one a timeout
 * stopped. Prints "citc-tools: present" when nothing was missing, "citc-tools: installed <packages>"
 * otherwise.
 */
export const TOOLS_SCRIPT = [
  'set -e',
  'export DEBIAN_FRONTEND=noninteractive',
  'apt_get() { apt-get -o DPkg::Lock::Timeout=600 -o Acquire::Retries=3 -o Acquire::http::Timeout=30 -o Acquire::https::Timeout=30 -y -qq "$@"; }',
  'need=""',
  'command -v ansible-playbook >/dev/null 2>&1 || need="ansible-core"',
  'node_ok=no',
  'if command -v node >/dev/null 2>&1 && [ "$(node -p \'process.versions.node.split(".")[0]\')" -ge 20 ]; then node_ok=yes; fi',
  'packer_ok=yes',
  'command -v packer >/dev/null 2>&1 || packer_ok=no',
  'if [ -z "$need" ] && [ "$node_ok" = yes ] && [ "$packer_ok" = yes ]; then echo "citc-tools: present"; exit 0; fi',
  PACKER_IN_DISTRIBUTION,
  'echo "citc-tools: step apt-get update (the distribution\'s mirrors)"',
  'apt_get update',
  'packer_plugins=no',
  'if [ "$packer_ok" = no ]; then',
  '  if packer_in_distribution; then',
  '    need="$need packer"',
  '  else',
  '    echo "citc-tools: step HashiCorp\'s signing key (apt.releases.hashicorp.com)"',
  '    apt_get install ca-certificates curl gnupg',
  '    install -d -m 0755 /etc/apt/keyrings',
  '    curl -fsSL --connect-timeout 30 --max-time 120 --retry 3 https://apt.releases.hashicorp.com/gpg | gpg --dearmor --yes -o /etc/apt/keyrings/hashicorp.gpg',
  '    echo "deb [signed-by=/etc/apt/keyrings/hashicorp.gpg] https://apt.releases.hashicorp.com $(. /etc/os-release && echo "$VERSION_CODENAME") main" > /etc/apt/sources.list.d/hashicorp.list',
  '    echo "citc-tools: step apt-get update (apt.releases.hashicorp.com)"',
  '    apt_get update',
  '    need="$need packer"',
  '    packer_plugins=yes',
  '  fi',
  'fi',
  'if [ "$node_ok" = no ]; then',
  '  echo "citc-tools: step NodeSource\'s signing key (deb.nodesource.com)"',
  '  apt_get install ca-certificates curl gnupg',
  '  install -d -m 0755 /etc/apt/keyrings',
  '  curl -fsSL --connect-timeout 30 --max-time 120 --retry 3 https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key | gpg --dearmor --yes -o /etc/apt/keyrings/nodesource.gpg',
  '  echo "deb [signed-by=/etc/apt/keyrings/nodesource.gpg] https://deb.nodesource.com/node_24.x nodistro main" > /etc/apt/sources.list.d/nodesource.list',
  '  echo "citc-tools: step apt-get update (deb.nodesource.com)"',
  '  apt_get update',
  '  need="$need nodejs"',
  'fi',
  'echo "citc-tools: step apt-get install$need"',
  'apt_get install $need',
  'if [ "$packer_plugins" = yes ]; then',
  `  for p in ${PACKER_PLUGINS.join(' ')}; do`,
  '    echo "citc-tools: step packer plugins install github.com/hashicorp/$p (github.com)"',
  '    HOME=/root timeout 300 packer plugins install "github.com/hashicorp/$p"',
  '  done',
  'fi',
  'echo "citc-tools: installed$need"',
].join('\n')

/** Install the tools (as root); returns what was installed (empty: everything was there). */
export async function installTools(root: Transport, opts: {signal?: AbortSignal; onOutput?: (line: string) => void; timeoutMs?: number} = {}): Promise<string[]> {
  let step = 'apt-get'
  const r = await runSetupScript(
    root,
    ['sh', '-c', TOOLS_SCRIPT],
    {
      timeoutMs: opts.timeoutMs ?? TOOLS_TIMEOUT_MS,
      signal: opts.signal,
      onOutput: (line) => {
        const m = /^citc-tools: step (.*)/.exec(line)
        if (m) step = m[1]
        opts.onOutput?.(line)
      },
    },
    {
      what: 'installing Node.js, ansible-core and Packer on the management node',
      waitingFor: () => step,
      hint: {
        fix: 'the node needs apt and internet access (the distribution mirrors, deb.nodesource.com, and on Ubuntu apt.releases.hashicorp.com and github.com for Packer); fix that',
        retry: 'then run `citc create --resume`',
      },
    },
  )
  const m = /citc-tools: installed(.*)/.exec(r.stdout)
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : []
}

/**
 * A setup script run as root, its output lines to onOutput. A failure says what failed and its last
 * lines; a timeout says what it was waiting for when time ran out.
 */
async function runSetupScript(
  root: Transport,
  argv: string[],
  o: {timeoutMs: number; signal?: AbortSignal; onOutput?: (line: string) => void},
  about: {what: string; waitingFor: string | (() => string); hint: Hint},
) {
  let r
  try {
    r = await root.run(argv, {
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      onOutput: (chunk) => {
        for (const line of chunk.split('\n')) if (line.trim()) o.onOutput?.(line.trim())
      },
    })
  } catch (error) {
    if (error instanceof CitcError && error.details?.timedOut === true) {
      const waitingFor = typeof about.waitingFor === 'string' ? about.waitingFor : about.waitingFor()
      throw remoteError(`${about.what}: gave up after ${Math.round(o.timeoutMs / 1000)} s waiting for ${waitingFor}`, {
        hint: about.hint,
        details: {timedOut: true, waitingFor, timeoutSeconds: Math.round(o.timeoutMs / 1000)},
      })
    }
    throw error
  }
  if (r.exitCode !== 0) {
    const last = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-3).join(' ')
    throw remoteError(`${about.what} failed (exit ${r.exitCode}): ${last}`, {hint: about.hint})
  }
  return r
}

/** Installed citc under a prefix: its bin/run.js (where `npm install -g --prefix` would put it). */
export const remoteCitcBin = (prefix: string) => `${prefix}/lib/node_modules/citc/bin/run.js`
const MARKER = '.citc-package.sha256'

/** Is exactly this bundle installed under prefix already? (its sha256 recorded by the last install) */
export async function installedPackage(root: Transport, prefix: string, sha256: string): Promise<boolean> {
  const r = await root.run(['sh', '-c', '[ -f "$1/lib/node_modules/citc/bin/run.js" ] && cat "$1/$2"', 'sh', prefix, MARKER], {timeoutMs: 60_000})
  return r.exitCode === 0 && r.stdout.trim() === sha256
}

/** Bound on unpacking and checking citc on the node: local disk work only. */
export const INSTALL_TIMEOUT_MS = 5 * 60_000

/**
 * The install (as root), with no network at all: check the uploaded bundle's sha256, unpack it next
 * to the old install, check that it runs (`citc --version`), swap, link bin/citc, record the sha256.
 * A bundle that does not run leaves the old install in place.
 */
export const INSTALL_SCRIPT = [
  'set -e',
  'prefix=$1; tgz=$2; sum=$3; marker=$4',
  'echo "$sum  $tgz" | sha256sum -c --status || { echo "the uploaded $tgz is not the bundle citc built (sha256 differs)" >&2; exit 1; }',
  'dest="$prefix/lib/node_modules/citc"',
  'new="$dest.new"',
  'rm -rf "$new" "$dest.old"',
  'mkdir -p "$new" "$prefix/bin"',
  'tar -xzf "$tgz" -C "$new" --strip-components=1 --no-same-owner',
  // The new one must run before the old one goes: a live cluster's node programs exec it.
  '"$(command -v node)" "$new/bin/run.js" --version',
  'if [ -e "$dest" ]; then mv "$dest" "$dest.old"; fi',
  'mv "$new" "$dest" || { if [ -e "$dest.old" ]; then mv "$dest.old" "$dest"; fi; exit 1; }',
  'rm -rf "$dest.old"',
  'ln -sfn ../lib/node_modules/citc/bin/run.js "$prefix/bin/citc"',
  'echo "$sum" > "$prefix/$marker"',
].join('\n')

/** Unpack an uploaded bundle (bundleCitc) under prefix (as root), then the marker. */
export async function installPackage(
  root: Transport,
  o: {prefix: string; tarball: string; sha256: string; signal?: AbortSignal; onOutput?: (line: string) => void; timeoutMs?: number},
): Promise<void> {
  await runSetupScript(root, ['sh', '-c', INSTALL_SCRIPT, 'sh', o.prefix, o.tarball, o.sha256, MARKER], {...o, timeoutMs: o.timeoutMs ?? INSTALL_TIMEOUT_MS}, {
    what: 'installing citc on the management node (unpacking its bundle)',
    waitingFor: `tar and \`citc --version\` under ${o.prefix}`,
    hint: {fix: 'the node needs tar, sha256sum, Node.js >= 20 and room under the prefix', retry: 'then run `citc create --resume`'},
  })
}

/** The absolute path of node on the management node. */
export async function remoteNodeBin(root: Transport): Promise<string> {
  const r = await root.check(['sh', '-c', 'command -v node'], {timeoutMs: 60_000})
  return r.stdout.trim()
}
