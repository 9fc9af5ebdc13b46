// The management node's policy (templates/terraform/aws/iam.tf, data.aws_iam_policy_document.
// node_programs) read with HashiCorp's HCL parser, as plain statements for assertions. Expressions stay
// as Terraform wrote them ("${var.cluster_id}"): the tests compare against those, not evaluated values.
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {parse} from '@cdktf/hcl2json'

export interface PolicyStatement {
  sid: string
  actions: string[]
  resources: string[]
  /** Condition variable → its values (every condition here is StringEquals: checked on read). */
  conditions: Record<string, string[]>
}

const IAM_TF = join(import.meta.dirname, '../../../../templates/terraform/aws/iam.tf')

export async function awsPolicyStatements(): Promise<PolicyStatement[]> {
  const parsed = await parse(IAM_TF, readFileSync(IAM_TF, 'utf8'))
  const doc = parsed.data?.aws_iam_policy_document?.node_programs?.[0]
  if (!doc) throw new Error(`${IAM_TF} has no data "aws_iam_policy_document" "node_programs"`)
  return (doc.statement as Array<Record<string, unknown>>).map((s) => {
    if (s.effect !== undefined && s.effect !== 'Allow') throw new Error(`statement ${String(s.sid)} is not an Allow: this reader does not handle Deny`)
    const conditions: Record<string, string[]> = {}
    for (const c of (s.condition ?? []) as Array<{test: string; variable: string; values: string[]}>) {
      if (c.test !== 'StringEquals') throw new Error(`statement ${String(s.sid)}: condition ${c.test} is not read by this test (StringEquals only)`)
      if (conditions[c.variable]) throw new Error(`statement ${String(s.sid)}: ${c.variable} twice`)
      conditions[c.variable] = c.values
    }
    return {sid: String(s.sid ?? ''), actions: s.actions as string[], resources: s.resources as string[], conditions}
  })
}
