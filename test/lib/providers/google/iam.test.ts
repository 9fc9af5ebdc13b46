// The Google node programs' custom role (templates/terraform/google/iam.tf, read with HashiCorp's HCL
// parser) against what citc's calls need: every permission the node driver's REST calls need
// (compute-api.ts) and the Packer image build's (image-builder.ts) is granted, and nothing else.
import {join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {TEMPLATES_DIR} from '../../../../src/lib/providers/cloud.js'
import {GOOGLE_NODE_PERMISSIONS} from '../../../../src/lib/providers/google/compute-api.js'
import {GOOGLE_IMAGE_BUILD_PERMISSIONS} from '../../../../src/lib/providers/google/image-builder.js'
import {loadModule, type TfModule} from '../../../templates/hcl.js'

let mod: TfModule
let granted: string[]
beforeAll(async () => {
  mod = await loadModule(join(TEMPLATES_DIR, 'terraform', 'google'))
  const role = mod.resources.find((r) => r.address === 'google_project_iam_custom_role.node_programs')
  granted = (role?.body.permissions ?? []) as string[]
})

describe("the Google node programs' role", () => {
  it.each(GOOGLE_NODE_PERMISSIONS.map((p) => [p.permission, p.call]))('grants %s (node driver: %s)', (permission) => {
    expect(granted).toContain(permission)
  })

  it.each(GOOGLE_IMAGE_BUILD_PERMISSIONS.map((p) => [p.permission, p.call]))('grants %s (Packer: %s)', (permission) => {
    expect(granted).toContain(permission)
  })

  it('grants nothing beyond the two lists, once each', () => {
    const needed = new Set([...GOOGLE_NODE_PERMISSIONS, ...GOOGLE_IMAGE_BUILD_PERMISSIONS].map((p) => p.permission))
    expect([...granted].sort()).toEqual([...needed].sort())
    expect(new Set(granted).size).toBe(granted.length)
  })

  it('does not grant what the driver was designed not to need', () => {
    for (const p of ['compute.zoneOperations.list', 'compute.instances.bulkInsert', 'iam.serviceAccounts.actAs', 'compute.instances.setServiceAccount', 'compute.subnetworks.useExternalIp', 'compute.images.delete']) {
      expect(granted).not.toContain(p)
    }
  })
})
