// `citc node sync`: the watchdog (src/lib/nodes/node-sync.ts). A plain Command like the node programs
// (start-up time: it runs every minute); its logic (lib/nodes) is imported inside run().
import {Command, Flags} from '@oclif/core'

const seconds = (description: string) => Flags.integer({min: 1, description, helpValue: 'SECONDS'})

export default class NodeSync extends Command {
  // Hidden like the other node programs (the node topic is): it runs on the management node, by its timer.
  static hidden = true
  static summary = 'Make the cloud and Slurm agree: terminate orphans, put vanished or stuck nodes down, hold shapes after a capacity failure'
  static description = `Run every 60 s on the management node by a systemd timer (citc-node-sync.timer), or by the citc-node-sync service's --every loop where systemd does not run. One run at a time; every action is one line in the elastic log (/var/log/citc/elastic.log).

Each run: an instance whose node is powered down or unknown to Slurm, older than --orphan-grace, is terminated; a node Slurm thinks is up whose instance is gone two runs in a row, or one stuck powered-down-not-responding for --stuck, or one powering up for --start-lost without an instance ever launched for it (its resume program was killed), is put DOWN and powered down; after a "citc: capacity:" failure, the other idle~ nodes of that shape and AD are held (DRAIN "citc: capacity cooldown until HH:MM UTC") for --cooldown, then returned; nodes a quota, permission or setting refusal stopped are kept DOWN for the admin (and listed in citc status) instead of being tried by every job. On the local provider the instances are this machine's node slurmd processes.`
  static examples = [
    {description: 'One run, as the timer does', command: '<%= config.bin %> node sync'},
    {description: "What the run did, for a script", command: '<%= config.bin %> node sync --json'},
  ]
  static enableJsonFlag = true
  static flags = {
    every: seconds('keep running: one run every SECONDS until stopped (the service where systemd does not run)'),
    'orphan-grace': seconds('terminate an orphan instance only once it is this old (default 120)'),
    cooldown: seconds('how long a shape/AD is held after a capacity failure (default 600)'),
    stuck: seconds('how long a node may stay powered down and not responding before it is reset (default 300)'),
    'start-lost': seconds('how long a node may stay powering up with no instance launched for it before it is reset (default 360)'),
    'state-dir': Flags.string({hidden: true, description: 'where the runs keep their memory (default /var/lib/citc/node-sync)'}),
  }

  async run() {
    const {flags} = await this.parse(NodeSync)
    const {syncFromHost} = await import('../../lib/nodes/node-sync.js')
    const {syncService, syncSettings, syncSummary} = await import('../../lib/nodes/sync-service.js')
    const settings = syncSettings({orphanGrace: flags['orphan-grace'], cooldown: flags.cooldown, stuck: flags.stuck, startLost: flags['start-lost']})
    const once = () => syncFromHost({stateDir: flags['state-dir'], settings, echo: this.jsonEnabled() ? undefined : (l) => this.log(l)})
    if (flags.every !== undefined) return syncService(flags.every * 1000, once)
    const result = await once()
    if ('skipped' in result) {
      if (!this.jsonEnabled()) this.log(`node sync: nothing done: ${result.skipped}`)
      return result
    }
    if (!this.jsonEnabled()) this.log(syncSummary(result))
    if (result.actions.some((a) => !a.ok)) process.exitCode = 1
    return result
  }
}
