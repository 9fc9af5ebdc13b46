import {spawnSync} from 'node:child_process'
import {describe, expect, it} from 'vitest'

import {nodeFromUserData, nodeUserData} from '../../../src/lib/providers/node-user-data.js'

describe('compute node user-data', () => {
  const script = nodeUserData({node: 'demo-c5-xlarge-0001', sharedDir: '/mnt/shared', mgmtPrivateIp: '10.0.1.2'})

  it('is a shell script sh accepts, naming the node slurmd starts as', async () => {
    expect(script.startsWith('#!/bin/sh\n')).toBe(true)
    expect(spawnSync('sh', ['-n'], {input: script}).status).toBe(0)
    expect(script).toContain('SLURMD_OPTIONS=\\"-N $NODE\\"')
    await expect(script).toMatchFileSnapshot('__snapshots__/node-user-data.sh')
  })

  it('gives the node name back to whoever reads it (the fake clouds boot it as a local node)', () => {
    expect(nodeFromUserData(script)).toBe('demo-c5-xlarge-0001')
    expect(nodeFromUserData('#!/bin/sh\necho hi\n')).toBeUndefined()
  })

  it('refuses anything that could break out of the script', () => {
    expect(() => nodeUserData({node: 'x; rm -rf /', sharedDir: '/mnt/shared', mgmtPrivateIp: '10.0.0.1'})).toThrow(/not a node name/)
    expect(() => nodeUserData({node: 'demo-1', sharedDir: '/mnt/$(id)', mgmtPrivateIp: '10.0.0.1'})).toThrow(/not a plain absolute path/)
    expect(() => nodeUserData({node: 'demo-1', sharedDir: '/mnt/shared', mgmtPrivateIp: '10.0.0.1 ; id'})).toThrow(/not an IP address/)
  })
})
