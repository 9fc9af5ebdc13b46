// The machine preflight of `citc node add`: the probe script's output parsed, and every refusal with
// what to do. The probe itself runs for real here (sh, on this machine), read-only.
import {execFileSync} from 'node:child_process'
import {createServer} from 'node:net'

import {describe, expect, it} from 'vitest'

import {parseFeatures} from '../../../../src/lib/tasks/joined/flags.js'
import {defaultNodeName, nodeHardware, preflight, slurmdPackageFor, type PreflightInput} from '../../../../src/lib/tasks/joined/preflight.js'
import {parseProbe, PROBE_SCRIPT, type MachineFacts} from '../../../../src/lib/tasks/joined/probe.js'

const facts = (over: Partial<MachineFacts> = {}): MachineFacts => ({
  osId: 'debian',
  osVersion: '12',
  osName: 'Debian GNU/Linux 12 (bookworm)',
  arch: 'x86_64',
  hostname: 'ws1',
  now: 1_000_000,
  uid: 0,
  python3: true,
  slurmdRunning: false,
  mungedRunning: false,
  etcSlurm: ['plugstack.conf', 'plugstack.conf.d'],
  aptVersions: ['22.05.8-4+deb12u3'],
  hardware: {sockets: 1, coresPerSocket: 8, threadsPerCore: 2, cpus: 16, memMiB: 64_000},
  passwd: new Map(),
  reach: new Map([
    [6817, 'open'],
    [636, 'open'],
    [2049, 'refused'],
    [60_001, 'refused'],
  ]),
  ...over,
})

const input = (over: Partial<PreflightInput> = {}): PreflightInput => ({
  host: '10.0.0.2',
  name: 'ws1',
  cluster: 'lab',
  facts: facts(),
  controller: {version: '22.05.8', packageVersion: '22.05.8-4+deb12u3', now: 1_000_010},
  nodeNames: new Set(['lab-local-small-0001']),
  rejoin: false,
  directory: new Map([['alice', 10_001]]),
  adopt: false,
  shared: 'nfs',
  controllerAddr: '10.0.0.1',
  slurmdReach: 'refused',
  ...over,
})

const messages = (i: PreflightInput) => preflight(i).map((p) => `${p.message} → ${p.fix}`)

describe('node add preflight', () => {
  it('passes a clean Debian 12 machine, and pins the controller’s exact slurmd package', () => {
    expect(preflight(input())).toEqual([])
    expect(slurmdPackageFor(facts(), {packageVersion: '22.05.8-4+deb12u3'})).toBe('22.05.8-4+deb12u3')
    expect(slurmdPackageFor(facts({osId: 'ubuntu', osVersion: '22.04'}), {packageVersion: '22.05.8-4+deb12u3'})).toBe('')
  })

  it('refuses a slurmd newer than slurmctld, and one more than two releases older', () => {
    expect(messages(input({facts: facts({slurmdVersion: '23.11.4'}), adopt: true}))).toEqual([expect.stringMatching(/slurmd 23\.11\.4 is newer than the cluster's slurmctld 22\.05\.8.*never newer/)])
    expect(messages(input({facts: facts({slurmdVersion: '20.02.7'}), adopt: true}))).toEqual([expect.stringMatching(/more than two releases older/)])
    expect(preflight(input({facts: facts({osId: 'ubuntu', osVersion: '22.04', aptVersions: ['21.08.5-2ubuntu1']})}))).toEqual([])
    expect(messages(input({facts: facts({osId: 'ubuntu', osVersion: '24.04', aptVersions: ['23.11.4-1.2ubuntu5']})}))).toEqual([expect.stringMatching(/slurmd 23\.11\.4 is newer.*join a Debian 12 machine/)])
  })

  it('refuses a Debian 12 machine whose apt cannot install the controller’s package', () => {
    expect(messages(input({facts: facts({aptVersions: []})}))).toEqual([expect.stringMatching(/cannot install slurmd 22\.05\.8-4\+deb12u3.*offers none.*apt-get update/)])
  })

  it('refuses an existing Slurm or munge unless --adopt, but not citc’s own earlier join', () => {
    const existing = facts({slurmdRunning: true, mungedRunning: true, etcSlurm: ['plugstack.conf', 'slurm.conf']})
    expect(messages(input({facts: existing}))).toEqual([expect.stringMatching(/already has a running slurmd, a running munged, \/etc\/slurm \(slurm\.conf\) → pass --adopt/)])
    expect(preflight(input({facts: existing, adopt: true}))).toEqual([])
    expect(preflight(input({facts: {...existing, joinedMarker: {cluster: 'lab', name: 'ws1'}}, rejoin: true, nodeNames: new Set(['ws1'])}))).toEqual([])
    expect(messages(input({facts: {...existing, joinedMarker: {cluster: 'other', name: 'x1'}}, adopt: true}))).toEqual([expect.stringMatching(/joined to cluster other as x1 → remove it there first: citc node remove x1 -c other/)])
  })

  it('refuses clock skew beyond munge’s margin', () => {
    expect(messages(input({facts: facts({now: 1_000_010 + 61})}))).toEqual([expect.stringMatching(/clock is 61 s away.*synchronise both clocks/)])
    expect(preflight(input({facts: facts({now: 1_000_010 - 59})}))).toEqual([])
  })

  it('refuses a taken or unusable name', () => {
    expect(messages(input({nodeNames: new Set(['ws1'])}))).toEqual([expect.stringMatching(/already has a node called ws1 → pass --name/)])
    expect(messages(input({name: 'WS_1'}))).toEqual([expect.stringMatching(/not a usable Slurm node name/)])
    expect(messages(input({name: 'lab-local-small-0009'}))).toEqual([expect.stringMatching(/looks like one of the cluster's elastic nodes/)])
    expect(defaultNodeName('GPU_Box.lab')).toBe('gpu-box-lab')
  })

  it('refuses local accounts that clash with directory users', () => {
    expect(messages(input({facts: facts({passwd: new Map([['bob', 10_001]])})}))).toEqual([expect.stringMatching(/clash with the cluster's directory users: bob \(uid 10001\)/)])
    expect(messages(input({facts: facts({passwd: new Map([['alice', 1000]])})}))).toEqual([expect.stringMatching(/alice \(uid 1000\)/)])
    expect(preflight(input({facts: facts({passwd: new Map([['alice', 10_001], ['carol', 1000]])})}))).toEqual([])
  })

  it('names each blocked port and the rule to add, both ways; a refusal means the path is open', () => {
    const reach = new Map([
      [6817, 'open'],
      [636, 'timeout'],
      [2049, 'refused'],
      [60_001, 'timeout'],
    ])
    expect(messages(input({facts: facts({reach}), slurmdReach: 'timeout'}))).toEqual([
      expect.stringMatching(/cannot reach the directory \(LDAP over TLS\) on 10\.0\.0\.1:636 \(timeout\) → allow TCP from 10\.0\.0\.2 to 10\.0\.0\.1 port 636 on the management node's firewall/),
      expect.stringMatching(/cannot reach srun \(ports 60001-63000\).* port 60001-63000 /),
      expect.stringMatching(/management node cannot reach slurmd's port 10\.0\.0\.2:6818 \(timeout\) → allow TCP from 10\.0\.0\.1 to 10\.0\.0\.2 port 6818 on the machine's firewall/),
    ])
    // NFS is only asked for with --shared nfs.
    expect(preflight(input({shared: 'none', facts: facts({reach: new Map([[6817, 'open'], [636, 'open'], [60_001, 'refused']])})}))).toEqual([])
  })

  it('lists every problem of a machine at once', () => {
    const f = facts({osId: 'centos', osName: 'CentOS Stream 9', python3: false, uid: 1000, sudo: false, now: 0})
    expect(preflight(input({facts: f})).length).toBeGreaterThanOrEqual(4)
  })

  it('takes the hardware from slurmd -C when there is one, at 95 % of the memory', () => {
    expect(nodeHardware(facts())).toEqual({sockets: 1, coresPerSocket: 8, threadsPerCore: 2, realMemory: 60_800})
    const withSlurmd = facts({slurmdHardware: 'NodeName=ws1 CPUs=4 Boards=1 SocketsPerBoard=2 CoresPerSocket=2 ThreadsPerCore=1 RealMemory=8000'})
    expect(nodeHardware(withSlurmd)).toEqual({sockets: 2, coresPerSocket: 2, threadsPerCore: 1, realMemory: 7600})
  })
})

describe('the probe script', () => {
  it('runs read-only here and reports what it finds, ports included', async () => {
    const server = createServer().listen(0, '127.0.0.1')
    await new Promise((r) => server.once('listening', r))
    const open = (server.address() as {port: number}).port
    try {
      const out = execFileSync('sh', ['-c', PROBE_SCRIPT, 'sh', '127.0.0.1', String(open), '1'], {encoding: 'utf8'})
      const f = parseProbe(out)
      expect(f.hardware.cpus).toBeGreaterThan(0)
      expect(f.hardware.memMiB).toBeGreaterThan(0)
      expect(f.now).toBeGreaterThan(1_700_000_000)
      expect(f.reach.get(open)).toBe('open')
      expect(f.reach.get(1)).toBe('refused')
    } finally {
      server.close()
    }
  })

  it('reads the mark node.yml leaves (cluster and node name) and the port results', () => {
    const f = parseProbe('joined_marker=lab ws1 \nreach_6817=open\nreach_389=timeout\nhostname=ws1\nprobe_done=1\n')
    expect(f.joinedMarker).toEqual({cluster: 'lab', name: 'ws1'})
    expect([...f.reach]).toEqual([[6817, 'open'], [389, 'timeout']])
    expect(parseProbe('joined_marker=\nprobe_done=1\n').joinedMarker).toBeUndefined()
  })

  it('refuses output that stops early', () => {
    expect(() => parseProbe('os_id=debian\n')).toThrow(/stopped early/)
  })
})

describe('--features', () => {
  it('takes Slurm feature names once each, never "static"', () => {
    expect(parseFeatures('bigmem, ssd,bigmem')).toEqual(['bigmem', 'ssd'])
    expect(parseFeatures(undefined)).toEqual([])
    expect(() => parseFeatures('a b')).toThrow(/--features/)
    expect(() => parseFeatures('static')).toThrow(expect.objectContaining({hint: expect.stringMatching(/marks every joined machine "static" itself/)}))
  })
})
