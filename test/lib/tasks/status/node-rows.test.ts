// One table for every kind of node. The scontrol lines are real `scontrol show node --oneliner --all`
// output of slurmctld 22.05.8: static "joined" lines (Features=static) — one registered and idle, one
// whose slurmd registered with less than configured (INVALID_REG), one whose slurmd never registered
// (its munge key differed) — and elastic lines of the local provider.
import {describe, expect, it} from 'vitest'

import {findingsByNode, parseControllerLog} from '../../../../src/lib/slurm/controller-log.js'
import {parseNodeStates} from '../../../../src/lib/slurm/controller.js'
import {isJoined, nodeRows} from '../../../../src/lib/tasks/status/node-rows.js'
import {nodeTable} from '../../../../src/lib/tasks/status/node-table.js'

const idle =
  'NodeName=ws1 Arch=x86_64 CoresPerSocket=2  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=2.95 AvailableFeatures=static ActiveFeatures=static Gres=(null) NodeAddr=10.250.99.2 NodeHostName=ws1 Version=22.05.8 OS=Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=1000 AllocMem=0 FreeMem=21743 Sockets=1 Boards=1 State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=2026-11-25T22:09:16 SlurmdStartTime=2026-11-26T01:16:19 LastBusyTime=2026-11-26T01:16:19 CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s'
const tooSmall =
  'NodeName=ws2 Arch=x86_64 CoresPerSocket=8  CPUAlloc=0 CPUEfctv=8 CPUTot=8 CPULoad=2.93 AvailableFeatures=static ActiveFeatures=static Gres=(null) NodeAddr=10.250.99.3 NodeHostName=ws2 Version=22.05.7 OS=Linux 6.18.44-fc-v595 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=900000 AllocMem=0 FreeMem=22100 Sockets=1 Boards=1 State=UNKNOWN+DRAIN+INVALID_REG ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=2026-11-25T22:09:16 SlurmdStartTime=2026-11-26T01:16:19 LastBusyTime=Unknown CfgTRES=cpu=8,mem=900000M,billing=8 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=Low socket*core*thread count, Low CPUs, Low RealMemory (reported:24105 < 100.00% of configured:900000) [root@2026-11-26T01:16:19]'
const neverRegistered =
  'NodeName=ws3 CoresPerSocket=2  CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=N/A AvailableFeatures=static,bigmem ActiveFeatures=static,bigmem Gres=(null) NodeAddr=10.250.99.4 NodeHostName=ws3  RealMemory=1000 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1 State=UNKNOWN+NOT_RESPONDING ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=None SlurmdStartTime=None LastBusyTime=Unknown CfgTRES=cpu=2,mem=1000M,billing=2 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s'
const elasticUp =
  'NodeName=e2e-local-small-0001 Arch=x86_64 CoresPerSocket=1  CPUAlloc=1 CPUEfctv=1 CPUTot=1 CPULoad=2.37 AvailableFeatures=shape=local.small,arch=x86_64 ActiveFeatures=shape=local.small,arch=x86_64 Gres=(null) NodeAddr=127.0.0.1 NodeHostName=e2e-local-small-0001 Port=17001 Version=22.05.8 OS=Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)  RealMemory=512 AllocMem=0 FreeMem=22710 Sockets=1 Boards=1 State=ALLOCATED+CLOUD ThreadsPerCore=1 TmpDisk=0 Weight=66 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=2026-11-21T05:27:17 SlurmdStartTime=2026-11-21T05:27:18 LastBusyTime=Unknown CfgTRES=cpu=1,mem=512M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s'
const elasticDown =
  'NodeName=e2e-local-small-0004 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A AvailableFeatures=shape=local.small,arch=x86_64 ActiveFeatures=shape=local.small,arch=x86_64 Gres=(null) NodeAddr=127.0.0.1 NodeHostName=e2e-local-small-0004 Port=17004  RealMemory=512 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1 State=IDLE+CLOUD+POWERING_DOWN ThreadsPerCore=1 TmpDisk=0 Weight=66 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=None SlurmdStartTime=None LastBusyTime=Unknown CfgTRES=cpu=1,mem=512M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=citc: start failed: slurmd exited at start: Address already in use [root@2026-11-21T05:28:45]'

const wrongKey = `[2026-11-26T01:16:20.445] error: Munge decode failed: Invalid credential
[2026-11-26T01:16:20.445] error: slurm_unpack_received_msg: [[10.250.99.4]:51358] auth_g_verify: REQUEST_CONFIG has authentication error: Unspecified error
[2026-11-26T01:16:20.455] error: slurm_receive_msg [10.250.99.4:51358]: Unspecified error`

const states = parseNodeStates([elasticUp, elasticDown, idle, tooSmall, neverRegistered].join('\n'))
const findings = findingsByNode(parseControllerLog(wrongKey), states.filter(isJoined))
const rows = nodeRows(states, {provider: 'local', cluster: 'lab', controllerVersion: '22.05.8', findings})
const byName = Object.fromEntries(rows.map((r) => [r.name, r]))

describe('nodeRows', () => {
  it('gives elastic nodes the provider as kind and nothing else new', () => {
    expect(byName['e2e-local-small-0001']).toEqual({name: 'e2e-local-small-0001', kind: 'local', state: 'ALLOCATED+CLOUD', power: 'up', shape: 'local.small', cpus: 1, realMemory: 512, partitions: 'compute'})
    expect(byName['e2e-local-small-0004']).toMatchObject({kind: 'local', power: 'powering-down', reason: 'citc: start failed: slurmd exited at start: Address already in use'})
    expect(byName['e2e-local-small-0004']).not.toHaveProperty('hint')
  })

  it('a joined machine that registered: address, version, hardware accepted, seen now, no hint', () => {
    expect(byName.ws1).toEqual({
      name: 'ws1',
      kind: 'joined',
      state: 'IDLE',
      power: 'up',
      cpus: 2,
      realMemory: 1000,
      partitions: 'compute',
      address: '10.250.99.2',
      version: '22.05.8',
      versionMismatch: false,
      hardware: {cpus: {configured: 2}, memory: {configured: 1000}, registration: 'accepted', low: []},
      lastSeen: {at: 'now', from: 'responding'},
    })
  })

  it('a machine that registered less: Slurm’s reason kept, registered memory from it, the version flagged, what to do', () => {
    expect(byName.ws2).toMatchObject({
      kind: 'joined',
      reason: 'Low socket*core*thread count, Low CPUs, Low RealMemory (reported:24105 < 100.00% of configured:900000)',
      version: '22.05.7',
      versionMismatch: true,
      hardware: {cpus: {configured: 8}, memory: {configured: 900000, registered: 24105}, registration: 'refused', low: ['cpus', 'memory']},
      // refused, but its slurmd answers
      lastSeen: {at: 'now', from: 'responding'},
    })
    expect(byName.ws2).not.toHaveProperty('reasonFrom')
    expect(byName.ws2.hint).toMatch(/registered less than its slurm.conf line says \(cpus and memory.*citc node remove ws2 -c lab.*citc node add 10\.250\.99\.3 --name ws2 -c lab.*; its slurmd is 22\.05\.7, the controller 22\.05\.8/)
  })

  it('last seen: the later of SlurmdStartTime and LastBusyTime once it stops answering', () => {
    const [row] = nodeRows(parseNodeStates(idle.replace('State=IDLE', 'State=IDLE+NOT_RESPONDING').replace('LastBusyTime=2026-11-26T01:16:19', 'LastBusyTime=2026-11-26T03:00:00')), {provider: 'local', cluster: 'lab'})
    expect(row.lastSeen).toEqual({at: '2026-11-26T03:00:00', from: 'LastBusyTime'})
  })

  it('a machine that never registered: the munge failure from its address is its reason, with the fix', () => {
    expect(byName.ws3).toMatchObject({
      kind: 'joined',
      state: 'UNKNOWN+NOT_RESPONDING',
      address: '10.250.99.4',
      reason: 'slurmctld refused REQUEST_CONFIG from 10.250.99.4: munge "Invalid credential" (last at 2026-11-26T01:16:20.445)',
      reasonFrom: 'slurmctld log',
      hardware: {registration: 'none', low: []},
      lastSeen: {at: 'never', from: 'none'},
      hint: "the machine's munge key differs from the cluster's: run `citc node add 10.250.99.4 --name ws3 -c lab` again (it copies the cluster's key)",
    })
    expect(byName.ws3).not.toHaveProperty('version')
  })

  it('keeps Slurm’s own reason when it says something, and the log’s only for a machine that is not working', () => {
    const drained = parseNodeStates(neverRegistered.replace('State=UNKNOWN+NOT_RESPONDING', 'State=IDLE+DRAIN') + ' Reason=disk swap [root@2026-11-26T01:00:00]')
    const [row] = nodeRows(drained, {provider: 'local', cluster: 'lab', findings: findingsByNode(parseControllerLog(wrongKey), drained)})
    expect(row.reason).toBe('disk swap')
    expect(row).not.toHaveProperty('hint')
    const fine = parseNodeStates(idle.replace('10.250.99.2', '10.250.99.4'))
    const [ok] = nodeRows(fine, {provider: 'local', cluster: 'lab', findings: findingsByNode(parseControllerLog(wrongKey), fine)})
    expect(ok).not.toHaveProperty('reason')
  })

  it('not responding, with no munge failure: where slurmctld could not reach it, and what to check', () => {
    const down = parseNodeStates(neverRegistered.replace('State=UNKNOWN+NOT_RESPONDING', 'State=DOWN+NOT_RESPONDING') + ' Reason=Not responding [slurm@2026-11-26T02:10:00]')
    const [row] = nodeRows(down, {provider: 'local', cluster: 'lab', findings: findingsByNode(parseControllerLog('[2026-11-26T02:09:59.000] error: Nodes ws[1-3] not responding, setting DOWN'), down)})
    expect(row).toMatchObject({
      reason: 'slurmctld gets no answer from its slurmd at 10.250.99.4 (last at 2026-11-26T02:09:59.000)',
      reasonFrom: 'slurmctld log',
      hint: 'check that the machine is up, that slurmd runs on it, and that its port 6818 (slurmd) is open to the management node',
    })
  })

  it('says clocks, not keys, when munge said the credential expired', () => {
    const [row] = nodeRows(parseNodeStates(neverRegistered), {
      provider: 'aws',
      cluster: 'lab',
      findings: findingsByNode(parseControllerLog(wrongKey.replace('Invalid credential', 'Expired credential')), parseNodeStates(neverRegistered)),
    })
    expect(row.hint).toMatch(/clock differs/)
  })

  it('a CLOUD node is elastic even if someone gave it the feature static', () => {
    const [row] = nodeRows(parseNodeStates(elasticDown.replace('AvailableFeatures=shape=local.small,arch=x86_64', 'AvailableFeatures=static')), {provider: 'aws', cluster: 'lab'})
    expect(row.kind).toBe('aws')
  })
})

describe('nodeTable', () => {
  it('elastic only: the kind column is the one change', () => {
    expect(nodeTable(rows.filter((r) => r.kind !== 'joined'))).toMatchInlineSnapshot(`
      "NODE                  KIND   STATE                     SHAPE        CPUS  MEMORY  REASON
      e2e-local-small-0001  local  ALLOCATED+CLOUD           local.small  1     512M
      e2e-local-small-0004  local  IDLE+CLOUD+POWERING_DOWN  local.small  1     512M    citc: start failed: slurmd exited at start: Address already in use"
    `)
  })

  it('with joined machines: address, version and last seen columns, then what to do', () => {
    expect(nodeTable(rows)).toMatchSnapshot()
  })

  it('says when there are no nodes', () => {
    expect(nodeTable([])).toBe('(no nodes)')
  })
})
