import {describe, expect, it} from 'vitest'

import {isBusy, isPoweredUp, parseNodeStates} from '../../../src/lib/slurm/controller.js'

// Real `scontrol show node --oneliner` lines from Slurm 22.05: a node that has registered carries
// its kernel's uname (with spaces and '#'), and Reason runs to the end of the line.
const registered =
  'NodeName=e2e-local-small-0001 Arch=x86_64 CoresPerSocket=1  CPUAlloc=1 CPUEfctv=1 CPUTot=1 CPULoad=2.37 AvailableFeatures=shape=local.small,arch=x86_64 ActiveFeatures=shape=local.small,arch=x86_64 Gres=(null) NodeAddr=127.0.0.1 NodeHostName=e2e-local-small-0001 Port=17001 Version=22.05.8 OS=Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)  RealMemory=512 AllocMem=0 FreeMem=22710 Sockets=1 Boards=1 State=ALLOCATED+CLOUD ThreadsPerCore=1 TmpDisk=0 Weight=66 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=2026-11-21T05:27:17 SlurmdStartTime=2026-11-21T05:27:18 LastBusyTime=Unknown CfgTRES=cpu=1,mem=512M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s'
const failed =
  'NodeName=e2e-local-small-0004 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=N/A AvailableFeatures=shape=local.small,arch=x86_64 ActiveFeatures=shape=local.small,arch=x86_64 Gres=(null) NodeAddr=127.0.0.1 NodeHostName=e2e-local-small-0004 Port=17004  RealMemory=512 AllocMem=0 FreeMem=N/A Sockets=1 Boards=1 State=IDLE+CLOUD+POWERING_DOWN ThreadsPerCore=1 TmpDisk=0 Weight=66 Owner=N/A MCS_label=N/A Partitions=compute  BootTime=None SlurmdStartTime=None LastBusyTime=Unknown CfgTRES=cpu=1,mem=512M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s ExtSensorsWatts=0 ExtSensorsTemp=n/s Reason=citc: start failed: slurmd exited at start: Address already in use [root@2026-11-21T05:28:45]'

describe('parseNodeStates', () => {
  it('reads a registered node whose OS field has spaces and a #', () => {
    const [n] = parseNodeStates(registered)
    expect(n).toMatchObject({name: 'e2e-local-small-0001', state: ['ALLOCATED', 'CLOUD'], cpus: 1, realMemory: 512, partitions: 'compute'})
    expect(n.features).toBe('shape=local.small,arch=x86_64')
    expect(isBusy(n)).toBe(true)
    expect(isPoweredUp(n)).toBe(true)
  })

  it('reads the reason to the end of the line, without the user/time suffix', () => {
    const [n] = parseNodeStates(failed)
    expect(n.state).toEqual(['IDLE', 'CLOUD', 'POWERING_DOWN'])
    expect(n.reason).toBe('citc: start failed: slurmd exited at start: Address already in use')
    expect(isPoweredUp(n)).toBe(false)
    expect(isBusy(n)).toBe(false)
  })

  it('reads where and when: NodeAddr, NodeHostName, Port, Version, SlurmdStartTime; "None"/"Unknown" times are absent', () => {
    const [up] = parseNodeStates(registered)
    expect(up).toMatchObject({address: '127.0.0.1', hostName: 'e2e-local-small-0001', port: 17001, version: '22.05.8', slurmdStartTime: '2026-11-21T05:27:18'})
    expect(up).not.toHaveProperty('lastBusyTime')
    const [down] = parseNodeStates(failed)
    expect(down).not.toHaveProperty('version')
    expect(down).not.toHaveProperty('slurmdStartTime')
  })
})
