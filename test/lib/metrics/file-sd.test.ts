import {mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {fileSdTargets, NODES_FILE, renderFileSd, writeNodesFile} from '../../../src/lib/metrics/file-sd.js'
import {parseNodeStates} from '../../../src/lib/slurm/controller.js'
import {nodeLine, scontrolNodes} from './fixtures.js'

const nodes = parseNodeStates(scontrolNodes)
/** tst-small-0001 as it is once its slurmd registered from 10.0.0.7 (cloud_reg_addrs). */
const registered = parseNodeStates(nodeLine('tst-small-0001').replace('State=IDLE+CLOUD+NOT_RESPONDING+POWERING_UP', 'State=IDLE+CLOUD').replace('NodeAddr=tst-small-0001', 'NodeAddr=10.0.0.7'))[0]

describe("nodes.json (Prometheus's file_sd)", () => {
  it('lists only powered-on nodes, with their address, port and labels', () => {
    expect(fileSdTargets([...nodes, registered], 9100)).toEqual([
      {targets: ['10.0.0.7:9100'], labels: {node: 'tst-small-0001', partition: 'compute', shape: 'local.small'}},
    ])
  })

  it('leaves out starting, stopping, stop_pending and off nodes, and the joined machine (no node_exporter of citc on it)', () => {
    // The capture holds every one of those and one joined machine that is on.
    expect(fileSdTargets(nodes, 9100)).toEqual([])
  })

  it('is empty when the provider runs no node_exporter on its nodes (no port)', () => {
    expect(fileSdTargets([registered], undefined)).toEqual([])
    expect(renderFileSd([])).toBe('[]\n')
  })

  it('brackets an IPv6 address', () => {
    const v6 = {...registered, address: 'fd00::7'}
    expect(fileSdTargets([v6], 9100)[0].targets).toEqual(['[fd00::7]:9100'])
  })

  it('is written whole as JSON Prometheus reads, mode 0644, nothing left behind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'citc-file-sd-'))
    try {
      const second = {...registered, name: 'tst-small-0000', address: '10.0.0.6'}
      expect(writeNodesFile(dir, [registered, second], 9100)).toBe(2)
      const file = join(dir, NODES_FILE)
      expect(JSON.parse(readFileSync(file, 'utf8')).map((g: {labels: {node: string}}) => g.labels.node)).toEqual(['tst-small-0000', 'tst-small-0001'])
      expect(statSync(file).mode & 0o777).toBe(0o644)
      expect(readdirSync(dir)).toEqual([NODES_FILE])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
