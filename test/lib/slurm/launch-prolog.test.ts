// citc's PrologSlurmctld in slurm.conf: named in the managed block, a site's own kept and chained,
// a change planned as a restart (slurmctld reads the key only when it starts).
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {InvalidInputError} from '../../../src/lib/errors.js'
import {planFinish} from '../../../src/lib/slurm/plan.js'
import {CHAINED_PROLOG_PREFIX, DISPLACED_PREFIX, sitePrologSlurmctld} from '../../../src/lib/slurm/render.js'
import {generateFromLimits} from '../../../src/lib/tasks/finish/generate-config.js'

const OURS = '/usr/local/libexec/citc/prolog-slurmctld'
const dir = mkdtempSync(join(tmpdir(), 'citc-prolog-conf-'))
afterAll(() => rmSync(dir, {recursive: true, force: true}))

const gen = (limitsText: string, more: {current?: string; launchProlog?: boolean} = {}) =>
  generateFromLimits({
    provider: 'aws',
    clusterId: 't',
    limitsText,
    limitsFile: 'limits.yaml',
    current: more.current,
    elastic: more.launchProlog === undefined ? undefined : {launchProlog: more.launchProlog},
  }).generated

function scontrolConfig(conf: string): string {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.conf`)
  writeFileSync(file, conf)
  const r = spawnSync('scontrol', ['show', 'hostnames', 'x'], {env: {...process.env, SLURM_CONF: file}, encoding: 'utf8'})
  if (r.error) throw new Error(`scontrol is needed for this test: ${r.error.message}`)
  return r.status === 0 ? '' : r.stderr || 'scontrol failed'
}

describe('PrologSlurmctld in the managed block', () => {
  it('names citc’s prolog, and Slurm accepts the file', () => {
    const g = gen('c5.xlarge: 2\n')
    expect(g.block).toContain(`PrologSlurmctld=${OURS}\n`)
    expect(g.block).not.toContain(CHAINED_PROLOG_PREFIX)
    expect(scontrolConfig(g.slurmConf)).toBe('')
  })

  it('chains limits.yaml’s slurm: PrologSlurmctld instead of refusing it', () => {
    const g = gen('shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: /etc/slurm/site-prolog.sh\n')
    expect(g.block).toContain(`PrologSlurmctld=${OURS}\n${CHAINED_PROLOG_PREFIX}/etc/slurm/site-prolog.sh\n`)
    expect(g.block.match(/^PrologSlurmctld=/gm)).toHaveLength(1)
    expect(scontrolConfig(g.slurmConf)).toBe('')
  })

  it('keeps a PrologSlurmctld the cluster’s slurm.conf already runs, commented out and chained, on every later finish', () => {
    const current = 'ClusterName=t\nSlurmctldHost=t-mgmt\nPrologSlurmctld=/opt/site/prolog\n'
    const first = gen('c5.xlarge: 1\n', {current})
    expect(first.slurmConf).toContain(`${DISPLACED_PREFIX}PrologSlurmctld=/opt/site/prolog\n`)
    expect(first.block).toContain(`${CHAINED_PROLOG_PREFIX}/opt/site/prolog\n`)
    const again = gen('c5.xlarge: 2\n', {current: first.slurmConf})
    expect(again.block).toContain(`${CHAINED_PROLOG_PREFIX}/opt/site/prolog\n`)
    expect(again.slurmConf.match(/^PrologSlurmctld=/gm)).toHaveLength(1)
  })

  it('without citc’s prolog installed (a registered cluster), names the site’s own directly, or none', () => {
    expect(gen('c5.xlarge: 1\n', {launchProlog: false}).block).not.toContain('PrologSlurmctld')
    const g = gen('c5.xlarge: 1\n', {launchProlog: false, current: 'ClusterName=t\nPrologSlurmctld=/opt/site/prolog\n'})
    expect(g.block).toContain('PrologSlurmctld=/opt/site/prolog\n')
    expect(g.block).not.toContain(CHAINED_PROLOG_PREFIX)
  })

  it('reads a quoted value as Slurm does, keeps a list, and never chains citc’s own prolog (it would start itself again and again)', () => {
    const dir = '/usr/local/libexec/citc'
    expect(sitePrologSlurmctld('PrologSlurmctld="/etc/slurm/x.sh"\n', dir)).toBe('/etc/slurm/x.sh')
    expect(sitePrologSlurmctld('PrologSlurmctld=/a.sh,/b.sh\n', dir)).toBe('/a.sh,/b.sh')
    expect(sitePrologSlurmctld(`PrologSlurmctld=//usr/local/libexec/citc/./prolog-slurmctld,/b.sh\n`, dir)).toBe('/b.sh')
    expect(gen(`shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: ${OURS}\n`).block).not.toContain(CHAINED_PROLOG_PREFIX)
    const both = gen('shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: /a.sh,/b.sh\n')
    expect(both.block).toContain(`${CHAINED_PROLOG_PREFIX}/a.sh,/b.sh\n`)
  })

  it('finds the site’s program, never citc’s own', () => {
    expect(sitePrologSlurmctld(undefined, '/usr/local/libexec/citc')).toBeUndefined()
    expect(sitePrologSlurmctld(`PrologSlurmctld=${OURS}\n`, '/usr/local/libexec/citc')).toBeUndefined()
    expect(sitePrologSlurmctld('prologslurmctld=/a/b\n', '/usr/local/libexec/citc')).toBe('/a/b')
    expect(sitePrologSlurmctld(`${DISPLACED_PREFIX}PrologSlurmctld=/c\n`, '/usr/local/libexec/citc')).toBe('/c')
    // One chained from limits.yaml lives only in the block: not the cluster's own.
    expect(sitePrologSlurmctld(`# STARTNODES\n${CHAINED_PROLOG_PREFIX}/d\n# ENDNODES\n`, '/usr/local/libexec/citc')).toBeUndefined()
  })

  it('refuses a PrologSlurmctld that is not one absolute path, at its place in limits.yaml', () => {
    let error: unknown
    try {
      gen('shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: "prolog.sh,other.sh"\n')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).problems).toEqual([
      {where: 'limits.yaml:4:3', path: 'slurm.PrologSlurmctld', message: expect.stringMatching(/^PrologSlurmctld must be the absolute path of a program/)},
    ])
  })
})

describe('planning a PrologSlurmctld change', () => {
  const plan = (before: string, after: string) =>
    planFinish({currentConf: before, newConf: after, currentGres: '', newGres: '', confPath: '/etc/slurm/slurm.conf'})

  it('restarts slurmctld when citc’s prolog first appears (reconfigure does not load it)', () => {
    const before = gen('c5.xlarge: 1\n', {launchProlog: false})
    const after = gen('c5.xlarge: 1\n', {current: before.slurmConf})
    const p = plan(before.slurmConf, after.slurmConf)
    expect(p.settings).toEqual([{key: 'PrologSlurmctld', before: undefined, after: OURS}])
    expect(p.needsRestart).toBe(true)
  })

  it('drops a site program that limits.yaml no longer names', () => {
    const before = gen('shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: /a\n')
    const after = gen('shapes:\n  c5.xlarge: 1\n', {current: before.slurmConf})
    expect(after.block).not.toContain(CHAINED_PROLOG_PREFIX)
    expect(plan(before.slurmConf, after.slurmConf).settings).toEqual([{key: 'PrologSlurmctld (site program citc runs)', before: '/a', after: undefined}])
  })

  it('shows a changed site program, which needs no restart (citc’s prolog reads it at every job)', () => {
    const before = gen('shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: /a\n')
    const after = gen('shapes:\n  c5.xlarge: 1\nslurm:\n  PrologSlurmctld: /b\n', {current: before.slurmConf})
    const p = plan(before.slurmConf, after.slurmConf)
    expect(p.settings).toEqual([{key: 'PrologSlurmctld (site program citc runs)', before: '/a', after: '/b'}])
    expect(p.needsRestart).toBe(false)
  })
})
