// The steps local and cloud create share, once the management node can be reached: configure it with
// management.yml (journal step "playbook") and write slurm.conf from the limits (journal step "finish").
// Each create gives them a ManagementContext: root on its node (this machine, or over SSH) and where
// its playbook and variables are.
import {basename} from 'node:path'

import type {ClusterRecord} from '../../cluster/schema.js'
import {CitcError} from '../../errors.js'
import {Controller} from '../../slurm/controller.js'
import {PlaybookError, runPlaybook} from '../../tools/ansible.js'
import type {Transport} from '../../transport/types.js'
import {finishUnattended} from '../finish/apply-config.js'
import {requestFor} from '../finish/generate-config.js'
import type {Step, WorkflowContext} from '../workflow.js'

/** How management.yml is run: ansible-playbook through `transport`, with the files it names there. */
export interface PlaybookRun {
  /** Root on the node, without the command log (ansible-playbook's output has its own log). */
  transport: Transport
  playbookPath: string
  extraVarsPath: string
}

export interface ManagementContext extends WorkflowContext {
  /** The cluster as registered now (read again: earlier steps may have updated it). */
  record(): ClusterRecord
  /** Root on the management node, every command logged (a cloud create connects in an earlier step). */
  root(): Transport
  /** ansible-playbook's log in the cluster's logs/. */
  ansibleLog: string
  /** The node limits to apply; undefined: none were given (finish is skipped). */
  limits(): {file: string; text: string} | undefined
}

export interface ConfigureStepOptions<Ctx> {
  title: string
  /** Put the playbook and its variables where the node reads them. */
  prepare: (ctx: Ctx) => Promise<PlaybookRun> | PlaybookRun
  /** The step's title once the playbook succeeded. */
  done: (recap: {ok: number; changed: number; playbook: string}) => string
  /** A failed playbook as an error saying what failed (its last lines) and where to look; default: the PlaybookError itself. */
  explainFailure?: boolean
}

/** Configure the management node: management.yml, its current task as the step's output. */
export function configureManagementNode<Ctx extends ManagementContext>(o: ConfigureStepOptions<Ctx>): Step<Ctx> {
  return {
    title: o.title,
    journal: 'playbook',
    rendererOptions: {outputBar: 1},
    async run(ctx, task) {
      const {transport, playbookPath, extraVarsPath} = await o.prepare(ctx)
      try {
        const r = await runPlaybook(transport, {
          playbookPath,
          extraVarsPath,
          logFile: ctx.ansibleLog,
          onTask: (name) => {
            task.output = name
          },
          signal: ctx.signal,
        })
        const stats = Object.values(r.recap)[0]
        task.title = o.done({ok: stats?.ok ?? 0, changed: stats?.changed ?? 0, playbook: basename(playbookPath)})
      } catch (error) {
        if (o.explainFailure && error instanceof PlaybookError) throw playbookFailure(error, ctx.ansibleLog, ctx.record().name)
        throw error
      }
    },
  }
}

/** A failed playbook with the last lines of its output, and where to read the rest. */
export function playbookFailure(error: PlaybookError, ansibleLog: string, cluster: string): CitcError {
  const last = error.result.lastLines.slice(-8).map((l) => `  ${l}`).join('\n')
  return new CitcError('remote', `${error.message}${last ? `\nlast lines of its output:\n${last}` : ''}`, {
    hint: `read the failed task's output in ${ansibleLog}, fix the cause (on the node: \`citc ssh -c ${cluster}\`)`,
    details: error.details,
  })
}

/** slurm.conf from the limits, applied without a question (create has the go-ahead); slurmctld started. */
export function applyLimits<Ctx extends ManagementContext>(): Step<Ctx> {
  return {
    title: 'Write slurm.conf from the limits and start slurmctld (finish)',
    journal: 'finish',
    skip: (ctx) => (ctx.limits() ? false : 'no node limits given: set them later with `citc finish --limits limits.yaml`'),
    async run(ctx, task) {
      const record = ctx.record()
      const limits = ctx.limits()!
      const root = ctx.root()
      const controller = new Controller(root, {confPath: record.slurm.confPath, restartCommand: record.slurm.restartCommand})
      const {plan, result} = await finishUnattended({
        transport: root,
        controller,
        request: requestFor(record, limits.file, limits.text),
        signal: ctx.signal,
        report: (m) => {
          task.output = m
        },
      })
      task.title = plan.changed ? `Configuration applied (${result?.action})` : result ? `Configuration up to date; slurmctld ${result.action === 'restart' ? 'started with it' : 'runs it'}` : 'Configuration already up to date'
    },
  }
}
