// slurmctld's log, parsed for why a joined machine cannot join. The lines are real slurmctld 22.05.8
// output (a sandbox slurmctld, a slurmd whose munged had another key, a slurmd configured with more
// than the machine has); the REQUEST_CONFIG line is the same format as seen with a configless slurmd
// whose key differed (hybrid-notes §2), with the address a joined machine has.
import {describe, expect, it} from 'vitest'

import {findingsByNode, parseControllerLog} from '../../../src/lib/slurm/controller-log.js'

const wrongKeyRegistration = `[2026-11-26T01:10:47.068] error: Munge decode failed: Invalid credential
[2026-11-26T01:10:47.068] error: slurm_unpack_received_msg: [[localhost]:47522] auth_g_verify: MESSAGE_NODE_REGISTRATION_STATUS has authentication error: Unspecified error
[2026-11-26T01:10:47.068] error: slurm_unpack_received_msg: [[localhost]:47522] Protocol authentication error
[2026-11-26T01:10:47.078] error: slurm_receive_msg [127.0.0.1:47522]: Unspecified error`

const wrongKeyConfig = `[2026-11-26T02:00:01.100] error: Munge decode failed: Invalid credential
[2026-11-26T02:00:01.100] error: slurm_unpack_received_msg: [[10.250.99.2]:40112] auth_g_verify: REQUEST_CONFIG has authentication error: Unspecified error
[2026-11-26T02:00:01.100] error: slurm_unpack_received_msg: [[10.250.99.2]:40112] Protocol authentication error
[2026-11-26T02:00:01.110] error: slurm_receive_msg [10.250.99.2:40112]: Unspecified error`

const expired = `[2026-11-26T02:00:05.000] error: Munge decode failed: Expired credential
[2026-11-26T02:00:05.000] error: slurm_unpack_received_msg: [[ws2.lab]:40200] auth_g_verify: MESSAGE_NODE_REGISTRATION_STATUS has authentication error: Unspecified error
[2026-11-26T02:00:05.010] error: slurm_receive_msg [10.250.99.3:40200]: Unspecified error`

const differentConf =
  '[2024-02-12T17:57:04.216] error: Node ws1 appears to have a different slurm.conf than the slurmctld.  This could cause issues with communication and functionality.  Please review both files and make sure they are the same.  If this is expected ignore, and set DebugFlags=NO_CONF_HASH in your slurm.conf.'

describe('parseControllerLog', () => {
  it('reads a munge failure with the peer as logged, its numeric address from the next line by port, the RPC and munge’s words', () => {
    expect(parseControllerLog(wrongKeyRegistration)).toEqual([
      {
        time: '2026-11-26T01:10:47.068',
        cause: 'munge',
        peer: {host: 'localhost', address: '127.0.0.1', port: 47522},
        request: 'MESSAGE_NODE_REGISTRATION_STATUS',
        munge: 'Invalid credential',
      },
    ])
  })

  it('reads a different slurm.conf, a hostlist not responding, and now responding', () => {
    const log = [differentConf, '[2026-11-26T02:01:00.000] error: Nodes ws[1-2] not responding, setting DOWN', '[2026-11-26T02:02:00.000] Node ws1 now responding'].join('\n')
    expect(parseControllerLog(log)).toEqual([
      {time: '2024-02-12T17:57:04.216', cause: 'slurm-conf', nodes: ['ws1']},
      {time: '2026-11-26T02:01:00.000', cause: 'not-responding', nodes: ['ws1', 'ws2']},
      {time: '2026-11-26T02:02:00.000', cause: 'responding', nodes: ['ws1']},
    ])
  })

  it('ignores lines it does not know, and syslog lines have no time', () => {
    expect(parseControllerLog('[2026-11-26T01:10:46.751] slurmctld version 22.05.8 started on cluster pr\n\n')).toEqual([])
    expect(parseControllerLog('Nov 26 01:10:47 mgmt slurmctld[12]: error: Nodes ws1 not responding')).toEqual([{cause: 'not-responding', nodes: ['ws1']}])
  })
})

describe('findingsByNode', () => {
  const ws1 = {name: 'ws1', address: '10.250.99.2', hostName: 'ws1'}
  const ws2 = {name: 'ws2', address: '10.250.99.3', hostName: 'ws2'}

  it('gives a munge failure to the node whose address it came from, by the numeric line when the logged name is another', () => {
    const f = findingsByNode(parseControllerLog([wrongKeyConfig, expired].join('\n')), [ws1, ws2])
    expect(f.get('ws1')).toEqual({cause: 'munge', time: '2026-11-26T02:00:01.100', request: 'REQUEST_CONFIG', munge: 'Invalid credential'})
    expect(f.get('ws2')).toEqual({cause: 'munge', time: '2026-11-26T02:00:05.000', request: 'MESSAGE_NODE_REGISTRATION_STATUS', munge: 'Expired credential'})
  })

  it('prefers munge to not responding (it is the cause), and forgets what came before "now responding"', () => {
    const log = [wrongKeyConfig, '[2026-11-26T02:05:00.000] error: Nodes ws[1-2] not responding', differentConf.replace('ws1', 'ws2')].join('\n')
    const f = findingsByNode(parseControllerLog(log), [ws1, ws2])
    expect(f.get('ws1')?.cause).toBe('munge')
    expect(f.get('ws2')?.cause).toBe('slurm-conf')
    const healed = findingsByNode(parseControllerLog(`${log}\n[2026-11-26T02:06:00.000] Node ws1 now responding`), [ws1, ws2])
    expect(healed.has('ws1')).toBe(false)
    expect(healed.get('ws2')?.cause).toBe('slurm-conf')
  })

  it('gives nothing to a node the log does not name or come from', () => {
    expect(findingsByNode(parseControllerLog(wrongKeyRegistration), [ws1, ws2]).size).toBe(0)
  })
})
