// A private Slurm controller for tests: its own munged (own key and socket) and slurmctld on a free
// loopback port, everything in a temp dir. Processes are stopped by PID, never by name.
import {execFileSync, spawnSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {hostname, tmpdir} from 'node:os'
import {join} from 'node:path'

import {freePort} from './net.js'
import {sleep} from '../../src/lib/proc.js'

export {freePort} from './net.js'


function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function killPid(pid: number | undefined, timeoutMs = 10_000): Promise<void> {
  if (!pid || !pidAlive(pid)) return
  process.kill(pid, 'SIGTERM')
  const deadline = Date.now() + timeoutMs
  while (pidAlive(pid) && Date.now() < deadline) await sleep(100)
  if (pidAlive(pid)) process.kill(pid, 'SIGKILL')
}

const readPid = (file: string) => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) || undefined : undefined)

export interface SlurmSandbox {
  dir: string
  confPath: string
  /** The part of slurm.conf outside the managed block, with this sandbox's private paths. */
  base: string
  /** A script that restarts this sandbox's slurmctld (the cluster's restart command in tests). */
  restartScript: string
  clusterId: string
  env: NodeJS.ProcessEnv
  startController(): Promise<void>
  /** True if slurmctld answers `scontrol ping`. */
  ping(): boolean
  scontrol(args: string[]): {status: number; stdout: string; stderr: string}
  controllerPid(): number | undefined
  stop(): Promise<void>
}

export async function slurmSandbox(clusterId = 'tst'): Promise<SlurmSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'citc-slurm-'))
  const port = await freePort()
  const confPath = join(dir, 'etc', 'slurm.conf')
  mkdirSync(join(dir, 'etc'))
  mkdirSync(join(dir, 'state'))
  const key = join(dir, 'munge.key')
  writeFileSync(key, randomBytes(1024))
  chmodSync(key, 0o400)
  const sock = join(dir, 'munge.sock')
  execFileSync('/usr/sbin/munged', [
    `--socket=${sock}`,
    `--key-file=${key}`,
    `--pid-file=${join(dir, 'munged.pid')}`,
    `--log-file=${join(dir, 'munged.log')}`,
    `--seed-file=${join(dir, 'munge.seed')}`,
    '--force',
  ])
  const base = [
    `ClusterName=${clusterId}`,
    `SlurmctldHost=${hostname()}(127.0.0.1)`,
    'SlurmUser=root',
    'AuthType=auth/munge',
    `AuthInfo=socket=${sock}`,
    `SlurmctldPort=${port}`,
    `StateSaveLocation=${dir}/state`,
    `SlurmdSpoolDir=${dir}/spool/%n`,
    `SlurmctldPidFile=${dir}/slurmctld.pid`,
    `SlurmctldLogFile=${dir}/slurmctld.log`,
    'ProctrackType=proctrack/linuxproc',
    'TaskPlugin=task/none',
    'SelectType=select/cons_tres',
    'SelectTypeParameters=CR_Core_Memory',
    '',
  ].join('\n')
  const restartScript = join(dir, 'restart-slurmctld')
  writeFileSync(
    restartScript,
    `#!/bin/sh
# Restart this sandbox's slurmctld: stop the one in the pid file, start a new one (it daemonizes).
pidfile=${dir}/slurmctld.pid
if [ -f "$pidfile" ]; then
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null
  i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
  kill -9 "$pid" 2>/dev/null
fi
exec /usr/sbin/slurmctld -f ${confPath}
`,
    {mode: 0o755},
  )
  const env = {...process.env, SLURM_CONF: confPath}
  const scontrol = (args: string[]) => {
    const r = spawnSync('scontrol', args, {env, encoding: 'utf8', timeout: 20_000})
    return {status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr}
  }
  const ping = () => /is UP/.test(scontrol(['ping']).stdout)
  const pidFile = join(dir, 'slurmctld.pid')
  return {
    dir,
    confPath,
    base,
    restartScript,
    clusterId,
    env,
    async startController() {
      execFileSync('/usr/sbin/slurmctld', ['-f', confPath], {env})
      const deadline = Date.now() + 20_000
      while (Date.now() < deadline) {
        if (ping()) return
        await sleep(250)
      }
      throw new Error(`slurmctld did not come up; log:\n${readFileSync(join(dir, 'slurmctld.log'), 'utf8').slice(-2000)}`)
    },
    ping,
    scontrol,
    controllerPid: () => readPid(pidFile),
    async stop() {
      await killPid(readPid(pidFile))
      await killPid(readPid(join(dir, 'munged.pid')))
      rmSync(dir, {recursive: true, force: true})
    },
  }
}
