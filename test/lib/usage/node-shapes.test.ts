import {describe, expect, it} from 'vitest'

import {nodeShapeMap} from '../../../src/lib/usage/node-shapes.js'

describe('nodeShapeMap', () => {
  it('maps each node to its shape= feature and leaves out nodes without one', () => {
    const map = nodeShapeMap([
      {name: 'demo-c5-xlarge-0001', features: 'shape=c5.xlarge,arch=x86_64'},
      {name: 'demo-vm-standard2-1-ad2-0001', features: 'shape=VM.Standard2.1,ad=2,arch=x86_64,fastdisk'},
      {name: 'login', features: 'arch=x86_64'},
      {name: 'handmade'},
    ])
    expect([...map]).toEqual([
      ['demo-c5-xlarge-0001', 'c5.xlarge'],
      ['demo-vm-standard2-1-ad2-0001', 'VM.Standard2.1'],
    ])
  })
})
