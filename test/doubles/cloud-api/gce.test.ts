// The Compute Engine TEST DOUBLE itself (test/doubles/cloud-api/gce.ts), where the driver's tests do not
// reach: its request throttle (for the resume-burst benchmark), boot delay, and refusal of callers
// without a token the fake metadata server issued.
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import {googleComputeApi} from '../../../src/lib/providers/google/compute-api.js'
import {classifyGoogleError} from '../../../src/lib/providers/google/failures.js'
import {startFakeGce} from './gce.js'
import {startFakeMetadata, type FakeMetadata} from './gce-metadata.js'

let metadata: FakeMetadata
beforeAll(async () => {
  vi.stubEnv('GOOGLE_APPLICATION_CREDENTIALS', '')
  vi.stubEnv('HOME', '/nonexistent')
  metadata = await startFakeMetadata()
  // google-auth-library finds its metadata server only here (src/lib/stand-in.ts).
  vi.stubEnv('GCE_METADATA_HOST', new URL(metadata.url).host)
})
afterAll(async () => {
  await metadata.close()
  vi.unstubAllEnvs()
})

const launch = () => ({token: crypto.randomUUID(), imageId: 'img', userData: '#!/bin/sh\n'})

describe('fake Compute Engine', () => {
  it('throttles inserts beyond its bucket with 403 rateLimitExceeded (throttled, never capacity)', async () => {
    const gce = await startFakeGce({metadata, rateLimit: {perSecond: 0.001, burst: 2}})
    try {
      const api = googleComputeApi({cluster: 'demo', project: gce.project, zone: gce.zone, subnetwork: 's', networkTag: 't', endpoints: {api: gce.url, metadata: metadata.url}})
      await api.create({name: 'demo-a-1', shape: 'e2-small'}, launch())
      await api.create({name: 'demo-a-2', shape: 'e2-small'}, launch())
      const e = await api.create({name: 'demo-a-3', shape: 'e2-small'}, launch()).catch((error: unknown) => error)
      expect(classifyGoogleError(e)).toMatchObject({class: 'throttled', code: 'rateLimitExceeded'})
      expect(gce.instances.map((i) => i.name)).toEqual(['demo-a-1', 'demo-a-2'])
    } finally {
      await gce.close()
    }
  })

  it('reports a launched instance pending until its boot time has passed', async () => {
    // A boot time far beyond the calls' own (a 200-ms one passed during them on a loaded machine), and
    // the boot's end made by moving the launch back rather than by waiting for it.
    const gce = await startFakeGce({metadata, bootMs: 60_000})
    try {
      const api = googleComputeApi({cluster: 'demo', project: gce.project, zone: gce.zone, subnetwork: 's', networkTag: 't', endpoints: {api: gce.url, metadata: metadata.url}})
      await api.create({name: 'demo-b-1', shape: 'e2-small'}, launch())
      gce.instances[0].tags = {cluster: 'demo', type: 'compute'}
      expect((await api.list()).map((i) => i.state)).toEqual(['pending'])
      gce.instances[0].launchedAt -= 60_000
      expect((await api.list()).map((i) => i.state)).toEqual(['running'])
    } finally {
      await gce.close()
    }
  })

  it("refuses a caller without the metadata server's token (401 authError) and one with a bad filter (400)", async () => {
    const gce = await startFakeGce({metadata})
    try {
      const base = `${gce.url}/compute/v1/projects/${gce.project}/zones/${gce.zone}/instances`
      const anonymous = await fetch(base)
      expect(anonymous.status).toBe(401)
      expect(((await anonymous.json()) as {error: {errors: Array<{reason: string}>}}).error.errors[0].reason).toBe('authError')
      const forged = await fetch(base, {headers: {authorization: 'Bearer not-issued'}})
      expect(forged.status).toBe(401)
      await googleComputeApi({cluster: 'demo', project: gce.project, zone: gce.zone, subnetwork: 's', networkTag: 't', endpoints: {api: gce.url, metadata: metadata.url}}).list()
      const bad = await fetch(`${base}?filter=${encodeURIComponent('name eq x')}`, {headers: {authorization: `Bearer ${metadata.tokens[0]}`}})
      expect(bad.status).toBe(400)
    } finally {
      await gce.close()
    }
  })
})
