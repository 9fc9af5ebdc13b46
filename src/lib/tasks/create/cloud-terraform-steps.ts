// Cloud create's Terraform steps: render the working directory, init, plan (the confirmation comes
// between plan and apply, in create-cloud.ts), apply exactly that plan, and read its outputs into
// cluster.yaml. The journal names (render, init, plan, apply-started, apply, outputs) are what
// existing clusters' --resume and destroy read: never rename one.
import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {readClusterKeys} from '../../cluster/keys.js'
import {cloudInputsFor} from '../../providers/cloud-cluster.js'
import {readClusterOutputs, renderTerraformDir} from '../../providers/cloud.js'
import {describePlan, type ResourceEvent} from '../../tools/terraform.js'
import type {Step} from '../workflow.js'
import type {CloudCreateContext} from './cloud-create-context.js'

export const PLAN_FILE = 'citc.tfplan'

/**
 * The journal step written just before `terraform apply` starts, and kept across a re-run's reset:
 * destroy trusts its absence to forget a cluster without Terraform (destroy/never-applied.ts).
 */
export const APPLY_STARTED = 'apply-started'

/** Terraform's last line as the step's output. */
const lastLine = (task: {output: string}) => (line: string) => {
  if (line.trim()) task.output = line.trim()
}

/** Rendered in every run: cluster.yaml and the templates are its sources, not the directory. */
export const renderTerraform: Step<CloudCreateContext> = {
  title: 'Render the Terraform working directory',
  journal: 'render',
  always: true,
  run: (ctx, task) => {
    const r = renderTerraformDir(ctx.paths.terraformDir, cloudInputsFor(ctx.record(), readClusterKeys(ctx.paths)))
    task.title = `Render the Terraform working directory (${r.files.length} files in ${ctx.paths.terraformDir})`
  },
}

/** init again unless an earlier run did it and its .terraform is still there. */
export const terraformInit: Step<CloudCreateContext> = {
  title: (ctx) => `${ctx.tool.binary} init`,
  journal: 'init',
  always: true,
  skip: (ctx) => {
    const done = ctx.doneEarlier('init')
    return done && existsSync(join(ctx.paths.terraformDir, '.terraform')) ? done : false
  },
  run: (ctx, task) => ctx.tf.init({signal: ctx.signal, onLine: lastLine(task)}),
}

/**
 * Once applied, a plan is not needed to continue; otherwise always plan afresh (a plan saved before
 * an interrupted apply would be stale). Journaled with the plan: --plan-only and the confirmation show it.
 */
export const terraformPlan: Step<CloudCreateContext> = {
  title: (ctx) => `${ctx.tool.binary} plan`,
  journal: 'plan',
  always: true,
  skip: (ctx) => ctx.doneEarlier('apply'),
  run: async (ctx, task) => {
    ctx.plan = await ctx.tf.plan(PLAN_FILE, {signal: ctx.signal, onLine: lastLine(task)})
    task.title = `${ctx.tool.binary} plan: ${describePlan(ctx.plan)}`
    return ctx.plan
  },
}

/** Exactly the plan confirmed; the resource being made as the step's output. Journaled with its summary. */
export const terraformApply: Step<CloudCreateContext> = {
  title: (ctx) => `${ctx.tool.binary} apply`,
  journal: 'apply',
  rendererOptions: {outputBar: 1},
  run: async (ctx, task) => {
    const onResource = (e: ResourceEvent) => {
      if (e.phase === 'start') task.output = `${e.address}: ${e.action === 'delete' ? 'destroying' : e.action === 'create' ? 'creating' : e.action}…`
      else if (e.phase === 'progress') task.output = `${e.address}: still ${e.action === 'create' ? 'creating' : e.action}… (${e.elapsedS ?? '?'} s)`
      else if (e.phase === 'complete') task.output = `${e.address}: done${e.elapsedS !== undefined ? ` after ${e.elapsedS} s` : ''}`
    }
    ctx.journal.markDone(APPLY_STARTED)
    const summary = await ctx.tf.apply(PLAN_FILE, onResource, {signal: ctx.signal})
    task.title = `${ctx.tool.binary} apply: ${summary.added} added, ${summary.changed} changed, ${summary.destroyed} destroyed`
    return summary
  },
}

/** The management node's address and login into cluster.yaml (a stand-in node's SSH port instead of 22). */
export const readOutputs: Step<CloudCreateContext> = {
  title: 'Read the Terraform outputs into cluster.yaml',
  journal: 'outputs',
  always: true,
  run: async (ctx, task) => {
    const o = readClusterOutputs(ctx.provider, await ctx.tf.output({signal: ctx.signal}))
    const port = ctx.opts.standIn?.sshPort ?? o.mgmt.port
    ctx.update((r) => {
      r.mgmt.host = o.mgmt.host
      r.mgmt.port = port
      r.mgmt.user = o.mgmt.user
      r.mgmt.hostname = o.mgmt.hostname
      r.mgmt.sudo = o.mgmt.user !== 'root'
      r.terraform = {outputs: o.all}
    })
    task.title = `Management node: ${o.mgmt.user}@${o.mgmt.host}${port !== 22 ? `:${port}` : ''}`
  },
}

/** Steps 1-2: up to the plan (the confirmation, or --plan-only, follows). */
export const PLAN_STEPS = [renderTerraform, terraformInit, terraformPlan]
