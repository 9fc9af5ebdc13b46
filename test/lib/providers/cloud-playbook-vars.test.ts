// What management.yml gets about the shared filesystem on each cloud: AWS's management node mounts EFS
// its own way (Amazon's helper, tls,iam: the only client the file system policy lets be root), while
// the nodes' mount (shared_fs_*, also what compute.yml bakes into images) stays plain NFS.
import {describe, expect, it} from 'vitest'

import {cloudPlaybookVars} from '../../../src/lib/providers/cloud-playbook-vars.js'
import {cloudRecord} from '../../helpers/cloud-records.js'

describe('cloudPlaybookVars: the shared filesystem', () => {
  it('aws: the management node mounts efs with tls,iam; the nodes keep the plain NFS mount', () => {
    const vars = cloudPlaybookVars(cloudRecord('aws'))
    expect(vars).toMatchObject({
      mgmt_shared_fs_source: 'fs-0abc:/',
      mgmt_shared_fs_type: 'efs',
      mgmt_shared_fs_mount_options: 'tls,iam,mounttargetip=10.0.0.20,_netdev',
      shared_fs_host: '10.0.0.20',
      shared_fs_type: 'nfs',
    })
  })

  it('google and oracle: no management-node mount of its own (the role mounts as the nodes do)', () => {
    for (const provider of ['google', 'oracle'] as const) {
      const keys = Object.keys(cloudPlaybookVars(cloudRecord(provider)))
      expect(keys.filter((k) => k.startsWith('mgmt_shared_fs_'))).toEqual([])
      expect(keys).toContain('shared_fs_host')
    }
  })
})
