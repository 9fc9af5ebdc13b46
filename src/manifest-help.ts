// The fast path's help (fast-help.ts): what help.ts's CitcHelp prints, made of oclif's own formatting
// classes (HelpFormatter, CommandHelp, RootHelp: every line of text is theirs) with oclif's Help flow
// — root, topic, command — written again here, as @oclif/core 4.14's help/index.js has it. That module
// is not loaded because it brings oclif's ux, module loader and error classes with it (~20 ms of
// CPU time at every start, a fifth of `node -e 0`); the formatting classes are loaded from its folder
// by path (the package exports only the index). test/fast-help.test.ts compares this with CitcHelp on
// oclif's own Config for every command and topic, so an oclif upgrade that changes the flow fails there.
//
// What this flow leaves out — states and deprecations, aliases, single-command CLIs, flexible
// taxonomy, dynamic help — fast-help.ts does not send here (it leaves those to oclif).
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {format} from 'node:util'

import type {Command, Config, Interfaces} from '@oclif/core'
import type {CommandHelp, HelpFormatter} from '@oclif/core/help'

import {helpEnd} from './help-end.js'

interface Oclif {
  HelpFormatter: new (config: Config, opts?: Partial<Interfaces.HelpOptions>) => HelpFormatter
  CommandHelp: new (command: Command.Loadable, config: Config, opts: Interfaces.HelpOptions) => CommandHelp
  RootHelp: new (config: Config, opts: Interfaces.HelpOptions) => {root(): string; render: (t: string) => string}
  sortBy<T>(arr: T[], fn: (i: T) => unknown): T[]
  uniqBy<T>(arr: T[], fn: (i: T) => unknown): T[]
  compact<T>(a: (T | false | null | undefined | '')[]): T[]
  strip(s: string): string
  standardizeIDFromArgv(argv: string[], config: Config): string[]
}

/** oclif's formatting classes, from the folder of @oclif/core/help; undefined if that folder is not laid out as 4.x has it. */
export function loadOclifHelpParts(): Oclif | undefined {
  try {
    const dir = dirname(fileURLToPath(import.meta.resolve('@oclif/core/help')))
    const req = createRequire(join(dir, 'index.js'))
    const util = req('../util/util.js')
    return {
      HelpFormatter: req('./formatter.js').HelpFormatter,
      CommandHelp: req('./command.js').CommandHelp,
      RootHelp: req('./root.js').default,
      sortBy: util.sortBy,
      uniqBy: util.uniqBy,
      compact: util.compact,
      strip: req('ansis').strip,
      standardizeIDFromArgv: req('./util.js').standardizeIDFromArgv,
    }
  } catch {
    return undefined
  }
}

/** ejs's escaping of `<%= %>` output. */
const ESCAPED: Record<string, string> = {'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;'}
/** The two templates citc's texts use, and what they name on the formatter. */
const SIMPLE_TAG = /<%= (config\.bin|command\.id) %>/g

/**
 * oclif passes every piece of help text through its template renderer (ejs), compiling a template
 * each time (~20 ms of CPU time here): a text without `<%` renders as itself, and one whose only tags
 * are `<%= config.bin %>` or `<%= command.id %>` as those values, escaped as ejs escapes them. Any
 * other template still goes to ejs.
 */
function skipIdleTemplates<T extends {render: (t: string) => string}>(f: T): T {
  const render = f.render
  const values = f as unknown as {config: {bin: unknown}; command?: {id: unknown}}
  f.render = (t) => {
    if (!t.includes('<%')) return t
    const simple = t.replaceAll(SIMPLE_TAG, (_, name: string) => {
      const value = name === 'config.bin' ? values.config.bin : values.command?.id
      return typeof value === 'string' ? value.replaceAll(/[&<>"']/g, (c) => ESCAPED[c]) : _
    })
    return simple.includes('<%') ? render(t) : simple
  }
  return f
}

/** What Help.showHelp would be about: the first word that is not a help flag, or none. */
export function helpSubject(argv: string[]): string | undefined {
  for (const arg of argv) {
    if (arg === '--') return undefined
    if (arg === '--help' || arg === 'help') continue
    if (arg.startsWith('-')) return undefined
    return arg
  }
  return undefined
}

/** Help.showHelp's subject, as it finds it: help flags out, the id standardized (`accounts apply` → `accounts:apply`). */
export function subjectOf(o: Oclif, argv: string[], config: Config): string | undefined {
  return helpSubject(o.standardizeIDFromArgv(argv.filter((a) => a !== '--help'), config))
}

/** Print the help for argv as CitcHelp (oclif's Help) would; the subject must be a command, a topic, or none. */
export function showManifestHelp(o: Oclif, config: Config, argv: string[]): void {
  const h = skipIdleTemplates(new o.HelpFormatter(config, {}))
  const opts = (h as unknown as {opts: Interfaces.HelpOptions}).opts
  const sep = config.topicSeparator
  const log = (s: string) => console.log(format(s))
  const spaced = (id: string) => (sep === ':' ? id : id.replaceAll(':', sep))

  const sortedCommands = () => o.uniqBy(o.sortBy(config.commands.filter((c) => !c.hidden), (c) => c.id), (c) => c.id)
  const sortedTopics = () => {
    const withChildren = config.topics.filter((t) => config.topics.some((s) => s.name.includes(`${t.name}:`)))
    return o.uniqBy(o.sortBy(withChildren.filter((t) => !t.hidden), (t) => t.name), (t) => t.name)
  }
  const summary = (c: Command.Loadable) => (c.summary ? h.render(c.summary.split('\n')[0]) : c.description && h.render(c.description).split('\n')[0])
  const hasSubcommands = (c: Command.Loadable) => sortedCommands().some((s) => s.id.startsWith(`${c.id}:`))

  const formatCommand = (c: Command.Loadable) => {
    const topic = hasSubcommands(c)
    c.id = spaced(c.id)
    c.aliases = c.aliases && c.aliases.map(spaced)
    const help = skipIdleTemplates(new o.CommandHelp(c, config, opts)).generate()
    return topic ? help : [help, helpEnd(config.root, c.id)].join('\n\n')
  }
  const formatCommands = (commands: Command.Loadable[]) => {
    if (commands.length === 0) return ''
    const body = h.renderList(
      commands.map((c) => {
        c.id = spaced(c.id)
        const s = summary(c)
        return [c.id, s && o.strip(s)]
      }),
      {indentation: 2, spacer: '\n', stripAnsi: opts.stripAnsi},
    )
    return h.section('COMMANDS', body)
  }
  const formatTopics = (topics: Interfaces.Topic[]) => {
    if (topics.length === 0) return ''
    const body = h.renderList(
      topics.map((t) => {
        t.name = spaced(t.name)
        return [t.name, t.description && h.render(t.description.split('\n')[0])]
      }),
      {indentation: 2, spacer: '\n', stripAnsi: opts.stripAnsi},
    )
    return h.section('TOPICS', body)
  }
  const childrenOf = <T>(name: string, items: T[], key: (i: T) => string) => {
    const depth = name.split(':').length
    return items.filter((i) => key(i).startsWith(name + ':') && key(i).split(':').length === depth + 1)
  }

  /** The topics, then the commands, under a topic or the root: each list followed by a blank line. */
  const showLists = (topics: Interfaces.Topic[], commands: Command.Loadable[]) => {
    if (topics.length > 0) {
      log(formatTopics(topics))
      log('')
    }
    if (commands.length > 0) {
      log(formatCommands(commands))
      log('')
    }
  }

  const showCommandHelp = (command: Command.Loadable) => {
    const name = command.id
    const subTopics = childrenOf(name, sortedTopics(), (t) => t.name)
    const subCommands = childrenOf(name, sortedCommands(), (c) => c.id)
    const topic = hasSubcommands(command)
    const s = summary(command)
    if (s) log(s + '\n')
    log(formatCommand(command))
    log('')
    showLists(subTopics, subCommands)
    if (topic) log(helpEnd(config.root, command.id))
  }
  const showTopicHelp = (topic: Interfaces.Topic) => {
    const {name} = topic
    const subTopics = childrenOf(name, sortedTopics(), (t) => t.name)
    const commands = childrenOf(name, sortedCommands(), (c) => c.id)
    let description = h.render(topic.description || '')
    const first = description.split('\n')[0]
    description = description.split('\n').slice(1).join('\n')
    const topicId = spaced(`${name}:COMMAND`)
    const text = o.compact([first, h.section(opts.usageHeader || 'USAGE', `$ ${config.bin} ${topicId}`), description && h.section('DESCRIPTION', h.wrap(description))]).join('\n\n')
    log((opts.stripAnsi ? o.strip(text) : text) + '\n')
    showLists(subTopics, commands)
  }
  const showRootHelp = () => {
    log(skipIdleTemplates(new o.RootHelp(config, opts)).root())
    log('')
    // Top-level topics and commands (an empty id is a single-command CLI's, which this never serves).
    showLists(
      sortedTopics().filter((t) => !t.name.includes(':')),
      sortedCommands().filter((c) => c.id && !c.id.includes(':')),
    )
  }

  const subject = subjectOf(o, argv, config)
  if (!subject) return showRootHelp()
  const command = config.findCommand(subject)
  if (command) return showCommandHelp(command)
  const topic = config.findTopic(subject)
  if (topic) return showTopicHelp(topic)
  throw new Error(`citc help: no command or topic ${subject} (fast-help.ts should have left this to oclif)`)
}
