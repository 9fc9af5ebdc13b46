// citc's help: oclif's, with the docs/ pages that explain the command further and the exit codes every
// command shares at the end of each command's help (help-end.ts) — after the list of its subcommands
// for a command that is also a topic (`citc accounts`). manifest-help.ts prints the same without
// oclif's start-up.
import type {Command} from '@oclif/core'
// The help subpath alone, not @oclif/core whole.
import {Help} from '@oclif/core/help'

import {helpEnd} from './help-end.js'

export default class CitcHelp extends Help {
  private hasSubcommands(command: Command.Loadable): boolean {
    return this.sortedCommands.some((c) => c.id.startsWith(`${command.id}:`))
  }

  formatCommand(command: Command.Loadable): string {
    const help = super.formatCommand(command)
    return this.hasSubcommands(command) ? help : [help, helpEnd(this.config.root, command.id)].join('\n\n')
  }

  async showCommandHelp(command: Command.Loadable): Promise<void> {
    // Asked first: listing the subcommands rewrites their ids with the topic separator (a space).
    const topic = this.hasSubcommands(command)
    await super.showCommandHelp(command)
    if (topic) this.log(helpEnd(this.config.root, command.id))
  }
}
