// Joined machines through finish's apply, on an in-memory management node (test/doubles/memory-transport.ts):
// never powered down, a restart then `scontrol reconfigure` when they change (configless slurmd get the
// new file only on reconfigure; a reconfigure alone after a NodeName line kills slurmctld 22.05.8), counted
// by the post-apply check; applyLimitsText writes the stored copy only once the cluster runs it.
import {mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {withStaticNode, withoutStaticNode} from '../../../../src/lib/config/limits-static-edit.js'
import {Controller} from '../../../../src/lib/slurm/controller.js'
import {expandHostlist} from '../../../../src/lib/slurm/hostlist.js'
import {describePlan} from '../../../../src/lib/slurm/plan.js'
import {applyLimitsText} from '../../../../src/lib/tasks/finish/apply-limits.js'
import {cloudRecord} from '../../../helpers/cloud-records.js'
import {MemoryTransport} from '../../../doubles/memory-transport.js'

const CONF = '/etc/slurm/slurm.conf'
const RESTART = ['restart-slurmctld']
const isSlurm = (argv: string[], ...words: string[]) => argv[0] === 'env' && argv[2] === 'scontrol' && words.every((w, i) => argv[3 + i] === w)
const record = {...cloudRecord('aws', 'mem'), slurm: {confPath: CONF, programsDir: '/usr/local/libexec/citc', restartCommand: RESTART}}

const dir = mkdtempSync(join(tmpdir(), 'citc-static-apply-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const WS1 = {
  name: 'ws1',
  address: '10.250.99.2',
  controller: '10.250.99.1',
  ssh: {user: 'root', port: 22, hostKey: 'SHA256:' + 'A'.repeat(43)},
  hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800},
  shared: 'nfs' as const,
}
const BASE = 'c5.xlarge: 2\n'
const WITH_WS1 = withStaticNode(BASE, WS1)

/** slurmctld as scripts: every node the query names is known (unless `unknown` says not), idle. */
function node(files: Record<string, string> = {}, unknown: (name: string) => boolean = () => false) {
  return new MemoryTransport({files, dirs: ['/etc/slurm']})
    .on((a) => isSlurm(a, 'ping'), {stdout: 'Slurmctld(primary) at mem-mgmt is UP\n'})
    .on((a) => isSlurm(a, 'show', 'hostnames'), {stdout: 'citc-validate\n'})
    .on((a) => isSlurm(a, 'show', 'node'), (argv) => ({
      stdout: expandHostlist(argv[5])
        .filter((n) => !unknown(n))
        .map((n) => `NodeName=${n} CPUTot=2 RealMemory=7000 State=${n.startsWith('ws') ? 'IDLE' : 'IDLE+CLOUD+POWERED_DOWN'} Partitions=compute\n`)
        .join(''),
    }))
    .on((a) => isSlurm(a, 'reconfigure'))
    .on((a) => isSlurm(a, 'update'))
    .on(RESTART)
}

async function applyText(t: MemoryTransport, limitsText: string, stored?: string) {
  const controller = new Controller(t, {confPath: CONF, restartCommand: RESTART})
  return applyLimitsText({transport: t, controller, record, limitsText, limitsFile: 'limits.yaml', storedLimitsPath: stored})
}

/** The node's slurm.conf after a first apply of `text`. */
async function installed(text: string): Promise<Record<string, string>> {
  const t = node()
  await applyText(t, text)
  return {[CONF]: t.text(CONF)!}
}

/** The restart, reconfigure and power-down commands, in order. */
const actions = (t: MemoryTransport) =>
  t
    .commands()
    .filter((a) => a[0] === RESTART[0] || isSlurm(a, 'reconfigure') || isSlurm(a, 'update'))
    .map((a) => (a[0] === RESTART[0] ? 'restart' : a.slice(3).join(' ')))

describe('joined machines through finish', () => {
  it('a machine added: restart, then reconfigure once slurmctld is up; the stored copy written (0600) after', async () => {
    const t = node(await installed(BASE))
    const stored = join(dir, 'added.yaml')
    const {plan, result} = await applyText(t, WITH_WS1, stored)
    expect(plan.staticNodes).toEqual({added: ['ws1'], removed: [], changed: []})
    expect(plan.addedNodes).toBe('')
    expect(plan.needsRestart).toBe(true)
    expect(result?.action).toBe('restart')
    expect(actions(t)).toEqual(['restart', 'reconfigure'])
    // The reconfigure comes after slurmctld answered again.
    const cmds = t.commands()
    const restart = cmds.findIndex((a) => a[0] === RESTART[0])
    const ping = cmds.findIndex((a, i) => i > restart && isSlurm(a, 'ping'))
    expect(ping).toBeLessThan(cmds.findIndex((a) => isSlurm(a, 'reconfigure')))
    expect(t.text(CONF)).toContain('NodeName=ws1 NodeAddr=10.250.99.2 ')
    expect(readFileSync(stored, 'utf8')).toBe(WITH_WS1)
    expect(statSync(stored).mode & 0o777).toBe(0o600)
    expect(describePlan(plan)).toContain('+ joined machine ws1')
    // SlurmctldHost's address is a setting the admin sees change; nothing was commented out.
    expect(describePlan(plan)).toContain('~ SlurmctldHost: mgmt → mgmt(10.250.99.1)')
    expect(plan.displacedSettings).toBe(false)
    expect(t.text(CONF)).toMatch(/^SlurmctldHost=mgmt\(10\.250\.99\.1\)$/m)
    // The same text again: nothing to do.
    const again = await applyText(t, WITH_WS1)
    expect(again.plan.changed).toBe(false)
    expect(again.result).toBeUndefined()
  })

  it('a machine that leaves is only dropped: never drained or powered down by finish', async () => {
    const t = node(await installed(WITH_WS1))
    const {plan, result} = await applyText(t, withoutStaticNode(WITH_WS1, 'ws1'))
    expect(plan.staticNodes.removed).toEqual(['ws1'])
    expect(plan.removedNodes).toBe('')
    expect(plan.removedNodeCount).toBe(0)
    expect(result?.poweredDown).toEqual([])
    expect(actions(t)).toEqual(['restart', 'reconfigure'])
    expect(t.text(CONF)).not.toContain('ws1')
    // Back to the provider's SlurmctldHost (aws: the name alone).
    expect(t.text(CONF)).toMatch(/^SlurmctldHost=mgmt$/m)
    expect(t.text(CONF)).toBe(await installed(BASE).then((f) => f[CONF]))
    expect(describePlan(plan).join('\n')).toMatch(/- joined machine ws1 leaves the configuration \(never powered down: citc node remove drains it/)
  })

  it('a changed machine line: restart and reconfigure, no power-down', async () => {
    const t = node(await installed(WITH_WS1))
    const {plan} = await applyText(t, withStaticNode(WITH_WS1, {...WS1, hardware: {...WS1.hardware, realMemory: 20000}}))
    expect(plan.staticNodes).toEqual({added: [], removed: [], changed: ['ws1']})
    expect(plan.redefinedNodes).toEqual([])
    expect(actions(t)).toEqual(['restart', 'reconfigure'])
  })

  it('elastic changes alone: no reconfigure after the restart', async () => {
    const t = node(await installed(WITH_WS1))
    await applyText(t, WITH_WS1.replace('c5.xlarge: 2', 'c5.xlarge: 3'))
    expect(actions(t)).toEqual(['restart'])
  })

  it('checks that slurmctld knows the joined machines too: one missing rolls back, the stored copy untouched', async () => {
    const before = await installed(BASE)
    const t = node(before, (n) => n === 'ws1')
    const stored = join(dir, 'unknown.yaml')
    const error = await applyText(t, WITH_WS1, stored).catch((e: unknown) => e)
    expect((error as Error).message).toContain('slurmctld knows 2 of the 3 configured nodes')
    expect(t.text(CONF)).toBe(before[CONF])
    expect(() => statSync(stored)).toThrow()
  })

  it('bad limits text: refused before anything is touched', async () => {
    const t = node(await installed(BASE))
    const error = await applyText(t, WITH_WS1.replace('address: 10.250.99.2', 'address: "no way"')).catch((e: unknown) => e)
    expect(error).toMatchObject({exitCode: 3})
    expect(t.calls).toEqual([])
  })
})
