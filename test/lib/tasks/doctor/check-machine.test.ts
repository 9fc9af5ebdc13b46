// `citc doctor` checks what each provider in scope needs: a provider's own tools come from its module
// (doctorTools), the clouds' Terraform, npm and sweep tool from their cloud part. Runs `which` and the
// tools' version output on this machine only (no network): the names are asserted, not the results.
import {describe, expect, it} from 'vitest'

import {providerModule} from '../../../../src/lib/providers/registry.js'
import {ALL_SCOPES, doctor} from '../../../../src/lib/tasks/doctor/check-machine.js'

describe('doctor', () => {
  it("checks a provider's own tools only when that provider is in scope", async () => {
    const own = (providerModule('local').doctorTools ?? []).map((t) => t.name)
    expect(own).toEqual(['ansible-playbook'])
    const local = await doctor(['local'])
    expect(local.tools.map((t) => t.name)).toEqual(['node', ...own, 'ssh', 'ssh-keygen'])
    const aws = await doctor(['aws'])
    expect(aws.tools.map((t) => t.name)).not.toContain('ansible-playbook')
    expect(aws.tools.map((t) => t.name)).toContain('aws')
  })

  it('covers every provider by default', () => {
    expect([...ALL_SCOPES]).toEqual(['local', 'aws', 'google', 'oracle'])
  })
})
