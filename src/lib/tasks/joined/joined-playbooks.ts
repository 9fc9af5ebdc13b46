// The playbooks that join and release machines, run by ansible-playbook on the management node:
// node.yml and node-remove.yml over SSH to the machines (an inventory of them, their pinned host keys
// only), joined-management.yml on the management node itself (slapd on the cluster network, NFS exports).
import {join} from 'node:path'

import type {ClusterRecord} from '../../cluster/schema.js'
import {PACKAGE_ROOT} from '../../package-root.js'
import {runPlaybook} from '../../tools/ansible.js'
import type {Transport} from '../../transport/types.js'
import {playbookVars} from '../create/create-local.js'
import type {MachineLogin} from './machine-access.js'

export interface JoinedMachine {
  name: string
  login: MachineLogin
  /** The slurmd package version to pin ("" = the distribution's). */
  slurmPackage: string
  shared: 'nfs' | 'none'
}

export interface PlaybookRun {
  transport: Transport
  /** citc's package on the management node (its playbooks/). */
  packageRoot: string
  /** The variables every citc playbook gets (provider, cluster_name, …). */
  baseVars: Record<string, unknown>
  /** A directory of this run's own on the management node (inventory, variables). */
  workDir: string
  logFile: string
  signal?: AbortSignal
  onTask?: (name: string) => void
}

/** A run of the joined-machine playbooks for a workflow step: its task line shows the task running. */
export function playbookRunFor(ctx: {transport: Transport; record: ClusterRecord; workDir: string; log: string; signal: AbortSignal}, task: {output: string}): PlaybookRun {
  return {
    transport: ctx.transport,
    packageRoot: PACKAGE_ROOT,
    baseVars: playbookVars(ctx.record, PACKAGE_ROOT),
    workDir: ctx.workDir,
    logFile: ctx.log,
    signal: ctx.signal,
    onTask: (name) => {
      task.output = name
    },
  }
}

/**
 * The INI inventory: one line per machine, its login and its own variables — only those no play sets
 * (a play's vars win over the inventory's; what a run sets for all, shared_mode, goes in extra vars).
 */
export function inventory(machines: JoinedMachine[]): string {
  const lines = ['[joined]']
  for (const m of machines) {
    const l = m.login
    lines.push(
      [
        l.host,
        `ansible_port=${l.port}`,
        `ansible_user=${l.user}`,
        `ansible_ssh_private_key_file=${l.keyPath}`,
        `joined_name=${m.name}`,
        `joined_address=${l.host}`,
        `slurm_version=${m.slurmPackage || '""'}`,
        ...(l.user === 'root' ? [] : ['ansible_become=true']),
      ].join(' '),
    )
  }
  return lines.join('\n') + '\n'
}

/** Ansible's ssh: the pinned keys only, a changed key refused, only the given key offered. */
export const sshCommonArgs = (knownHosts: string) =>
  `-o StrictHostKeyChecking=yes -o UserKnownHostsFile=${knownHosts} -o GlobalKnownHostsFile=/dev/null -o IdentitiesOnly=yes -o BatchMode=yes`

/** node.yml (join) or node-remove.yml (release) on the machines. */
export async function runMachinesPlaybook(
  run: PlaybookRun,
  playbook: 'node.yml' | 'node-remove.yml',
  machines: JoinedMachine[],
  vars: Record<string, unknown>,
): Promise<void> {
  const t = run.transport
  const inv = `${run.workDir}/${playbook}.inventory`
  const varsFile = `${run.workDir}/${playbook}.vars.json`
  await t.writeFile(inv, inventory(machines), {mode: 0o600})
  const knownHosts = machines[0]?.login.knownHosts
  if (new Set(machines.map((m) => m.shared)).size > 1) throw new Error('internal: one playbook run takes machines of one shared mode')
  const all = {...run.baseVars, ...vars, shared_mode: machines[0]?.shared ?? 'none', ansible_ssh_common_args: sshCommonArgs(knownHosts ?? '/dev/null')}
  await t.writeFile(varsFile, JSON.stringify(all, null, 2), {mode: 0o600})
  await runPlaybook(t, {
    playbookPath: join(run.packageRoot, 'playbooks', playbook),
    extraVarsPath: varsFile,
    inventory: inv,
    connection: 'ssh',
    // citc pins the keys itself (UserKnownHostsFile above): Ansible must not switch checking off.
    env: {ANSIBLE_HOST_KEY_CHECKING: 'True'},
    logFile: run.logFile,
    signal: run.signal,
    onTask: run.onTask,
    timeoutMs: 30 * 60_000,
  })
}

/** joined-management.yml on the management node: what the joined machines need of it. */
export async function runManagementPlaybook(run: PlaybookRun, vars: {joined_addresses: string[]; controller_addr: string; shared_mode: 'nfs' | 'none'}): Promise<void> {
  const varsFile = `${run.workDir}/joined-management.vars.json`
  await run.transport.writeFile(varsFile, JSON.stringify({...run.baseVars, ...vars}, null, 2), {mode: 0o600})
  await runPlaybook(run.transport, {
    playbookPath: join(run.packageRoot, 'playbooks', 'joined-management.yml'),
    extraVarsPath: varsFile,
    logFile: run.logFile,
    signal: run.signal,
    onTask: run.onTask,
    timeoutMs: 15 * 60_000,
  })
}
