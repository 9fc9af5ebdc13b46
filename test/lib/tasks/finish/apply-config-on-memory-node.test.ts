// finish's apply logic against an in-memory management node (test/doubles/memory-transport.ts):
// the order of upload, Slurm's check, backup, swap and restart, and what the node holds after each
// failure. The same steps against a real slurmctld over sshd are in test/e2e/finish-apply.test.ts.
import {describe, expect, it} from 'vitest'

import {CitcError} from '../../../../src/lib/errors.js'
import {Controller} from '../../../../src/lib/slurm/controller.js'
import {expandHostlist} from '../../../../src/lib/slurm/hostlist.js'
import {applyFinish, finishUnattended, readClusterState} from '../../../../src/lib/tasks/finish/apply-config.js'
import {generateAndPlan} from '../../../../src/lib/tasks/finish/generate-config.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const CONF = '/etc/slurm/slurm.conf'
const GRES = '/etc/slurm/gres.conf'
const NEXT = '/etc/slurm/.slurm.conf.citc-next'
const PENDING = '/etc/slurm/.slurm.conf.citc-pending'
const RESTART = ['restart-slurmctld']
const NOW = new Date('2026-11-21T12:00:00Z')
const STAMP = '20261121T120000Z'
const PROGRAMS = '/usr/local/libexec/citc'

const request = (limitsText: string) => ({provider: 'aws' as const, clusterId: 'mem', limitsText, limitsFile: 'limits.yaml'})
const slurm = (conf = CONF) => ['env', `SLURM_CONF=${conf}`, 'scontrol']
const isSlurm = (argv: string[], ...words: string[]) => argv[0] === 'env' && argv[2] === 'scontrol' && words.every((w, i) => argv[3 + i] === w)

/**
 * A node with slurmctld as scripts: ping answers UP while `up()`, `scontrol show node HOSTLIST`
 * lists those nodes in `state(name)`, Slurm's parser accepts every file, restart and reconfigure work.
 */
function node(files: Record<string, string> = {}, o: {up?: () => boolean; state?: (name: string) => string} = {}) {
  const up = o.up ?? (() => true)
  return new MemoryTransport({files, dirs: ['/etc/slurm']})
    .on((a) => isSlurm(a, 'ping'), () => (up() ? {stdout: 'Slurmctld(primary) at mem-mgmt is UP\n'} : {exitCode: 1, stderr: 'slurm_load_ctl_conf error'}))
    .on((a) => isSlurm(a, 'show', 'hostnames'), {stdout: 'citc-validate\n'})
    .on((a) => isSlurm(a, 'show', 'node'), (argv) => ({
      stdout: expandHostlist(argv[5])
        .map((n) => `NodeName=${n} Arch=x86_64 CPUTot=4 RealMemory=7000 State=${o.state?.(n) ?? 'IDLE+CLOUD+POWERED_DOWN'} Partitions=compute\n`)
        .join(''),
    }))
    .on((a) => isSlurm(a, 'reconfigure'))
    .on((a) => isSlurm(a, 'update'))
    .on(RESTART)
}

/** Generate for `limits` on the node as it is, and apply. */
async function apply(t: MemoryTransport, limits: string, more: {force?: boolean} = {}) {
  const controller = new Controller(t, {confPath: CONF, restartCommand: RESTART})
  const state = await readClusterState(t, controller, PROGRAMS)
  const {generated, plan} = generateAndPlan(state, request(limits), CONF)
  const run = () => applyFinish({transport: t, controller, plan, generated, state, force: more.force ?? false, now: () => NOW, controllerTimeoutS: 5, powerDownTimeoutS: 5})
  return {generated, plan, run}
}

/** What a first finish wrote for these limits: the node's slurm.conf and gres.conf before the change. */
async function installed(limits: string): Promise<{[CONF]: string; [GRES]: string}> {
  const t = node()
  await (await apply(t, limits)).run()
  return {[CONF]: t.text(CONF)!, [GRES]: t.text(GRES)!}
}

const changes = (t: MemoryTransport) => t.commands().filter((a) => ['mv', 'cp'].includes(a[0]) || a[0] === RESTART[0] || isSlurm(a, 'reconfigure'))

describe('finish on a node: the apply', () => {
  it('first finish: uploads beside the live file, has Slurm check it, swaps it in and restarts; no backup', async () => {
    const t = node({}, {up: () => t.exists(CONF)})
    const {generated, run} = await apply(t, 'c5.xlarge: 2\n')
    const result = await run()
    expect(result).toEqual({backup: undefined, action: 'restart', poweredDown: []})
    expect(t.text(CONF)).toBe(generated.slurmConf)
    expect(t.text(GRES)).toBe(generated.gresConf)
    expect(t.mode(CONF)).toBe(0o644)
    expect(t.paths()).toEqual([GRES, CONF])
    // Slurm's parser read the uploaded file before anything was moved into place.
    const cmds = t.commands()
    const checked = cmds.findIndex((a) => a.join(' ') === [...slurm(NEXT), 'show', 'hostnames', 'citc-validate'].join(' '))
    const swapped = cmds.findIndex((a) => a[0] === 'mv')
    expect(checked).toBeGreaterThanOrEqual(0)
    expect(checked).toBeLessThan(swapped)
    expect(changes(t).map((a) => a.join(' '))).toEqual([`mv -f /etc/slurm/.gres.conf.citc-next ${GRES}`, `mv -f ${NEXT} ${CONF}`, 'restart-slurmctld'])
    // The pending mark spans the renames and the restart: a finish killed in between leaves it.
    const calls = t.calls.map((c) => (c.op === 'writeFile' ? `write ${c.path}` : (c.argv?.join(' ') ?? c.op)))
    const marked = calls.indexOf(`write ${PENDING}`)
    expect(marked).toBeGreaterThanOrEqual(0)
    expect(marked).toBeLessThan(calls.indexOf(`mv -f /etc/slurm/.gres.conf.citc-next ${GRES}`))
    expect(calls.indexOf(`rm -f ${PENDING}`)).toBeGreaterThan(calls.indexOf('restart-slurmctld'))
  })

  it('a partition setting only: backs up, then scontrol reconfigure (no restart)', async () => {
    const before = await installed('shapes:\n  c5.xlarge: 2\npartitions:\n  compute: {default: true, maxTime: "1:00:00"}\n')
    const t = node(before)
    const {plan, generated, run} = await apply(t, 'shapes:\n  c5.xlarge: 2\npartitions:\n  compute: {default: true, maxTime: "2:00:00"}\n')
    expect(plan.changed).toBe(true)
    expect(plan.needsRestart).toBe(false)
    const result = await run()
    expect(result).toEqual({backup: `/etc/slurm/backups/slurm.conf.${STAMP}`, action: 'reconfigure', poweredDown: []})
    expect(t.text(`/etc/slurm/backups/slurm.conf.${STAMP}`)).toBe(before[CONF])
    expect(t.text(CONF)).toBe(generated.slurmConf)
    expect(t.commands().some((a) => a[0] === RESTART[0])).toBe(false)
  })

  it('Slurm rejects the generated file: nothing is changed, the uploads are removed', async () => {
    const before = await installed('c5.xlarge: 2\n')
    const t = node(before).on((a) => isSlurm(a, 'show', 'hostnames'), {exitCode: 1, stderr: 'scontrol: error: Parse error in file'})
    const {run} = await apply(t, 'c5.xlarge: 3\n')
    const error = await run().catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect(error).toMatchObject({exitCode: 4, message: "Slurm rejects the generated slurm.conf; nothing was changed:\nscontrol: error: Parse error in file"})
    expect(t.text(CONF)).toBe(before[CONF])
    expect(t.paths()).toEqual([GRES, CONF])
    expect(changes(t)).toEqual([])
  })

  it('slurmctld does not take the new file: the previous one is restored, slurmctld restarted with it, the rejected one kept', async () => {
    const before = await installed('c5.xlarge: 2\n')
    const t = node(before).once(RESTART, {exitCode: 1, stderr: 'slurmctld: fatal: Invalid node'})
    const {run} = await apply(t, 'c5.xlarge: 3\n')
    const error = (await run().catch((e: unknown) => e)) as CitcError
    expect(error).toBeInstanceOf(CitcError)
    expect(error.exitCode).toBe(4)
    expect(error.message).toContain('the new configuration did not take: command failed on the memory node (exit 1): restart-slurmctld')
    expect(error.message).toContain(`The previous slurm.conf was restored from /etc/slurm/backups/slurm.conf.${STAMP} and slurmctld is running it again.`)
    expect(error.hint).toContain(`${CONF}.rejected-${STAMP}`)
    expect(t.text(CONF)).toBe(before[CONF])
    expect(t.text(`${CONF}.rejected-${STAMP}`)).toContain('NodeName=mem-c5-xlarge-[0001-0003]')
    expect(t.text(GRES)).toBe(before[GRES])
    // And slurmctld was started again, with the restored file.
    expect(t.commands().filter((a) => a[0] === RESTART[0])).toHaveLength(2)
  })

  it('nodes that leave while running jobs: refused without --force (exit 3), nothing changed', async () => {
    const before = await installed('c5.xlarge: 4\n')
    const t = node(before, {state: (n) => (n.endsWith('0004') ? 'ALLOCATED+CLOUD' : 'IDLE+CLOUD+POWERED_DOWN')})
    const {plan, run} = await apply(t, 'c5.xlarge: 2\n')
    expect(plan.removedNodes).toBe('mem-c5-xlarge-[0003-0004]')
    const error = await run().catch((e: unknown) => e)
    expect(error).toMatchObject({exitCode: 3, message: '1 node(s) leaving or changing in the configuration are running jobs: mem-c5-xlarge-0004'})
    expect((error as CitcError).hint).toMatch(/--force/)
    expect(t.text(CONF)).toBe(before[CONF])
    expect(t.paths()).toEqual([GRES, CONF])
    expect(t.commands().some((a) => isSlurm(a, 'update'))).toBe(false)
  })

  it('with --force, the busy node is drained and powered down before the swap', async () => {
    const before = await installed('c5.xlarge: 4\n')
    let poweredDown = false
    const t = node(before, {state: (n) => (n.endsWith('0004') && !poweredDown ? 'ALLOCATED+CLOUD' : 'IDLE+CLOUD+POWERED_DOWN')})
    t.on((a) => isSlurm(a, 'update'), (argv) => {
      if (argv.includes('State=POWER_DOWN_FORCE')) poweredDown = true
      return {}
    })
    const {run} = await apply(t, 'c5.xlarge: 2\n', {force: true})
    expect((await run()).poweredDown).toEqual(['mem-c5-xlarge-0004'])
    const updates = t.commands().filter((a) => isSlurm(a, 'update')).map((a) => a.slice(4).join(' '))
    expect(updates).toEqual(['NodeName=mem-c5-xlarge-0004 State=DRAIN Reason=citc finish: removed from limits.yaml', 'NodeName=mem-c5-xlarge-0004 State=POWER_DOWN_FORCE'])
    const cmds = t.commands()
    const firstMove = cmds.findIndex((a) => a[0] === 'mv')
    const lastUpdate = cmds.length - 1 - [...cmds].reverse().findIndex((a) => isSlurm(a, 'update'))
    expect(firstMove).toBeGreaterThan(0)
    expect(lastUpdate).toBeLessThan(firstMove)
  })
})

describe('finishUnattended (create)', () => {
  it('nothing to change, slurmctld down (the machine restarted): starts it, writes nothing', async () => {
    const before = await installed('c5.xlarge: 2\n')
    let started = false
    const t = node(before, {up: () => started})
    t.on(RESTART, () => {
      started = true
      return {}
    })
    const controller = new Controller(t, {confPath: CONF, restartCommand: RESTART})
    const r = await finishUnattended({transport: t, controller, request: request('c5.xlarge: 2\n')})
    expect(r.plan.changed).toBe(false)
    expect(r.result).toEqual({action: 'restart', poweredDown: []})
    expect(started).toBe(true)
    expect(t.calls.some((c) => c.op === 'writeFile')).toBe(false)
    expect(t.text(CONF)).toBe(before[CONF])
  })

  it('a finish killed after its renames (its pending mark left, slurmctld running the old files): the next one restarts slurmctld and removes the mark and the uploads', async () => {
    const before = await installed('c5.xlarge: 2\n')
    const t = node({...before, [PENDING]: `${STAMP}\n`, [NEXT]: 'half an upload'})
    const controller = new Controller(t, {confPath: CONF, restartCommand: RESTART})
    const state = await readClusterState(t, controller, PROGRAMS)
    expect(state.interrupted).toBe(true)
    const r = await finishUnattended({transport: t, controller, request: request('c5.xlarge: 2\n')})
    expect(r.plan.changed).toBe(false)
    expect(r.result).toEqual({action: 'restart', poweredDown: []})
    expect(t.commands().some((a) => a[0] === RESTART[0])).toBe(true)
    expect(t.paths()).toEqual([GRES, CONF])
    expect(t.text(CONF)).toBe(before[CONF])
  })

  it('nothing to change, slurmctld up, nothing pending: no restart', async () => {
    const before = await installed('c5.xlarge: 2\n')
    const t = node(before)
    const controller = new Controller(t, {confPath: CONF, restartCommand: RESTART})
    const r = await finishUnattended({transport: t, controller, request: request('c5.xlarge: 2\n')})
    expect(r.result).toBeUndefined()
    expect(t.commands().some((a) => a[0] === RESTART[0] || isSlurm(a, 'reconfigure'))).toBe(false)
  })

  it('names citc’s PrologSlurmctld only where the node has it installed (one missing would requeue every job)', async () => {
    const bare = node()
    await (await apply(bare, 'c5.xlarge: 1\n')).run()
    expect(bare.text(CONF)).not.toMatch(/^PrologSlurmctld=/m)
    const withProlog = node().put(`${PROGRAMS}/prolog-slurmctld`, '#!/bin/sh\n', 0o755)
    await (await apply(withProlog, 'c5.xlarge: 1\n')).run()
    expect(withProlog.text(CONF)).toMatch(new RegExp(`^PrologSlurmctld=${PROGRAMS}/prolog-slurmctld$`, 'm'))
  })
})
