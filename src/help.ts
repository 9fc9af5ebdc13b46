// citc's help: oclif's, with the exit codes every command shares at the end of each command's help —
// after the list of its subcommands for a command that is also a topic (`citc accounts`).
import {Command, Help} from '@oclif/core'

import {EXIT_CODE_HELP} from './lib/errors.js'

export default class CitcHelp extends Help {
  private hasSubcommands(command: Command.Loadable): boolean {
    return this.sortedCommands.some((c) => c.id.startsWith(`${command.id}:`))
  }

  formatCommand(command: Command.Loadable): string {
    const help = super.formatCommand(command)
    return this.hasSubcommands(command) ? help : `${help}\n\n${EXIT_CODE_HELP}`
  }

  async showCommandHelp(command: Command.Loadable): Promise<void> {
    // Asked first: listing the subcommands rewrites their ids with the topic separator (a space).
    const topic = this.hasSubcommands(command)
    await super.showCommandHelp(command)
    if (topic) this.log(EXIT_CODE_HELP)
  }
}
