// citc's help: oclif's, with the docs/ pages that explain the command further (docs-pages.ts) and the
// exit codes every command shares at the end of each command's help — after the list of its
// subcommands for a command that is also a topic (`citc accounts`).
import {join} from 'node:path'

import type {Command} from '@oclif/core'
// The help subpath alone, not @oclif/core whole: fast-help.ts uses this class without oclif's start-up.
import {Help} from '@oclif/core/help'

import {DOCS_PAGES} from './docs-pages.js'
import {EXIT_CODE_HELP} from './lib/errors.js'

export default class CitcHelp extends Help {
  private hasSubcommands(command: Command.Loadable): boolean {
    return this.sortedCommands.some((c) => c.id.startsWith(`${command.id}:`))
  }

  /** The command's pages as a help section, or nothing. */
  private docs(command: Command.Loadable): string | undefined {
    const pages = DOCS_PAGES[command.id.replaceAll(' ', ':')]
    return pages ? `SEE ALSO\n${pages.map((p) => `  ${join(this.config.root, p)}`).join('\n')}` : undefined
  }

  formatCommand(command: Command.Loadable): string {
    const help = super.formatCommand(command)
    return this.hasSubcommands(command) ? help : [help, this.docs(command), EXIT_CODE_HELP].filter(Boolean).join('\n\n')
  }

  async showCommandHelp(command: Command.Loadable): Promise<void> {
    // Asked first: listing the subcommands rewrites their ids with the topic separator (a space).
    const topic = this.hasSubcommands(command)
    await super.showCommandHelp(command)
    if (topic) this.log([this.docs(command), EXIT_CODE_HELP].filter(Boolean).join('\n\n'))
  }
}
