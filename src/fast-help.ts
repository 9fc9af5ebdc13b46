// `citc --help` and `citc COMMAND --help` without oclif's start-up. oclif renders help only after
// loading @oclif/core whole, every plugin and its configuration (Config.load): most of the time `citc
// --help` takes. Help needs none of that but a few facts from oclif.manifest.json and the package.json
// files, so this reads those and hands them to oclif's own formatting classes (manifest-help.ts, with
// what help.ts adds): the text is oclif's, byte for byte (test/fast-help.test.ts compares both for the
// root, every topic and every command; test/cli/fast-help.test.ts the built CLI with oclif's own
// start-up, at other widths and in colour).
//
// Whatever this does not read the way Config.load does — a theme, user or dev plugins, aliases,
// flexible taxonomy, init hooks, dynamic help, a stale manifest, a subject that is no command or topic,
// another platform — is left to oclif: fastHelp() then prints nothing and returns false.
import {existsSync, readFileSync} from 'node:fs'
import {arch, homedir, platform, release, tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

import type {Command, Config, Interfaces} from '@oclif/core'

interface Pjson {
  name: string
  version: string
  description?: string
  oclif: {
    bin?: string
    binAliases?: string[]
    dirname?: string
    topicSeparator?: string
    plugins?: string[]
    devPlugins?: string[]
    jitPlugins?: Record<string, string>
    hooks?: Record<string, unknown>
    topics?: Record<string, {description?: string; hidden?: boolean; subtopics?: unknown}>
    theme?: unknown
    flexibleTaxonomy?: boolean
    additionalHelpFlags?: string[]
    additionalVersionFlags?: string[]
    helpOptions?: unknown
    helpClass?: unknown
    commands?: unknown
    state?: string
  }
}

interface Manifest {
  version: string
  commands: Record<string, Command.Cached>
}

const readJson = <T>(file: string): T | undefined => {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T
  } catch {
    return undefined
  }
}

/** Hooks oclif runs around help (main.run): a plugin with one of these needs oclif. */
const HELP_HOOKS = ['init', 'finally']

/** A plugin as Config.load sees it: its package.json and its commands from its manifest; undefined if not readable so. */
function loadPlugin(dir: string): {pjson: Pjson; commands: Command.Loadable[]} | undefined {
  const pjson = readJson<Pjson>(join(dir, 'package.json'))
  const manifest = readJson<Manifest>(join(dir, 'oclif.manifest.json'))
  if (!pjson?.oclif || !manifest?.commands) return undefined
  // oclif warns about a manifest of another version: that warning is oclif's to print.
  if (manifest.version.split('-')[0] !== pjson.version.split('-')[0]) return undefined
  if (Object.keys(pjson.oclif.hooks ?? {}).some((h) => HELP_HOOKS.includes(h))) return undefined
  const commands = Object.entries(manifest.commands)
    .map(([id, c]) => ({...c, id, pluginAlias: pjson.name, pluginType: c.pluginType === 'jit' ? 'jit' : 'core'}) as Command.Loadable)
  // Aliases, states and deprecations: help says more about those (manifest-help.ts does not).
  if (commands.some((c) => !Array.isArray(c.aliases) || c.aliases.length > 0 || (c.hiddenAliases?.length ?? 0) > 0 || c.state || c.deprecationOptions || c.deprecateAliases)) return undefined
  if (pjson.oclif.state) return undefined
  return {pjson, commands}
}

/** Where Node would find a dependency of the package at `root`. */
function packageDir(root: string, name: string): string | undefined {
  for (let dir = root; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name)
    if (existsSync(join(candidate, 'package.json'))) return candidate
    if (dirname(dir) === dir) return undefined
  }
}

/** WSL: oclif calls that platform "wsl" (wsl-utils); left to oclif. */
function maybeWsl(): boolean {
  if (release().toLowerCase().includes('microsoft')) return true
  try {
    return readFileSync('/proc/version', 'utf8').toLowerCase().includes('microsoft')
  } catch {
    return false
  }
}

/** The part of oclif's Config that help reads, as Config.load would make it; undefined where this cannot. */
export function helpConfig(root: string, env: NodeJS.ProcessEnv = process.env): Config | undefined {
  // Under development or test, oclif runs src/ through tsx; and OCLIF_NEXT_VERSION changes how it takes the manifest.
  if (['development', 'test'].includes(env.NODE_ENV ?? '') || env.OCLIF_NEXT_VERSION) return undefined
  const plat = platform()
  if ((plat !== 'linux' && plat !== 'darwin') || (plat === 'linux' && maybeWsl())) return undefined
  const rootPlugin = loadPlugin(root)
  if (!rootPlugin) return undefined
  const {pjson} = rootPlugin
  const o = pjson.oclif
  if (o.devPlugins || o.jitPlugins || o.theme || o.flexibleTaxonomy || o.additionalHelpFlags || o.additionalVersionFlags || o.helpOptions || o.binAliases) return undefined
  if ((o.topicSeparator ?? ':') !== ' ' && (o.topicSeparator ?? ':') !== ':') return undefined
  const dirname_ = o.dirname ?? pjson.name
  const bin = o.bin || pjson.name
  // Config.scopedEnvVar: CITC_CONFIG_DIR and the like, named after the bin.
  const scoped = (key: string) => env[`${bin.replaceAll('@', '').replaceAll(/[/-]/g, '_')}_${key}`.toUpperCase()]
  const home = env.HOME || homedir() || tmpdir()
  const xdg = (category: 'config' | 'data') => join(env[`XDG_${category.toUpperCase()}_HOME`] || join(home, category === 'data' ? '.local/share' : '.config'), dirname_)
  // A user's theme (theme.json) and user-installed plugins (package.json in the data dir): oclif's.
  const disableTheme = ['1', 'true'].includes(scoped('DISABLE_THEME') ?? '')
  if (!disableTheme && existsSync(join(scoped('CONFIG_DIR') || xdg('config'), 'theme.json'))) return undefined
  if (existsSync(join(scoped('DATA_DIR') || xdg('data'), 'package.json'))) return undefined

  const plugins = new Map<string, {name: string; pjson: Pjson}>([[pjson.name, {name: pjson.name, pjson}]])
  const commands = new Map<string, Command.Loadable>()
  const topics = new Map<string, Interfaces.Topic>()
  const all = [{...rootPlugin, name: pjson.name}]
  for (const name of o.plugins ?? []) {
    const dir = packageDir(root, name)
    const plugin = dir ? loadPlugin(dir) : undefined
    if (!plugin) return undefined
    plugins.set(plugin.pjson.name, {name: plugin.pjson.name, pjson: plugin.pjson})
    all.push({...plugin, name: plugin.pjson.name})
  }
  for (const plugin of all) {
    // Two plugins with one id: oclif picks one by its priority rules (determinePriority).
    for (const c of plugin.commands) {
      if (commands.has(c.id)) return undefined
      commands.set(c.id, c)
    }
  }
  for (const plugin of all) {
    // Config.loadTopics: package.json's topics, then one per id prefix of each visible command.
    for (const [name, t] of Object.entries(plugin.pjson.oclif.topics ?? {})) {
      if (t.subtopics) return undefined
      const existing = topics.get(name)
      if (existing) {
        existing.description = t.description || existing.description
        existing.hidden = existing.hidden || t.hidden
      } else topics.set(name, {...t, name})
    }
    // A topic made so takes the description of the first such command in the plugin's order, which
    // is oclif's localeCompare of the ids. That order is asked only where two commands compete: ICU's
    // collator costs ~8 ms of CPU time the first time it is used, and the help sorts by id itself.
    const candidates = new Map<string, Command.Loadable[]>()
    for (const c of plugin.commands.filter((c) => !c.hidden)) {
      const parts = c.id.split(':')
      for (; parts.length > 0; parts.pop()) {
        const name = parts.join(':')
        if (name && !topics.has(name)) candidates.set(name, [...(candidates.get(name) ?? []), c])
      }
    }
    for (const [name, cs] of candidates) {
      const c = cs.length === 1 ? cs[0] : [...cs].sort((a, b) => a.id.localeCompare(b.id))[0]
      topics.set(name, {description: c.summary || c.description, name})
    }
  }
  const version = pjson.version
  const config = {
    root,
    name: pjson.name,
    version,
    pjson,
    bin,
    dirname: dirname_,
    topicSeparator: o.topicSeparator ?? ':',
    platform: plat,
    arch: arch() === 'ia32' ? 'x86' : arch(),
    windows: false,
    shell: (env.SHELL ?? 'unknown').split('/').at(-1) || 'unknown',
    userAgent: `${pjson.name}/${version} ${plat}-${arch() === 'ia32' ? 'x86' : arch()} node-${process.version}`,
    theme: undefined,
    flexibleTaxonomy: false,
    isSingleCommandCLI: false,
    plugins,
    get commands() {
      return [...commands.values()]
    },
    get commandIDs() {
      return [...commands.keys()]
    },
    get topics() {
      return [...topics.values()]
    },
    // Ids arrive with ':' here (help standardizes them first), as Config's lookups do without flexible taxonomy.
    findCommand: (id: string) => commands.get(id),
    findTopic: (name: string) => topics.get(name),
  }
  return config as unknown as Config
}

/** True when oclif would show help for this argv (main.run: helpAddition, after --version). */
export function asksForHelp(argv: string[]): boolean {
  if (argv[0] === '--version') return false
  if (argv.length === 0) return true
  for (const arg of argv) {
    if (arg === '--help') return true
    if (arg === '--') return false
  }
  return false
}

/**
 * Print the help oclif would print for `argv` (process.argv.slice(2)) and return true; or print
 * nothing and return false when oclif must do it (see the top of this file).
 */
export async function fastHelp(root: string, argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (!asksForHelp(argv)) return false
  const config = helpConfig(root, env)
  if (!config) return false
  const {loadOclifHelpParts, showManifestHelp, subjectOf} = await import('./manifest-help.js')
  const oclif = loadOclifHelpParts()
  if (!oclif) return false
  // As Help.showHelp finds its subject: what it would not find is oclif's to report (its error).
  const subject = subjectOf(oclif, argv, config)
  if (subject) {
    const command = config.findCommand(subject)
    if (command ? command.hasDynamicHelp && command.pluginType !== 'jit' : !config.findTopic(subject)) return false
  }
  showManifestHelp(oclif, config, argv)
  return true
}
