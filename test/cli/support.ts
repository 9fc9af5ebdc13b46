// Shared by the CLI contract tests: the built citc run with a private data directory, and Slurm's
// own parser (scontrol) for generated files. Every file under test/cli gets its own CITC_DATA_DIR.
import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {clusterRegistry} from '../../src/lib/cluster/registry.js'
import {citc, type CliResult} from '../helpers/cli.js'

export {ROOT} from '../helpers/cli.js'
export type {CliResult}

export interface CliSandbox {
  /** A fresh, empty CITC_DATA_DIR. */
  dataDir: string
  /** A scratch directory for input files. */
  tmp: string
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<CliResult>
  cleanup(): void
}

/**
 * A data dir and scratch dir of its own; CITC_CLUSTER from the caller's shell is never inherited.
 * NODE_ENV is cleared: vitest sets it to "test", and under "test" or "development" oclif runs the
 * TypeScript sources through tsx instead of dist/ (and then cannot load the ESM help class) — these
 * tests are about the built CLI, as a user runs it.
 */
export function cliSandbox(label: string): CliSandbox {
  const root = mkdtempSync(join(tmpdir(), `citc-cli-${label}-`))
  const dataDir = join(root, 'data')
  const tmp = join(root, 'tmp')
  for (const d of [dataDir, tmp]) mkdirSync(d)
  return {
    dataDir,
    tmp,
    run: (args, env = {}) => citc(args, {env: {CITC_DATA_DIR: dataDir, CITC_CLUSTER: undefined, NODE_ENV: undefined, ...env}, timeoutMs: 60_000}),
    cleanup: () => rmSync(root, {recursive: true, force: true}),
  }
}

/** Runs `tasks` at most `n` at a time (CLI calls are ~0.3 s each; the machine has two cores). */
export async function limited<T>(n: number, tasks: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = new Array(tasks.length)
  let next = 0
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++
      results[i] = await tasks[i]()
    }
  }
  await Promise.all(Array.from({length: Math.min(n, tasks.length)}, worker))
  return results
}

/** `scontrol show hostnames HOSTLIST` with SLURM_CONF pointing at `conf` (written into `dir`). */
export function scontrolHostnames(dir: string, conf: string, hostlist: string): {status: number | null; stdout: string; stderr: string; hosts: string[]} {
  const file = join(dir, `slurm-${Math.random().toString(36).slice(2)}.conf`)
  writeFileSync(file, conf)
  const r = spawnSync('scontrol', ['show', 'hostnames', hostlist], {env: {...process.env, SLURM_CONF: file}, encoding: 'utf8'})
  if (r.error) throw new Error(`scontrol is needed for this test: ${r.error.message}`)
  return {status: r.status, stdout: r.stdout, stderr: r.stderr, hosts: r.stdout.split('\n').filter(Boolean)}
}

/** The hostlists of the NodeName lines of a slurm.conf, in order. */
export const nodeNameHostlists = (conf: string): string[] => [...conf.matchAll(/^NodeName=(\S+)/gm)].map((m) => m[1])

/**
 * A local cluster `name` in `dataDir` whose slurm.conf (written next to the data) names a controller
 * on a closed loopback port: status then answers at once, "NOT ANSWERING", without root or a daemon.
 */
export function localClusterWithoutController(dataDir: string, name: string): string {
  const confPath = join(dataDir, `${name}-slurm.conf`)
  writeFileSync(confPath, [`ClusterName=${name}`, 'SlurmctldHost=localhost(127.0.0.1)', 'SlurmctldPort=1', 'NodeName=n1 CPUs=1 State=CLOUD', 'PartitionName=p Nodes=n1', ''].join('\n'))
  clusterRegistry(dataDir).create({name, provider: 'local', createdAt: new Date().toISOString(), origin: 'created', mgmt: {host: 'localhost', port: 22, user: 'root'}, slurm: {confPath, programsDir: '/usr/local/libexec/citc'}}, () => {})
  return confPath
}
