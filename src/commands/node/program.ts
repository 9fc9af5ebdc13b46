// Commands import their task modules inside run(): src/index.ts loads every command class for any
// command, and slurmctld starts a node program on every power event.
// The three node programs share one shape: a hidden command taking Slurm's hostlist argument.
import {Args, Command, Flags} from '@oclif/core'

import type {NodeProgram} from '../../lib/tasks/node/node-programs.js'

export function nodeProgramCommand(program: NodeProgram, summary: string) {
  return class extends Command {
    static hidden = true
    static summary = summary
    static description = `${summary}. Run by slurmctld on the management node (power saving); logs to the elastic log.`
    static examples = [`<%= config.bin %> node ${program} demo-c5-xlarge-[0001-0004]`]
    static args = {hostlist: Args.string({required: true, description: 'Slurm hostlist, e.g. demo-c5-xlarge-[0001-0004]'})}
    // Tests and benchmarks only: docs/stand-ins.md, src/lib/stand-in.ts.
    static flags = {'stand-in': Flags.string({hidden: true, description: 'a stand-in file (tests): another cluster.json, fake clouds'})}

    async run() {
      const {args, flags} = await this.parse()
      const {nodeProgramMain} = await import('../../lib/tasks/node/node-programs.js')
      // bin/run.js runs this directly for `citc node <program> <hostlist> [--stand-in FILE]`; the same code here.
      const code = await nodeProgramMain(program, args.hostlist, flags['stand-in'])
      if (code !== 0) this.exit(code)
    }
  }
}
