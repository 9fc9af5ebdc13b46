// oclif.manifest.json is what oclif reads to list and load commands (help, autocomplete, not-found):
// a stale manifest means a help that lies or a command that cannot be found. It is produced by the
// build (`oclif manifest`) and committed, so it must equal both the command map and the built file.
import {spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import type {Command} from '@oclif/core'
import {describe, expect, it} from 'vitest'

import {commands} from '../../src/index.js'
import {ROOT} from './support.js'

const REBUILD = 'run npm run build and commit oclif.manifest.json'

type CommandClass = typeof Command
const classes = commands as unknown as Record<string, CommandClass>

interface ManifestFlag {
  name: string
  type: 'boolean' | 'option'
  [k: string]: unknown
}
interface ManifestCommand {
  id: string
  hidden?: boolean
  summary?: string
  description?: string
  examples?: unknown[]
  enableJsonFlag?: boolean
  flags: Record<string, ManifestFlag>
  args: Record<string, {name: string; required?: boolean; options?: string[]; description?: string}>
}

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const manifestPath = join(ROOT, 'oclif.manifest.json')
const manifest = (existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : {commands: {}}) as {
  version: string
  commands: Record<string, ManifestCommand>
}

/** The flags oclif sees for a command class: its base flags, its own, and --json when enabled. */
function classFlags(cls: CommandClass): Record<string, Record<string, unknown>> {
  const all: Record<string, Record<string, unknown>> = {...(cls.baseFlags ?? {}), ...(cls.flags ?? {})} as never
  if (cls.enableJsonFlag) all.json = {type: 'boolean', name: 'json'}
  return all
}

/** The parts of a flag a user sees and relies on, in the same form from the class or the manifest. */
function flagContract(name: string, f: Record<string, unknown>) {
  return {
    name,
    type: f.type,
    char: f.char ?? null,
    required: Boolean(f.required),
    multiple: f.type === 'option' ? Boolean(f.multiple) : null,
    options: (f.options as string[] | undefined) ?? null,
    env: f.env ?? null,
    hidden: Boolean(f.hidden),
    allowNo: f.type === 'boolean' ? Boolean(f.allowNo) : null,
    // Dynamic defaults (functions) are evaluated at run time and not stored; static ones are.
    default: typeof f.default === 'function' || f.default === undefined || f.default === false ? null : f.default,
    description: name === 'json' ? null : (f.description ?? null),
  }
}

describe('oclif.manifest.json', () => {
  it('exists, and belongs to this version of the package', () => {
    expect(existsSync(manifestPath), `oclif.manifest.json is missing: ${REBUILD}`).toBe(true)
    expect(manifest.version, `oclif.manifest.json is for another version: ${REBUILD}`).toBe(pkg.version)
  })

  it('lists exactly the commands of src/index.ts', () => {
    expect(Object.keys(manifest.commands).sort(), `the manifest does not match src/index.ts: ${REBUILD}`).toEqual(Object.keys(commands).sort())
    for (const [id, entry] of Object.entries(manifest.commands)) expect(entry.id).toBe(id)
  })

  it('gives every command the flags, arguments, summary and examples of its class', () => {
    for (const [id, cls] of Object.entries(classes)) {
      const entry = manifest.commands[id]
      expect(entry, `${id} is missing from the manifest: ${REBUILD}`).toBeDefined()
      const want = Object.entries(classFlags(cls))
        .map(([name, f]) => flagContract(name, f))
        .sort((a, b) => a.name.localeCompare(b.name))
      const got = Object.entries(entry.flags)
        .map(([name, f]) => flagContract(name, f))
        .sort((a, b) => a.name.localeCompare(b.name))
      expect(got, `flags of ${id} differ from the class: ${REBUILD}`).toEqual(want)

      const args = (a: Record<string, {required?: boolean; options?: readonly string[]; description?: string}>) =>
        Object.entries(a ?? {}).map(([name, x]) => ({name, required: Boolean(x.required), options: x.options ?? null, description: x.description ?? null}))
      expect(args(entry.args), `arguments of ${id} differ from the class: ${REBUILD}`).toEqual(args(cls.args))

      expect(Boolean(entry.hidden), `hidden of ${id}: ${REBUILD}`).toBe(Boolean(cls.hidden))
      expect(entry.summary, `summary of ${id}: ${REBUILD}`).toBe(cls.summary)
      expect(entry.description ?? null, `description of ${id}: ${REBUILD}`).toBe(cls.description ?? null)
      expect(entry.examples ?? [], `examples of ${id}: ${REBUILD}`).toEqual(cls.examples ?? [])
      expect(Boolean(entry.enableJsonFlag), `--json of ${id}: ${REBUILD}`).toBe(Boolean(cls.enableJsonFlag))
    }
  })

  it('every visible command takes the shared flags (--cluster/-c with CITC_CLUSTER, --yes/-y, --json, --verbose)', () => {
    for (const [id, entry] of Object.entries(manifest.commands)) {
      if (entry.hidden) continue
      expect(entry.flags.cluster, id).toMatchObject({char: 'c', env: 'CITC_CLUSTER', type: 'option'})
      expect(entry.flags.yes, id).toMatchObject({char: 'y', type: 'boolean'})
      expect(entry.flags.json, id).toMatchObject({type: 'boolean'})
      expect(entry.flags.verbose, id).toMatchObject({type: 'boolean'})
    }
  })

  it('is the committed file, unchanged by the build', () => {
    const git = (...args: string[]) => spawnSync('git', ['-C', ROOT, ...args], {encoding: 'utf8'})
    const inRepo = git('rev-parse', '--is-inside-work-tree')
    if (inRepo.status !== 0) return // an unpacked tarball: nothing to compare with
    expect(git('ls-files', '--error-unmatch', 'oclif.manifest.json').status, `oclif.manifest.json is not committed: ${REBUILD}`).toBe(0)
    const diff = git('diff', '--quiet', '--', 'oclif.manifest.json')
    expect(diff.status, `the built oclif.manifest.json differs from the committed one: ${REBUILD}`).toBe(0)
  })
})

describe('package.json', () => {
  it('ships what citc needs at run time', () => {
    expect(pkg.files).toEqual(expect.arrayContaining(['bin', 'dist', 'playbooks', 'templates', 'oclif.manifest.json']))
    // What oclif loads at start-up lives in shipped directories.
    expect(pkg.bin.citc).toMatch(/^(\.\/)?bin\//)
    expect(pkg.oclif.commands.target).toMatch(/^(\.\/)?dist\//)
    expect(pkg.oclif.helpClass).toMatch(/^(\.\/)?dist\//)
    // Plugins are loaded at run time: they must be dependencies, not devDependencies.
    for (const plugin of pkg.oclif.plugins as string[]) expect(Object.keys(pkg.dependencies), plugin).toContain(plugin)
    expect(pkg.oclif.plugins).toEqual(expect.arrayContaining(['@oclif/plugin-help', '@oclif/plugin-autocomplete']))
    // An unknown command is citc's own hook (exit 2, JSON under --json), not @oclif/plugin-not-found's
    // (exit 127): both would run, so the plugin must not be loaded.
    expect(pkg.oclif.plugins).not.toContain('@oclif/plugin-not-found')
    expect(pkg.oclif.hooks.command_not_found).toMatch(/^(\.\/)?dist\/hooks\/command-not-found\.js$/)
  })

  it('builds without oclif\'s update check (no "oclif update available" in the build output)', () => {
    expect(pkg.scripts.build).toMatch(/\bOCLIF_SKIP_NEW_VERSION_CHECK=true oclif manifest\b/)
  })

  it('packs the entry point, the built commands, the manifest, the playbooks and the templates', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: ROOT, encoding: 'utf8'})
    expect(r.status, r.stderr).toBe(0)
    const files = new Set<string>((JSON.parse(r.stdout) as Array<{files: Array<{path: string}>}>)[0].files.map((f) => f.path))
    for (const f of ['bin/run.js', 'dist/index.js', 'dist/help.js', 'dist/hooks/command-not-found.js', 'oclif.manifest.json', 'playbooks/management.yml', 'package.json']) {
      expect(files.has(f), `${f} is not in the package`).toBe(true)
    }
    expect([...files].some((f) => f.startsWith('templates/')), 'templates/ is not in the package').toBe(true)
    // The built command modules are shipped (one per command, plus shared ones).
    expect([...files].filter((p) => /^dist\/commands\/.*\.js$/.test(p)).length).toBeGreaterThanOrEqual(Object.keys(commands).length)
  })
})
