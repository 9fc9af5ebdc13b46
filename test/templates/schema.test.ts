// citc's Terraform templates against the providers' real schemas, offline (`terraform validate`
// would download the providers): every resource, data source and provider block's argument and block
// names, required arguments and blocks, resource types. The schemas are trimmed fixtures extracted
// from the published provider packages by test/templates/schemas/extract.ts (aws and google exactly,
// from the cdktf .jsii manifests; oracle approximately, from @pulumi/oci's declarations).
import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'
import {gunzipSync} from 'node:zlib'

import {parse} from '@cdktf/hcl2json'
import {describe, expect, it} from 'vitest'

import {checkFile, formatMistake, scan, type Schemas, type SchemaFile} from './schema-check.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const FIXTURES = join(ROOT, 'test/fixtures/terraform-schemas')
const TEMPLATES = join(ROOT, 'templates/terraform')

// Keyed by the provider's local name, the prefix of its resource types.
const schemas: Schemas = {}
for (const name of ['aws', 'google', 'oci', 'random']) {
  schemas[name] = JSON.parse(gunzipSync(readFileSync(join(FIXTURES, `${name}.json.gz`))).toString('utf8')) as SchemaFile
}

async function check(file: string, text: string): Promise<string[]> {
  return checkFile(file, text, await parse(file, text), schemas).map(formatMistake)
}

const clouds = readdirSync(TEMPLATES).filter((d) => statSync(join(TEMPLATES, d)).isDirectory())

describe('the schema fixtures', () => {
  it('hold whole providers, small enough to live in the repository', () => {
    const sizes = readdirSync(FIXTURES).map((f) => statSync(join(FIXTURES, f)).size)
    expect(sizes.reduce((a, b) => a + b, 0)).toBeLessThan(450 * 1024)
    // Every resource type, not only the templates' own: additions to the templates are checked too.
    expect(Object.keys(schemas.aws.resource).length).toBeGreaterThan(1500)
    expect(Object.keys(schemas.google.resource).length).toBeGreaterThan(1000)
    expect(Object.keys(schemas.oci.resource).length).toBeGreaterThan(900)
    expect(schemas.aws.resource.aws_iam_role.required).toEqual(['assume_role_policy'])
    expect(schemas.google.resource.google_compute_instance.blocks?.boot_disk.blocks?.initialize_params.args).toContain('image')
    expect(schemas.oci.approximate).toBeTruthy()
  })

  // The schemas' versions must be ones the templates allow, or the check is against the wrong provider.
  it.each(clouds)('are of provider versions templates/terraform/%s/versions.tf allows', async (cloud) => {
    const file = join(TEMPLATES, cloud, 'versions.tf')
    const required = (await parse(file, readFileSync(file, 'utf8'))).terraform[0].required_providers[0] as Record<string, {source: string; version: string}>
    expect(Object.keys(required).length).toBeGreaterThan(0)
    for (const [local, {source, version}] of Object.entries(required)) {
      const schema = schemas[local]
      expect(schema, `a schema fixture for ${local}`).toBeDefined()
      expect(source).toBe(schema.provider)
      if (schema.approximate) continue // @pulumi/oci's version is not the Terraform provider's
      expect(allows(version, schema.version), `${local} ${version} allows ${schema.version}`).toBe(true)
    }
  })
})

describe('the checker', () => {
  // One mistake of each kind, after the constructs a position finder could trip over (braces in
  // comments, strings, interpolations and heredocs; one-line blocks), so the line numbers prove it
  // kept its place.
  const BAD = `# a comment with { braces } and "quotes"
resource "aws_iam_role_policy" "x" {
  role  = "r" // }
  polcy = <<-EOT
    {"Statement": [\${jsonencode({ a = "}" })}]}
  EOT
}

resource "aws_security_group" "sg" {
  name = "a{" /* } */
  ingress { from_port = 22 }
  ingress {
    to_port = 22
    protocl = "tcp"
  }
  dynamic "egress" {
    for_each = [1]
    content {
      cidr_blocks = ["0.0.0.0/0"]
      bogus       = "\${"}"}"
    }
  }
  dynamic "nope" {
    for_each = []
    content {}
  }
  lifecycle {
    create_before_destroy = true
  }
  count = 1
}

resource "aws_instance" "i" {
  ami               = "ami-1"
  root_block_device = { volume_size = 8 }
  tags {
  }
  ebs_block_device {
    volume_size = 8
  }
}

data "aws_caller_identity" "me" {
  count = 1
  nope  = "x"
}

resource "aws_nonexistent_thing" "n" {}

resource "google_compute_instance" "g" {
  name = "g"
}

data "oci_core_images" "i" {
  filter {
    name   = "display_name"
    values = ["x"]
  }
  sort_by = "TIMECREATED"
}

resource "azurerm_thing" "a" {}

provider "aws" {
  regoin = "x"
  alias  = "two"
}
`

  it('reports each mistake with its file:line:column', async () => {
    expect(await check('bad.tf', BAD)).toEqual([
      'bad.tf:2:1: aws_iam_role_policy "x": missing required argument "policy"',
      'bad.tf:4:3: aws_iam_role_policy "x": unknown argument "polcy"',
      'bad.tf:14:5: aws_security_group "sg": ingress: unknown argument "protocl"',
      'bad.tf:20:7: aws_security_group "sg": dynamic "egress" content: unknown argument "bogus"',
      'bad.tf:23:3: aws_security_group "sg": dynamic "nope": unknown block type "nope"',
      'bad.tf:35:3: aws_instance "i": "root_block_device" is a block, not an argument (write root_block_device { … })',
      'bad.tf:36:3: aws_instance "i": "tags" is an argument, not a block (write tags = …)',
      'bad.tf:38:3: aws_instance "i": ebs_block_device: missing required argument "device_name"',
      'bad.tf:45:3: data.aws_caller_identity "me": unknown argument "nope"',
      'bad.tf:48:1: aws_nonexistent_thing "n": unknown resource type "aws_nonexistent_thing" (hashicorp/aws 6.25.0)',
      'bad.tf:50:1: google_compute_instance "g": missing required block "boot_disk"',
      'bad.tf:50:1: google_compute_instance "g": missing required argument "machine_type"',
      'bad.tf:50:1: google_compute_instance "g": missing required block "network_interface"',
      'bad.tf:54:1: data.oci_core_images "i": missing required argument "compartment_id"',
      'bad.tf:62:1: azurerm_thing "a": no schema for provider "azurerm"',
      'bad.tf:65:3: provider "aws": unknown argument "regoin"',
    ])
  })

  it('passes the same resources written correctly', async () => {
    const good = `resource "aws_iam_role_policy" "x" {
  role   = "r"
  policy = "{}"
}

resource "aws_security_group" "sg" {
  ingress {
    from_port = 22
  }
  egress = []
}

resource "aws_instance" "i" {
  ami = "ami-1"
  root_block_device {
    volume_size = 8
  }
  tags = { cluster = "x" }
}

data "oci_core_images" "i" {
  compartment_id = "c"
  filters {
    name   = "display_name"
    values = ["x"]
  }
}
`
    expect(await check('good.tf', good)).toEqual([])
  })

  it('reports it when its own scanner reads a file differently from hcl2json, rather than trusting either', async () => {
    const text = 'resource "aws_vpc" "v" {\n  cidr_block = "10.0.0.0/16"\n}\n'
    const other = await parse('other.tf', 'resource "aws_vpc" "v" {\n  cidr_block = "10.0.0.0/16"\n  tags = {}\n}\n')
    expect(checkFile('v.tf', text, other, schemas).map(formatMistake)).toEqual([
      `v.tf:1:1: the schema check's scanner reads this file differently from hcl2json: resource aws_vpc v.tags: in hcl2json, not found by the scanner`,
    ])
    const broken = 'resource "a" "b" {\n  x = "unterminated\n}\n'
    expect(() => scan(broken)).toThrow(/^2:20: newline in a string$/)
    expect(checkFile('b.tf', broken, {}, schemas).map(formatMistake)).toEqual([`b.tf:2:20: the schema check's scanner cannot read this: newline in a string`])
  })
})

describe.each(clouds)('templates/terraform/%s', (cloud) => {
  const dir = join(TEMPLATES, cloud)
  it.each(readdirSync(dir).filter((f) => f.endsWith('.tf')))('%s matches the providers\' schemas', async (name) => {
    const file = join(dir, name)
    expect(await check(relative(ROOT, file), readFileSync(file, 'utf8'))).toEqual([])
  })
})

// ---------------------------------------------------------------------------------------------

/** Does a Terraform version constraint (">= 5.0, < 7.0", "~> 6.1") allow this version? */
function allows(constraint: string, version: string): boolean {
  const parts = (v: string): number[] => v.split('.').map(Number)
  const cmp = (a: number[], b: number[]): number => {
    for (let i = 0; i < Math.max(a.length, b.length); i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0)
    return 0
  }
  const v = parts(version)
  return constraint.split(',').every((c) => {
    const m = /^\s*(>=|<=|>|<|=|!=|~>)?\s*([0-9.]+)\s*$/.exec(c)
    if (!m) throw new Error(`cannot read the version constraint ${JSON.stringify(c)}`)
    const [, op = '=', bound] = m
    const b = parts(bound)
    const d = cmp(v, b)
    switch (op) {
      case '>=':
        return d >= 0
      case '<=':
        return d <= 0
      case '>':
        return d > 0
      case '<':
        return d < 0
      case '!=':
        return d !== 0
      case '~>': // the last given part may grow: ~> 6.1 is >= 6.1, < 7.0
        return d >= 0 && cmp(v.slice(0, b.length - 1), b.slice(0, -1)) === 0
      default:
        return d === 0
    }
  })
}
