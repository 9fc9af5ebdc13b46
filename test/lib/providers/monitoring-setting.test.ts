// `citc create --no-monitoring` (issue #21): what the record keeps, and what the management playbook is told.
import {describe, expect, it} from 'vitest'

import {CLOUD_OUTPUTS} from '../../helpers/cloud-records.js'
import {cloudPlaybookVars} from '../../../src/lib/providers/cloud-playbook-vars.js'
import {monitoringOn, monitoringSettings} from '../../../src/lib/providers/monitoring-setting.js'
import {playbookVars} from '../../../src/lib/tasks/create/create-local.js'

describe('monitoring setting', () => {
  it('only --no-monitoring is recorded; a record without it (made before #21) has monitoring', () => {
    expect(monitoringSettings(false)).toEqual({monitoring: 'off'})
    expect(monitoringSettings(true)).toEqual({})
    expect(monitoringSettings(undefined)).toEqual({})
    expect(monitoringOn({})).toBe(true)
    expect(monitoringOn({settings: {suspendTime: 60}})).toBe(true)
    expect(monitoringOn({settings: monitoringSettings(false)})).toBe(false)
  })

  it('the management playbook gets citc_monitoring from the record, local and cloud', () => {
    const local = {name: 'a', provider: 'local', createdAt: '', origin: 'created', mgmt: {host: 'localhost', user: 'root', port: 22}, slurm: {}} as unknown as Parameters<typeof playbookVars>[0]
    expect(playbookVars(local, '/pkg').citc_monitoring).toBe(true)
    expect(playbookVars({...local, settings: {monitoring: 'off'}}, '/pkg').citc_monitoring).toBe(false)
    const cloud = {name: 'b', provider: 'aws', origin: 'created' as const, mgmt: {user: 'ubuntu'}, terraform: {outputs: CLOUD_OUTPUTS.aws('b')}}
    expect(cloudPlaybookVars(cloud).citc_monitoring).toBe(true)
    expect(cloudPlaybookVars({...cloud, settings: {monitoring: 'off'}}).citc_monitoring).toBe(false)
  })
})
