// The registry: one list of provider modules, and what is derived from it.
import {readdirSync} from 'node:fs'
import {describe, expect, it} from 'vitest'

import {TEMPLATES_DIR} from '../../../src/lib/providers/cloud.js'
import {CLOUD_PROVIDER_NAMES, cloudModule, isCloud, PROVIDER_MODULES, PROVIDER_NAMES, providerModule} from '../../../src/lib/providers/registry.js'

describe('provider registry', () => {
  it('lists each provider once, local first; the clouds are those with a cloud part', () => {
    expect(new Set(PROVIDER_NAMES).size).toBe(PROVIDER_NAMES.length)
    expect(PROVIDER_NAMES).toEqual(['local', 'aws', 'google', 'oracle'])
    expect(CLOUD_PROVIDER_NAMES).toEqual(PROVIDER_MODULES.filter((m) => m.cloud).map((m) => m.name))
    expect(isCloud('aws')).toBe(true)
    expect(isCloud('local')).toBe(false)
    expect(() => providerModule('azure')).toThrow(/no provider module named azure/)
    expect(() => cloudModule('local')).toThrow(/has no cloud part/)
  })

  it('every cloud has its Terraform templates (templates/terraform/<name>/)', () => {
    const dirs = readdirSync(`${TEMPLATES_DIR}terraform`)
    for (const name of CLOUD_PROVIDER_NAMES) expect(dirs, name).toContain(name)
  })

  it('node drivers are imported when asked for: every provider has one', async () => {
    for (const m of PROVIDER_MODULES) expect(typeof (await m.nodeDriver()), m.name).toBe('function')
  })

  it('every provider has an image builder, imported when asked for', async () => {
    for (const m of PROVIDER_MODULES) expect(typeof (await m.imageBuilder()), m.name).toBe('function')
  })

  it('only oracle places nodes in numbered availability domains', () => {
    expect(PROVIDER_MODULES.filter((m) => m.availabilityDomains).map((m) => m.name)).toEqual(['oracle'])
  })

  it("a cloud's flags are declared once per module; every string flag becomes a --config key", async () => {
    const {clusterConfigSchema} = await import('../../../src/lib/tasks/create/config-file.js')
    const keys = Object.keys(clusterConfigSchema.shape)
    for (const m of PROVIDER_MODULES) {
      for (const [flag, spec] of Object.entries(m.cloud?.flags ?? {})) if (spec.kind === 'string') expect(keys, `${m.name} --${flag}`).toContain(flag)
    }
  })

  it('sweepers name their tool before anything is imported', () => {
    const settings = {region: 'r', mgmtShape: 's'}
    const ctx = {clusterId: 'lab', region: 'r', env: {}}
    expect(CLOUD_PROVIDER_NAMES.map((p) => cloudModule(p).cloud.sweeper(ctx, settings).tool)).toEqual(CLOUD_PROVIDER_NAMES.map((p) => cloudModule(p).cloud.sweepTool.tool))
  })
})
