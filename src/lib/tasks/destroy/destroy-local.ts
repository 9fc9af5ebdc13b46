// `citc destroy` for a local cluster: every node powered down (by the node driver, so it works even
// when slurmctld is gone), then playbooks/teardown.yml stops the daemons citc started and removes the
// configuration, state and shared data it created. The cluster's state is deleted last, only after
// all that succeeded. apt packages stay.
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {withLock} from '../../cluster/lock.js'
import {clusterRegistry} from '../../cluster/registry.js'
import {CitcError} from '../../errors.js'
import {confirmByTyping, type Io} from '../../io.js'
import {localDriver} from '../../providers/local/driver.js'
import {runPlaybook} from '../../tools/ansible.js'
import {localTransport} from '../../transport/local.js'
import {playbookVars} from '../create/create-local.js'
import {driverFor, elasticLogger, readNodeHostConfig} from '../node-programs.js'
import {taskList, withInterrupts} from '../listr.js'

/** The driver as the node programs use it (cluster.json's overrides), or its defaults if that is gone. */
function nodeDriver() {
  try {
    return driverFor(readNodeHostConfig())
  } catch {
    return localDriver()
  }
}

export async function destroyLocal(io: Io, name: string, dataDir: string, packageRoot: string) {
  const registry = clusterRegistry(dataDir)
  const record = registry.get(name)
  if (record.provider !== 'local') throw new CitcError('usage', `${name} is a ${record.provider} cluster, not a local one`)
  await confirmByTyping(io, name, `destroying cluster ${name} (its nodes, daemons, configuration and shared data on this machine)`)
  const paths = registry.paths(name)
  const stamp = new Date().toISOString().replace(/[:.]/g, '-')
  const ansibleLog = join(paths.logsDir, `teardown-${stamp}.log`)
  const stopped: string[] = []

  await withLock(paths.dir, 'citc destroy', () =>
    withInterrupts(async (signal) => {
      await taskList(
        [
          {
            title: 'Power down every compute node',
            task: async (_, task) => {
              const driver = nodeDriver()
              const running = await driver.running()
              const log = elasticLogger('/var/log/citc/elastic.log', 'citc-destroy')
              const outcomes = await driver.suspend(
                running.map((n) => ({name: n, shape: 'unknown'})),
                (m) => {
                  log(m)
                  task.output = m
                },
              )
              const failed = outcomes.filter((o) => !o.ok)
              if (failed.length > 0) throw new CitcError('remote', `could not stop ${failed.map((f) => `${f.name} (${f.error})`).join(', ')}`)
              stopped.push(...running)
              task.title = `Powered down ${running.length} running node(s)`
            },
          },
          {
            title: 'Stop the daemons and remove what citc created (playbooks/teardown.yml)',
            task: async (_, task) => {
              const varsFile = join(paths.dir, 'ansible-vars.json')
              writeFileSync(varsFile, JSON.stringify(playbookVars(record, packageRoot), null, 2), {mode: 0o600})
              await runPlaybook(localTransport(), {
                playbookPath: join(packageRoot, 'playbooks', 'teardown.yml'),
                extraVarsPath: varsFile,
                logFile: ansibleLog,
                onTask: (t) => {
                  task.output = t
                },
                signal,
              })
            },
            rendererOptions: {outputBar: 1},
          },
          {
            title: 'Check that nothing is left running',
            task: async () => {
              const left = await nodeDriver().running()
              if (left.length > 0) throw new CitcError('remote', `nodes still running: ${left.join(', ')}`)
            },
          },
          {
            title: `Forget cluster ${name}`,
            task: () => registry.remove(name),
          },
        ],
        io.renderer,
      ).run()
    }),
  ).catch((error: unknown) => {
    if (error instanceof CitcError && error.kind !== 'cancelled') {
      throw new CitcError(error.kind, `destroy did not finish: ${error.message}`, {
        hint: `the cluster's state is kept; fix the cause and run citc destroy ${name} again (log: ${ansibleLog})`,
        details: error.details,
      })
    }
    throw error
  })
  io.log(`Destroyed ${name}. Packages installed with apt (slurm, munge, mariadb, slapd, nslcd, ansible-core) stay installed.`)
  return {destroyed: name, poweredDown: stopped, packagesKept: true}
}
