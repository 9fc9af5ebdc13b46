// What finish's plan says changes, from two generated slurm.conf files (the real generator).
import {describe, expect, it} from 'vitest'

import {planFinish} from '../../../src/lib/slurm/plan.js'
import {generateFromLimits} from '../../../src/lib/tasks/finish/generate-config.js'

const conf = (provider: 'local' | 'aws', limitsText: string) => generateFromLimits({provider, clusterId: 't', limitsText, limitsFile: 'limits.yaml'}).generated
const plan = (provider: 'local' | 'aws', before: string, after: string) => {
  const b = conf(provider, before)
  const a = conf(provider, after)
  return planFinish({currentConf: b.slurmConf, newConf: a.slurmConf, currentGres: b.gresConf, newGres: a.gresConf, confPath: '/etc/slurm/slurm.conf'})
}

describe('planFinish', () => {
  it('local: growing two groups adds nodes and redefines none (each shape keeps its own ports)', () => {
    const p = plan('local', 'local.small: 2\nlocal.medium: 2\n', 'local.small: 3\nlocal.medium: 3\n')
    expect(p.addedNodes).toBe('t-local-medium-0003,t-local-small-0003')
    expect(p.removedNodes).toBe('')
    expect(p.redefinedNodes).toEqual([])
    expect(p.needsRestart).toBe(true)
  })

  it('a changed definition together with a changed count: the nodes that stay are redefined', () => {
    const p = plan('aws', 'shapes:\n  c5.xlarge: 3\n', 'shapes:\n  c5.xlarge:\n    count: 4\n    features: [nvme]\n')
    expect(p.addedNodes).toBe('t-c5-xlarge-0004')
    expect(p.redefinedNodes).toEqual(['t-c5-xlarge-[0001-0003]'])
    const shrink = plan('aws', 'shapes:\n  c5.xlarge: 3\n', 'shapes:\n  c5.xlarge:\n    count: 2\n    features: [nvme]\n')
    expect(shrink.removedNodes).toBe('t-c5-xlarge-0003')
    expect(shrink.redefinedNodes).toEqual(['t-c5-xlarge-[0001-0002]'])
  })

  it('the same limits: nothing changes', () => {
    const p = plan('aws', 'c5.xlarge: 3\n', 'c5.xlarge: 3\n')
    expect(p.changed).toBe(false)
    expect(p.redefinedNodes).toEqual([])
  })
})
