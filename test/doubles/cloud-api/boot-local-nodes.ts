// The fake clouds' launch hook for the end-to-end tests: a launched instance "boots" as a real local
// node — this machine's slurmd in its own UTS and time namespaces, started by the local provider's
// node driver — named by the user-data citc gave the launch (nodeFromUserData), as cloud-init would run
// it on a cloud. Terminating the instance stops that slurmd. So `sbatch` on a cloud cluster goes
// slurmctld → citc node resume → the real SDK → the fake cloud → a slurmd that registers, and the job runs.
import {join} from 'node:path'

import {localDriver} from '../../../src/lib/providers/local/driver.js'
import {nodeFromUserData} from '../../../src/lib/providers/node-user-data.js'
import {realContext} from '../../../src/lib/providers/types.js'
import type {FakeCloudHooks, FakeInstance} from './types.js'

export interface LocalBoots {
  hooks: FakeCloudHooks
  /** What the hooks did, one line each ("boot cm-c5-xlarge-0001: ok"). */
  events: string[]
  /** Stop every node still running (the test's cleanup). */
  stopAll(): Promise<void>
}

export function bootsLocalNodes(dir: string, opts: {sharedDir: string; confPath?: string}): LocalBoots {
  const driver = localDriver({runDir: join(dir, 'run'), logDir: join(dir, 'log'), sharedDir: opts.sharedDir, confPath: opts.confPath ?? '/etc/slurm/slurm.conf', stopGraceS: 5})
  const events: string[] = []
  const ctx = () => realContext((m) => void events.push(`  ${m}`), 60_000)
  const nameOf = (i: FakeInstance) => nodeFromUserData(i.userData)
  return {
    events,
    hooks: {
      async onLaunch(i) {
        const name = nameOf(i)
        if (!name) return void events.push(`boot ${i.id}: no citc node in its user-data`)
        const [o] = await driver.resume([{name, shape: i.shape}], ctx())
        events.push(`boot ${name} (${i.id}): ${o?.ok ? 'ok' : o?.error}`)
      },
      async onTerminate(i) {
        const name = nameOf(i)
        if (!name) return
        const [o] = await driver.suspend([{name, shape: i.shape}], ctx())
        events.push(`stop ${name} (${i.id}): ${o?.ok ? 'ok' : o?.error}`)
      },
    },
    async stopAll() {
      await driver.terminate(await driver.list(), ctx())
    },
  }
}
