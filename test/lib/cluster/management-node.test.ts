// How a cluster's management node is reached is its provider module's (managementNode): this machine
// for local, SSH for the clouds (a record without a management node yet is refused before any connection).
import {describe, expect, it} from 'vitest'

import {connectManagement, managedHere} from '../../../src/lib/cluster/management-node.js'
import {PENDING_HOST, type ClusterRecord} from '../../../src/lib/cluster/schema.js'

const record = (provider: string, host = 'localhost'): ClusterRecord =>
  ({name: 'x', provider, createdAt: '2026-01-01T00:00:00Z', origin: 'created', mgmt: {host, port: 22, user: 'root'}, slurm: {confPath: '/etc/slurm/slurm.conf'}}) as ClusterRecord

describe('the management node', () => {
  it('is this machine for local only', () => {
    expect(['local', 'aws', 'google', 'oracle'].filter((p) => managedHere({provider: p}))).toEqual(['local'])
  })

  it('runs commands here for a local cluster', async () => {
    const t = await connectManagement(record('local'))
    try {
      expect((await t.run(['sh', '-c', 'echo here'])).stdout.trim()).toBe('here')
    } finally {
      await t.close()
    }
  })

  it('goes over SSH for a cloud cluster (refused while it does not exist yet)', async () => {
    await expect(connectManagement(record('aws', PENDING_HOST))).rejects.toThrow(/has no management node yet/)
  })
})
