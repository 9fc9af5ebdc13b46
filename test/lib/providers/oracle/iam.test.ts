// templates/terraform/oracle/iam.tf allows what the Oracle node driver calls (ORACLE_DRIVER_PERMISSIONS,
// beside the calls in oci-api.ts) and what Packer's oracle-oci build does, to the management node's
// dynamic group, in the cluster's compartment — read with HashiCorp's HCL parser (test/templates/hcl.ts).
import {join} from 'node:path'

import {beforeAll, describe, expect, it} from 'vitest'

import {TEMPLATES_DIR} from '../../../../src/lib/providers/cloud.js'
import {ORACLE_DRIVER_PERMISSIONS} from '../../../../src/lib/providers/oracle/oci-api.js'
import {loadModule, type TfModule} from '../../../templates/hcl.js'

/**
 * Packer's oracle-oci builder (templates/packer/cloud.pkr.hcl, use_instance_principals): launch the build
 * machine from the platform image in the subnet (instance, boot volume, VNIC), read its VNIC for the
 * private address (use_private_ip), CreateImage with freeform tags, terminate the build machine.
 */
const PACKER_PERMISSIONS = [
  {verb: 'manage', resource: 'instance-family', why: 'LaunchInstance, CreateImage (instance-images), TerminateInstance'},
  {verb: 'use', resource: 'volume-family', why: "the build machine's boot volume"},
  {verb: 'use', resource: 'virtual-network-family', why: "the build machine's VNIC, GetVnic for its private address"},
] as const

const VERBS = ['inspect', 'read', 'use', 'manage'] as const
type Verb = (typeof VERBS)[number]

interface Statement {
  subject: string
  verb: Verb
  resource: string
  where: string
}

/** "Allow dynamic-group X to <verb> <resource> in compartment id Y" → its parts (no conditions: citc writes none). */
function parseStatement(s: string): Statement {
  const m = /^Allow dynamic-group (\S+) to (inspect|read|use|manage) (\S+) in (.+)$/.exec(s)
  if (!m) throw new Error(`not a statement this test reads: ${s}`)
  return {subject: m[1]!, verb: m[2] as Verb, resource: m[3]!, where: m[4]!}
}

let mod: TfModule
let statements: Statement[]
beforeAll(async () => {
  mod = await loadModule(join(TEMPLATES_DIR, 'terraform', 'oracle'))
  const policies = mod.resources.filter((r) => r.type === 'oci_identity_policy')
  statements = policies.flatMap((p) => (p.body.statements as string[]).map(parseStatement))
})

/** A statement that grants at least this verb on this resource type, to the management node's group, in the cluster's compartment. */
const granted = (verb: Verb, resource: string) =>
  statements.some(
    (s) =>
      s.subject === '${oci_identity_dynamic_group.mgmt.name}' &&
      s.resource === resource &&
      VERBS.indexOf(s.verb) >= VERBS.indexOf(verb) &&
      s.where === 'compartment id ${var.compartment_ocid}',
  )

describe('oracle iam.tf', () => {
  it('the dynamic group holds the management node alone', () => {
    const dg = mod.resources.find((r) => r.address === 'oci_identity_dynamic_group.mgmt')
    expect(dg?.body.matching_rule).toBe("ALL {instance.id = '${oci_core_instance.mgmt.id}'}")
  })

  it.each(ORACLE_DRIVER_PERMISSIONS.map((p) => [p.verb, p.resource, p.why]))('allows the node driver to %s %s (%s)', (verb, resource) => {
    expect(granted(verb as Verb, resource)).toBe(true)
  })

  it.each(PACKER_PERMISSIONS.map((p) => [p.verb, p.resource, p.why]))("allows Packer's image build to %s %s (%s)", (verb, resource) => {
    expect(granted(verb, resource)).toBe(true)
  })

  it('grants nothing beyond what the driver and Packer need, and only in the compartment', () => {
    const needed = [...ORACLE_DRIVER_PERMISSIONS, ...PACKER_PERMISSIONS]
    for (const s of statements) {
      const top = Math.max(...needed.filter((n) => n.resource === s.resource).map((n) => VERBS.indexOf(n.verb)))
      expect(VERBS.indexOf(s.verb), `${s.verb} ${s.resource}`).toBeLessThanOrEqual(top)
      expect(s.where).toBe('compartment id ${var.compartment_ocid}')
    }
  })

  it('the policy lives in the compartment where the driver launches (the compartment_id output)', () => {
    const policy = mod.resources.find((r) => r.address === 'oci_identity_policy.node_programs')
    expect(policy?.body.compartment_id).toBe('${var.compartment_ocid}')
    expect(mod.outputs.compartment_id?.[0]?.value ?? mod.outputs.compartment_id?.value).toBe('${var.compartment_ocid}')
  })
})
