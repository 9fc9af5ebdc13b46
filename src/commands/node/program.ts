// Commands import their task modules inside run(): src/index.ts loads every command class for any
// command, and slurmctld starts a node program on every power event.
// The three node programs share one shape: a hidden command taking Slurm's hostlist argument.
import {Args, Command} from '@oclif/core'

import type {NodeProgram} from '../../lib/tasks/node-programs.js'

export function nodeProgramCommand(program: NodeProgram, summary: string) {
  return class extends Command {
    static hidden = true
    static summary = summary
    static description = `${summary}. Run by slurmctld on the management node (power saving); logs to the elastic log.`
    static examples = [`<%= config.bin %> node ${program} demo-c5-xlarge-[0001-0004]`]
    static args = {hostlist: Args.string({required: true, description: 'Slurm hostlist, e.g. demo-c5-xlarge-[0001-0004]'})}

    async run() {
      const {args} = await this.parse()
      const [{runNodeProgram}, {CitcError}] = await Promise.all([import('../../lib/tasks/node-programs.js'), import('../../lib/errors.js')])
      const outcomes = await runNodeProgram(program, args.hostlist).catch((error: unknown) => {
        // A plain Command (start-up time): say what base-command would, e.g. an unusable cluster.json.
        if (error instanceof CitcError) this.error(error.hint ? `${error.message}\nTry: ${error.hint}` : error.message, {exit: error.exitCode})
        throw error
      })
      // Slurm learns of failures through scontrol (done above); a non-zero exit only adds a log line.
      if (outcomes.length > 0 && outcomes.every((o) => !o.ok)) this.exit(1)
    }
  }
}
