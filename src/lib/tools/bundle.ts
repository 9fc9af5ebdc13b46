// citc with its production dependencies, as one .tar.gz built here: what citc installs on a cloud's
// management node. The node then only unpacks it: no npm, no registry, no proxy or CA settings to get
// right (with `npm install -g --prefix`, npm reads <prefix>/etc/npmrc, not the machine's npmrc, and
// with a cold cache it asks the registry for every dependency even with --prefer-offline).
//
// What goes in, all read from this machine, with no network:
//   package/                 the files `npm pack` would publish (its own list: `npm pack --dry-run`)
//   package/node_modules/…   every package reachable through dependencies, optionalDependencies and
//                            installed peerDependencies, copied from where Node resolves it here
//                            (./node_modules after `npm ci`, or a global install's own node_modules)
// Native parts come as built here (ssh2's crypto binding, cpu-features): where the node's
// architecture or Node.js differs, loading them fails and ssh2 falls back to JavaScript, as it does
// when they were never built.
import {createHash} from 'node:crypto'
import {existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync} from 'node:fs'
import {dirname, join, relative, sep} from 'node:path'

import {remoteError} from '../errors.js'
import {run, which} from './exec.js'
import {writeTarGz, type TarEntry} from './tar.js'

export interface CitcBundle {
  file: string
  name: string
  version: string
  sha256: string
  bytes: number
  /** Packages under node_modules. */
  dependencies: number
}

interface PackageJson {
  name: string
  version: string
  dependencies?: Record<string, string>
  optionalDependencies?: Record<string, string>
  peerDependencies?: Record<string, string>
}

const readPackageJson = (dir: string) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson

/** Where Node finds package `name` required from `from` (its node_modules, then each parent's), up to root. */
function resolvePackage(name: string, from: string, root: string): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    if (!dir.endsWith(`${sep}node_modules`)) {
      const candidate = join(dir, 'node_modules', name)
      if (existsSync(join(candidate, 'package.json'))) return candidate
    }
    if (dir === root || dirname(dir) === dir) return undefined
  }
}

/**
 * The production dependency tree of the package at root, as directories under root/node_modules
 * (sorted). A missing required dependency is an error naming it; missing optional ones are skipped.
 */
export function productionPackages(root: string): string[] {
  const found = new Set<string>()
  const queue = [root]
  while (queue.length > 0) {
    const dir = queue.shift()!
    const pkg = readPackageJson(dir)
    const wanted: Array<[string, boolean]> = [
      ...Object.keys(pkg.dependencies ?? {}).map((n): [string, boolean] => [n, true]),
      ...Object.keys(pkg.optionalDependencies ?? {}).map((n): [string, boolean] => [n, false]),
      ...Object.keys(pkg.peerDependencies ?? {}).map((n): [string, boolean] => [n, false]),
    ]
    for (const [name, required] of wanted) {
      const at = resolvePackage(name, dir, root)
      if (!at) {
        if (required) {
          throw remoteError(`cannot bundle citc: ${pkg.name} needs ${name}, which is not installed in ${root}`, {
            hint: `install citc's dependencies first (\`npm ci\` in ${root})`,
          })
        }
        continue
      }
      if (found.has(at)) continue
      if (relative(root, at).startsWith('..')) throw remoteError(`cannot bundle citc: its dependency ${name} lives outside ${root} (${at})`)
      found.add(at)
      queue.push(at)
    }
  }
  return [...found].sort()
}

/** A package's files as tar entries under `into` (its own node_modules left out: those packages come on their own). */
function packageEntries(dir: string, into: string, entries: TarEntry[]): void {
  entries.push({type: 'dir', path: into})
  for (const name of readdirSync(dir).sort()) {
    if (name === 'node_modules') continue
    const source = join(dir, name)
    const path = `${into}/${name}`
    const st = lstatSync(source)
    if (st.isSymbolicLink()) entries.push({type: 'symlink', path, target: readlinkSync(source)})
    else if (st.isDirectory()) packageEntries(source, path, entries)
    else if (st.isFile()) entries.push({type: 'file', path, source, executable: (st.mode & 0o111) !== 0})
  }
}

/** The files `npm pack` would publish from root (offline: npm only reads package.json and the tree). */
async function publishedFiles(root: string, signal?: AbortSignal): Promise<string[]> {
  const npm = await which('npm')
  if (!npm) throw remoteError('npm is not installed on this machine', {hint: 'citc asks npm which of its files it publishes: install npm (it comes with Node.js)'})
  const r = await run(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: root, signal, timeoutMs: 2 * 60_000})
  if (r.exitCode !== 0) throw remoteError(`npm pack --dry-run in ${root} failed: ${r.stderr.trim().split('\n').slice(-2).join(' ')}`)
  try {
    const info = JSON.parse(r.stdout) as Array<{files: Array<{path: string}>}>
    return info[0].files.map((f) => f.path)
  } catch {
    throw remoteError(`npm pack --dry-run printed no JSON: ${r.stdout.trim().split('\n')[0]}`)
  }
}

/** Every directory above each path (tar entries for them, so the archive unpacks with sane modes). */
function parentDirs(paths: string[]): TarEntry[] {
  const dirs = new Set<string>()
  for (const p of paths) for (let d = dirname(p); d !== '.' && d !== '/'; d = dirname(d)) dirs.add(d)
  return [...dirs].map((path) => ({type: 'dir', path}))
}

/** What decides the bundle's bytes: every entry's path, kind, size, mtime and mode. */
function fingerprint(entries: TarEntry[]): string {
  const h = createHash('sha256')
  for (const e of entries) {
    if (e.type === 'file') {
      const st = lstatSync(e.source)
      h.update(`f ${e.path} ${st.size} ${st.mtimeMs} ${e.executable}\n`)
    } else h.update(`${e.type} ${e.path} ${e.type === 'symlink' ? e.target : ''}\n`)
  }
  return h.digest('hex')
}

/**
 * Build (or reuse, when nothing it holds changed) `<outDir>/<name>-<version>-bundle.tgz`. The same
 * files give the same bytes, so its sha256 tells whether a node has it already.
 */
export async function bundleCitc(root: string, outDir: string, signal?: AbortSignal): Promise<CitcBundle> {
  const pkg = readPackageJson(root)
  const own = await publishedFiles(root, signal)
  const entries: TarEntry[] = []
  for (const path of own) {
    const source = join(root, path)
    const st = lstatSync(source)
    entries.push({type: 'file', path: `package/${path}`, source, executable: (st.mode & 0o111) !== 0})
  }
  const deps = productionPackages(root)
  for (const dir of deps) packageEntries(dir, `package/${relative(root, dir).split(sep).join('/')}`, entries)
  // Unique by path (a package directory is also the parent of its files): the first entry wins.
  const all = [...entries, ...parentDirs(entries.map((e) => e.path))]
  const unique = [...new Map(all.map((e) => [e.path, e])).values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))

  const file = join(outDir, `${pkg.name}-${pkg.version}-bundle.tgz`)
  const stamp = join(outDir, 'bundle.json')
  const print = fingerprint(unique)
  if (existsSync(file) && existsSync(stamp)) {
    const last = JSON.parse(readFileSync(stamp, 'utf8')) as {fingerprint?: string; sha256?: string; bytes?: number}
    if (last.fingerprint === print && last.sha256 && last.bytes) {
      return {file, name: pkg.name, version: pkg.version, sha256: last.sha256, bytes: last.bytes, dependencies: deps.length}
    }
  }
  rmSync(outDir, {recursive: true, force: true})
  mkdirSync(outDir, {recursive: true, mode: 0o700})
  const {sha256, bytes} = await writeTarGz(unique, file)
  writeFileSync(stamp, JSON.stringify({fingerprint: print, sha256, bytes}) + '\n', {mode: 0o600})
  return {file, name: pkg.name, version: pkg.version, sha256, bytes, dependencies: deps.length}
}
