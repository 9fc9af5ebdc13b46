// The provider's section of cluster.json made from a cloud cluster's Terraform outputs (the playbook
// variable citc_node_driver); what the management playbook really writes from it is parsed in
// test/playbooks/management-contract.test.ts.
import {describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {nodeDriverVars} from '../../../src/lib/providers/node-driver-vars.js'

describe('nodeDriverVars', () => {
  it('local has no Terraform: an empty section (the driver keeps its defaults)', () => {
    expect(nodeDriverVars('local', {})).toEqual({})
  })

  it('a cloud whose outputs lack what its driver needs: an input error naming the fields, before the playbook', () => {
    let error: unknown
    try {
      nodeDriverVars('google', {region: 'europe-west2', zone: 'europe-west2-b'})
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CitcError)
    const e = error as CitcError
    expect(e.kind).toBe('invalidInput')
    expect(e.message).toMatch(/^the Terraform outputs of this google cluster do not give its node driver what it needs: /)
    expect(e.details?.fields).toEqual(expect.arrayContaining(['driver.project', 'driver.subnetwork', 'driver.serviceAccount', 'driver.baseImage.selfLink']))
    expect(e.hint).toContain('cluster.yaml')
  })
})
