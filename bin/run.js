#!/usr/bin/env node
// slurmctld runs `citc node resume|suspend|fail <hostlist>` on every power event: those three skip
// oclif's start-up (manifest, plugins: ~150 ms) and go straight to the node program, which behaves as
// the oclif command does (src/commands/node/program.ts). Anything else — help, flags — goes to oclif.
const [, , topic, program, hostlist, ...rest] = process.argv
if (topic === 'node' && ['resume', 'suspend', 'fail'].includes(program) && hostlist && !hostlist.startsWith('-') && rest.length === 0) {
  const {nodeProgramMain} = await import('../dist/lib/tasks/node/node-programs.js')
  process.exitCode = await nodeProgramMain(program, hostlist)
} else {
  const {execute} = await import('@oclif/core')
  await execute({dir: import.meta.url})
}
