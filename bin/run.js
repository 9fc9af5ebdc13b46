#!/usr/bin/env node
// slurmctld runs `citc node resume|suspend|fail <hostlist>` on every power event, and the citc-metrics
// timer runs `citc metrics collect` every 30 s: those skip oclif's start-up (manifest, plugins: ~150 ms)
// and go straight to their main function, which behaves as the oclif command does
// (src/commands/node/program.ts, src/commands/metrics/collect.ts). Anything else — other flags,
// --every — goes to oclif (help too, unless src/fast-help.ts serves it: see below). Tests add `--stand-in FILE` (src/lib/stand-in.ts), which takes the same fast path.
const [, , topic, program, hostlist, ...rest] = process.argv
const standIn = rest.length === 2 && rest[0] === '--stand-in' && !rest[1].startsWith('-') ? rest[1] : undefined
const collect = topic === 'metrics' && program === 'collect'
const collectStandIn = hostlist === '--stand-in' && rest.length === 1 && !rest[0].startsWith('-') ? rest[0] : undefined
if (topic === 'node' && ['resume', 'suspend', 'fail'].includes(program) && hostlist && !hostlist.startsWith('-') && (rest.length === 0 || standIn)) {
  // One esbuild bundle (package.json's bundle-node-programs): its chunks load in one go, where the
  // modules one by one cost ~50 ms; each provider's driver is a chunk of its own, loaded when needed.
  const {nodeProgramMain} = await import('../dist/node-programs/node-programs.js')
  process.exitCode = await nodeProgramMain(program, hostlist, standIn)
} else if (collect && (hostlist === undefined || collectStandIn)) {
  const {metricsCollectMain} = await import('../dist/lib/tasks/metrics/collect-main.js')
  process.exitCode = await metricsCollectMain({standInFile: collectStandIn})
} else {
  // Help (`citc`, `citc --help`, `citc COMMAND --help`) is printed from the manifest without oclif's
  // start-up (src/fast-help.ts: oclif's own help text); whatever it leaves goes to oclif.
  const argv = process.argv.slice(2)
  const help = argv.length === 0 || argv.includes('--help')
  let served = false
  if (help) {
    const [{fastHelp}, {fileURLToPath}] = await Promise.all([import('../dist/fast-help.js'), import('node:url')])
    served = await fastHelp(fileURLToPath(new URL('..', import.meta.url)), argv)
  }
  if (!served) {
    const {execute} = await import('@oclif/core')
    await execute({dir: import.meta.url})
  }
}
