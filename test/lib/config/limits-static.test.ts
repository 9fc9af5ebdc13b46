// limits.yaml's static: section (joined machines): what parses, and every problem at its file:line:col.
import {describe, expect, it} from 'vitest'

import {parseLimits, type ParseLimitsOptions} from '../../../src/lib/config/limits.js'
import {InvalidInputError, type InputProblem} from '../../../src/lib/errors.js'
import type {Shape, ShapeCatalogue} from '../../../src/lib/shapes/types.js'
import type {Limits} from '../../../src/lib/slurm/limits-types.js'

const shape = (name: string): Shape => ({name, sockets: 1, coresPerSocket: 2, threadsPerCore: 2, memoryMiB: 8192, realMemoryMiB: 7000, arch: 'x86_64'})
const NAMES = ['c5.xlarge', 't3a.medium']
const catalogue: ShapeCatalogue = {provider: 'aws', source: 'test', get: (n) => (NAMES.includes(n) ? shape(n) : undefined), names: () => NAMES}
const opts: ParseLimitsOptions = {file: 'limits.yaml', provider: 'aws', catalogue, suggest: () => [], clusterId: 'demo'}

const lines = (...l: string[]) => l.join('\n') + '\n'
const KEY = 'SHA256:' + 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ+/01234'
const parse = (text: string, more: Partial<ParseLimitsOptions> = {}): Limits => parseLimits(text, {...opts, ...more})

function problems(text: string, more: Partial<ParseLimitsOptions> = {}): InputProblem[] {
  try {
    parse(text, more)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    return (error as InvalidInputError).problems.map(({where, path, message}) => ({where, message: path ? `${path}: ${message}` : message}))
  }
  throw new Error('expected an InvalidInputError')
}

/** One machine's lines (indented under static:), address and name as given. */
const machine = (name: string, address = '10.250.99.2', controller = '10.250.99.1') => [
  `  ${name}:`,
  `    address: ${address}`,
  `    controller: ${controller}`,
  `    ssh: {user: root, port: 22, hostKey: "${KEY}"}`,
  '    hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800}',
]

describe('static: joined machines', () => {
  it('parses the contract example, defaults filled in, in the order written', () => {
    const l = parse(
      lines('shapes:', '  c5.xlarge: 2') +
        lines('static:', ...machine('ws1'), '    slurmVersion: 22.05.8', '    shared: none', '    partitions: [compute]', '    features: [bigmem]', '    weight: 3', ...machine('ws2', 'ws2.lab.example')),
    )
    expect(l.entries).toHaveLength(1)
    expect(l.staticNodes).toEqual([
      {
        name: 'ws1',
        address: '10.250.99.2',
        controller: '10.250.99.1',
        ssh: {user: 'root', port: 22, hostKey: KEY},
        hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800},
        slurmVersion: '22.05.8',
        shared: 'none',
        partitions: ['compute'],
        features: ['bigmem'],
        weight: 3,
        where: 'limits.yaml:4:3',
      },
      {
        name: 'ws2',
        address: 'ws2.lab.example',
        controller: '10.250.99.1',
        ssh: {user: 'root', port: 22, hostKey: KEY},
        hardware: {sockets: 1, coresPerSocket: 2, threadsPerCore: 1, realMemory: 22800},
        shared: 'nfs',
        where: 'limits.yaml:14:3',
      },
    ])
    // [compute] without a partitions: section: the default partition, made as for shapes.
    expect(l.partitions.map((p) => p.name)).toEqual(['compute'])
  })

  it('is no machines when absent or empty, and accepts IPv6 addresses', () => {
    expect(parse(lines('c5.xlarge: 1')).staticNodes).toEqual([])
    expect(parse(lines('static:')).staticNodes).toEqual([])
    expect(parse(lines('static:', ...machine('ws1', 'fd00::2', 'fd00::1'))).staticNodes[0].address).toBe('fd00::2')
  })

  it('makes a short-form file extended: its shapes must then be under shapes:', () => {
    expect(problems(lines('c5.xlarge: 2', 'static:', ...machine('ws1')))).toEqual([
      {where: 'limits.yaml:1:1', message: 'c5.xlarge: with a shapes: section, every shape goes under it; move "c5.xlarge" into shapes:'},
    ])
  })

  it('names: the pattern, an elastic node name of the cluster, a duplicate', () => {
    expect(problems(lines('static:', ...machine('WS_1'), ...machine('demo-c5-xlarge-0001', '10.0.0.9'), ...machine('demo', '10.0.0.8')))).toEqual([
      {where: 'limits.yaml:2:3', message: 'static.WS_1: "WS_1" is not a valid name for a joined machine; use a lower-case letter, then up to 39 lower-case letters, digits and "-" (e.g. ws1)'},
      {
        where: 'limits.yaml:7:3',
        message: 'static.demo-c5-xlarge-0001: "demo-c5-xlarge-0001" could be one of the cluster\'s own node names (they start with "demo-"); give the machine another name',
      },
      {where: 'limits.yaml:12:3', message: 'static.demo: "demo" could be one of the cluster\'s own node names (they start with "demo-"); give the machine another name'},
    ])
    // Without the cluster's id, only the pattern is checked.
    expect(parse(lines('static:', ...machine('demo-x')), {clusterId: undefined}).staticNodes).toHaveLength(1)
    // Two entries with one name: YAML's duplicate key, located at the second.
    expect(problems(lines('static:', ...machine('ws1'), ...machine('ws1', '10.0.0.9')))).toEqual([
      {where: 'limits.yaml:7:3', message: 'duplicate key "ws1" (first at line 2); keep only one of them'},
    ])
  })

  it('every field of an entry, each problem at its own line and column', () => {
    const text = lines(
      'static:', //                                                       1
      '  ws1:', //                                                        2
      '    address: "not an address!"', //                                3
      '    controller: ""', //                                            4
      '    ssh: {user: Root, port: 70000, hostKey: "MD5:aa"}', //         5
      '    hardware: {sockets: 0, coresPerSocket: 1.5, threadsPerCore: 1, realMemory: -1}', // 6
      '    slurmVersion: latest', //                                      7
      '    shared: cifs', //                                              8
      '    partitions: [compute, compute]', //                            9
      '    features: ["a,b"]', //                                         10
      '    weight: 70000', //                                             11
      '    adress: x', //                                                 12
    )
    expect(problems(text)).toEqual([
      {where: 'limits.yaml:3:5', message: 'static.ws1.address: "not an address!" is not an IPv4 or IPv6 address or a DNS name; write address as e.g. 10.0.0.5 or ws1.lab.example'},
      {where: 'limits.yaml:4:5', message: 'static.ws1.controller: "" is not an IPv4 or IPv6 address or a DNS name; write controller as e.g. 10.0.0.5 or ws1.lab.example'},
      {where: 'limits.yaml:5:11', message: 'static.ws1.ssh.user: "Root" is not a user name; write the account citc logs in as, e.g. root'},
      {where: 'limits.yaml:5:23', message: 'static.ws1.ssh.port: ssh.port must be a whole number from 1 to 65535, not 70000'},
      {where: 'limits.yaml:5:36', message: 'static.ws1.ssh.hostKey: "MD5:aa" is not an OpenSSH fingerprint; write "SHA256:" and 43 base64 characters, as ssh-keygen -lf prints it'},
      {where: 'limits.yaml:6:16', message: 'static.ws1.hardware.sockets: sockets must be a whole number from 1 up, not 0'},
      {where: 'limits.yaml:6:28', message: 'static.ws1.hardware.coresPerSocket: coresPerSocket must be a whole number from 1 up, not 1.5'},
      {where: 'limits.yaml:6:68', message: 'static.ws1.hardware.realMemory: realMemory (MiB) must be a whole number from 1 up, not -1'},
      {where: 'limits.yaml:7:5', message: 'static.ws1.slurmVersion: "latest" is not a Slurm version; write it as slurmd -V prints it, e.g. "22.05.8"'},
      {where: 'limits.yaml:8:5', message: 'static.ws1.shared: shared must be nfs or none, not "cifs"'},
      {where: 'limits.yaml:10:16', message: 'static.ws1.features[0]: "a,b" is not a valid Slurm feature name; use only letters, digits, "_", "." and "-" (no commas, spaces or "=")'},
      {where: 'limits.yaml:11:5', message: 'static.ws1.weight: weight (Slurm uses lower weights first) must be a whole number from 1 to 65533, not 70000'},
      {where: 'limits.yaml:12:5', message: 'static.ws1.adress: unknown key "adress"; did you mean "address"?'},
    ])
  })

  it('missing fields, and entries or a section of the wrong type', () => {
    expect(problems(lines('static:', '  ws1:', '    address: 10.0.0.2', '    ssh: {user: root, port: 22}'))).toEqual([
      {where: 'limits.yaml:2:3', message: 'static.ws1.controller: is required; add it'},
      {where: 'limits.yaml:2:3', message: 'static.ws1.hardware: is required; add it'},
      {where: 'limits.yaml:4:5', message: 'static.ws1.ssh.hostKey: is required; add it'},
    ])
    expect(problems(lines('static:', '  ws1: 10.0.0.2'))).toEqual([
      {where: 'limits.yaml:2:3', message: 'static.ws1: a joined machine\'s settings must be a map (address, controller, ssh, hardware, …), not "10.0.0.2"'},
    ])
    expect(problems(lines('static: [ws1]'))).toEqual([
      {where: 'limits.yaml:1:1', message: 'static: static must be a map of machine names to their settings (citc node add writes it), not a list'},
    ])
  })

  it('duplicates, "static" as an extra feature, one address twice', () => {
    expect(problems(lines('static:', ...machine('ws1'), '    partitions: [compute, compute]', '    features: [static, big, big]', ...machine('ws2')))).toEqual([
      {where: 'limits.yaml:7:27', message: 'static.ws1.partitions[1]: "compute" is listed twice; remove one'},
      {where: 'limits.yaml:8:16', message: 'static.ws1.features[0]: every joined machine has the feature "static" already; remove it here'},
      {where: 'limits.yaml:8:29', message: 'static.ws1.features[2]: "big" is listed twice; remove one'},
      {where: 'limits.yaml:10:5', message: 'static.ws2.address: 10.250.99.2 is already the address of "ws1" (limits.yaml:2:3); one machine joins once, under one name'},
    ])
  })

  it('one common controller address', () => {
    expect(problems(lines('static:', ...machine('ws1'), ...machine('ws2', '10.250.99.3', '192.168.1.1')))).toEqual([
      {
        where: 'limits.yaml:9:5',
        message:
          'static.ws2.controller: every joined machine must reach the management node at one address (slurm.conf has one SlurmctldHost), but "ws1" (limits.yaml:2:3) uses 10.250.99.1; use 10.250.99.1 here too, or an address every machine can reach',
      },
    ])
  })

  it('partitions must exist, as for shapes', () => {
    expect(problems(lines('partitions:', '  cpu: {}', 'static:', ...machine('ws1'), '    partitions: [cpus]'))).toEqual([
      {where: 'limits.yaml:9:18', message: 'static.ws1.partitions[0]: partition "cpus" is not defined under partitions:; did you mean "cpu"? define it there or remove it from this list'},
    ])
  })

  it('refuses SrunPortRange and SuspendExcNodes under slurm:, saying why', () => {
    expect(problems(lines('slurm:', '  SrunPortRange: 1-2', '  SuspendExcNodes: x'))).toEqual([
      {where: 'limits.yaml:2:3', message: 'slurm.SrunPortRange: citc sets SrunPortRange itself when machines join the cluster (the ports srun listens on, for their firewalls); remove it'},
      {where: 'limits.yaml:3:3', message: 'slurm.SuspendExcNodes: citc sets SuspendExcNodes itself: joined machines (static:) are never powered down; remove it'},
    ])
  })
})
