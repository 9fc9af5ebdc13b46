// Getting a fresh cloud management node ready for citc's playbooks, over SSH: wait until SSH answers
// with the pinned host key (bounded backoff), let cloud-init finish, install Node.js >= 20, npm and
// ansible-core with apt, and install citc itself from the package citc packs here (`npm pack`), so
// the playbooks, templates and node programs on the node are exactly this version's.
import {createHash} from 'node:crypto'
import {mkdirSync, readFileSync, rmSync} from 'node:fs'
import {join} from 'node:path'

import {CitcError, HostKeyMismatchError, remoteError, type Hint} from '../errors.js'
import {run, which} from '../tools/exec.js'
import {connectSsh, type SshConnectOptions, type SshTransport} from '../transport/ssh/index.js'
import type {Transport} from '../transport/types.js'
import {sleep} from '../proc.js'

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

/** Wait for cloud-init's first boot to finish (it holds apt's lock and writes the host key); a no-op without cloud-init. */
export const CLOUD_INIT_WAIT = ['sh', '-c', 'if command -v cloud-init >/dev/null 2>&1; then cloud-init status --wait >/dev/null 2>&1 || true; fi; echo cloud-init-done']

/**
 * The script (run as root) that installs what citc needs on the management node: ansible-core from
 * the distribution, Node.js 20 from NodeSource (Ubuntu 24.04 and Debian 12 ship Node 18, older than
 * citc needs) with its npm. Prints "citc-tools: present" when nothing was missing, "citc-tools:
 * installed <packages>" otherwise.
 */
export const TOOLS_SCRIPT = [
  'set -e',
  'export DEBIAN_FRONTEND=noninteractive',
  'apt_get() { apt-get -o DPkg::Lock::Timeout=600 -y -qq "$@"; }',
  'need=""',
  'command -v ansible-playbook >/dev/null 2>&1 || need="ansible-core"',
  'node_ok=no',
  'if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 && [ "$(node -p \'process.versions.node.split(".")[0]\')" -ge 20 ]; then node_ok=yes; fi',
  'if [ -z "$need" ] && [ "$node_ok" = yes ]; then echo "citc-tools: present"; exit 0; fi',
  'apt_get update',
  'if [ "$node_ok" = no ]; then',
  '  apt_get install ca-certificates curl gnupg',
  '  install -d -m 0755 /etc/apt/keyrings',
  '  curl -fsSL https://deb.nodesource.com/gpgkey/nodesource-repo.gpg.key | gpg --dearmor --yes -o /etc/apt/keyrings/nodesource.gpg',
  '  echo "deb [signed-by=/etc/apt/keyrings/nodesource.gpg] https://deb.nodesource.com/node_20.x nodistro main" > /etc/apt/sources.list.d/nodesource.list',
  '  apt_get update',
  '  need="$need nodejs"',
  'fi',
  'apt_get install $need',
  'echo "citc-tools: installed$need"',
].join('\n')

/** Install the tools (as root); returns what was installed (empty: everything was there). */
export async function installTools(root: Transport, opts: {signal?: AbortSignal; onOutput?: (line: string) => void} = {}): Promise<string[]> {
  const r = await runSetupScript(root, ['sh', '-c', TOOLS_SCRIPT], {timeoutMs: 30 * 60_000, ...opts}, 'installing Node.js, npm and ansible-core on the management node', {
    hint: {fix: 'the node needs apt and internet access (deb.nodesource.com and the distribution mirrors); fix that', retry: 'then run `citc create --resume`'},
  })
  const m = /citc-tools: installed(.*)/.exec(r.stdout)
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : []
}

/** A setup script run as root, its output lines to onOutput; a failure says what failed and its last lines. */
async function runSetupScript(
  root: Transport,
  argv: string[],
  o: {timeoutMs: number; signal?: AbortSignal; onOutput?: (line: string) => void},
  what: string,
  failure: {hint: Hint},
) {
  const r = await root.run(argv, {
    timeoutMs: o.timeoutMs,
    signal: o.signal,
    onOutput: (chunk) => {
      for (const line of chunk.split('\n')) if (line.trim()) o.onOutput?.(line.trim())
    },
  })
  if (r.exitCode !== 0) {
    const last = (r.stderr.trim() || r.stdout.trim()).split('\n').slice(-3).join(' ')
    throw remoteError(`${what} failed (exit ${r.exitCode}): ${last}`, failure)
  }
  return r
}

export interface PackedCitc {
  file: string
  name: string
  version: string
  sha256: string
}

/** `npm pack` of the citc package that runs this (bin, dist, playbooks, templates, manifest). */
export async function packCitc(packageRoot: string, outDir: string, signal?: AbortSignal): Promise<PackedCitc> {
  const npm = await which('npm')
  if (!npm) throw remoteError('npm is not installed on this machine', {hint: 'citc packs itself with npm to install the same version on the management node: install npm (it comes with Node.js)'})
  rmSync(outDir, {recursive: true, force: true})
  mkdirSync(outDir, {recursive: true, mode: 0o700})
  const r = await run(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', outDir], {cwd: packageRoot, signal, timeoutMs: 5 * 60_000})
  if (r.exitCode !== 0) throw remoteError(`npm pack in ${packageRoot} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`)
  let info: Array<{filename: string; name: string; version: string}>
  try {
    info = JSON.parse(r.stdout) as typeof info
  } catch {
    throw remoteError(`npm pack printed no JSON: ${r.stdout.trim().split('\n')[0]}`)
  }
  const file = join(outDir, info[0].filename.replace(/^.*\//, ''))
  const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex')
  return {file, name: info[0].name, version: info[0].version, sha256}
}

/** Installed citc under a prefix: its bin/run.js. */
export const remoteCitcBin = (prefix: string) => `${prefix}/lib/node_modules/citc/bin/run.js`
const MARKER = '.citc-package.sha256'

/** Is exactly this package installed under prefix already? (its sha256 recorded by the last install) */
export async function installedPackage(root: Transport, prefix: string, sha256: string): Promise<boolean> {
  const r = await root.run(['sh', '-c', '[ -f "$1/lib/node_modules/citc/bin/run.js" ] && cat "$1/$2"', 'sh', prefix, MARKER], {timeoutMs: 60_000})
  return r.exitCode === 0 && r.stdout.trim() === sha256
}

/** `npm install -g --prefix` of an uploaded tarball (as root), then the marker. */
export async function installPackage(
  root: Transport,
  o: {prefix: string; tarball: string; sha256: string; signal?: AbortSignal; onOutput?: (line: string) => void},
): Promise<void> {
  const script = [
    'set -e',
    'prefix=$1; tgz=$2; sum=$3; marker=$4',
    'mkdir -p "$prefix"',
    'npm install -g --prefix "$prefix" --omit=dev --no-audit --no-fund --prefer-offline "$tgz"',
    'echo "$sum" > "$prefix/$marker"',
  ].join('\n')
  await runSetupScript(root, ['sh', '-c', script, 'sh', o.prefix, o.tarball, o.sha256, MARKER], {timeoutMs: 20 * 60_000, ...o}, 'installing citc on the management node (npm install)', {
    hint: {fix: "the node needs to reach the npm registry (registry.npmjs.org) for citc's dependencies", retry: 'then run `citc create --resume`'},
  })
}

/** The absolute path of node on the management node. */
export async function remoteNodeBin(root: Transport): Promise<string> {
  const r = await root.check(['sh', '-c', 'command -v node'], {timeoutMs: 60_000})
  return r.stdout.trim()
}
