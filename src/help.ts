// citc's help: oclif's, with the exit codes every command shares appended to each command's help.
import {Command, Help} from '@oclif/core'

import {EXIT_CODE_HELP} from './lib/errors.js'

export default class CitcHelp extends Help {
  formatCommand(command: Command.Loadable): string {
    return `${super.formatCommand(command)}\n\n${EXIT_CODE_HELP}`
  }
}
