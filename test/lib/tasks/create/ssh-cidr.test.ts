// Who may reach SSH on a cloud management node: which addresses count as public (81.2.69.x stands
// for one: the documentation ranges are not public), where the wizard
// learns this machine's (stand-in interfaces and echoes, never this machine's nor the internet: the
// echo is a server of the test's own on loopback), and the warning for the whole internet.
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterAll, describe, expect, it} from 'vitest'

import {DEFAULT_SSH_CIDR} from '../../../../src/lib/providers/cloud-inputs.js'
import {parseStandIn} from '../../../../src/lib/stand-in.js'
import {cidrContains, isPublicIpv4, learnPublicAddress, sshExposureWarning, systemAddressSources, type AddressSources} from '../../../../src/lib/tasks/create/ssh-cidr.js'

const iface = (address: string, o: {family?: string | number; internal?: boolean} = {}) => ({address, family: o.family ?? 'IPv4', internal: o.internal ?? false})

describe('isPublicIpv4, cidrContains', () => {
  it.each([
    ['81.2.69.20', true],
    ['8.8.8.8', true],
    ['172.32.0.1', true], // just past 172.16.0.0/12
    ['10.0.0.1', false],
    ['192.0.2.2', false], // documentation ranges (TEST-NET-1/2/3): sandboxes use them, no cloud sees them
    ['198.51.100.20', false],
    ['203.0.113.7', false],
    ['172.16.5.4', false],
    ['192.168.1.1', false],
    ['100.64.0.1', false], // shared address space (carrier NAT)
    ['127.0.0.1', false],
    ['169.254.169.254', false],
    ['0.0.0.0', false],
    ['224.0.0.1', false],
    ['255.255.255.255', false],
    ['256.1.1.1', false],
    ['2001:db8::1', false],
    ['', false],
  ])('%s: %s', (address, expected) => {
    expect(isPublicIpv4(address)).toBe(expected)
  })

  it('holds the addresses of its range only', () => {
    expect(cidrContains('203.0.113.0/24', '203.0.113.255')).toBe(true)
    expect(cidrContains('203.0.113.0/24', '203.0.114.0')).toBe(false)
    expect(cidrContains('81.2.69.20/32', '81.2.69.20')).toBe(true)
    expect(cidrContains('81.2.69.20/32', '81.2.69.21')).toBe(false)
    expect(cidrContains('0.0.0.0/0', '81.2.69.20')).toBe(true)
    expect(cidrContains('128.0.0.0/1', '127.255.255.255')).toBe(false)
  })
})

describe('learnPublicAddress', () => {
  const echoed: string[] = []
  const sources = (interfaces: ReturnType<AddressSources['interfaces']>, echo?: string | Error): AddressSources => ({
    interfaces: () => interfaces,
    ...(echo === undefined ? {} : {echoUrl: 'https://echo.test/'}),
    askEcho: async (url) => {
      echoed.push(url)
      if (echo instanceof Error) throw echo
      return echo
    },
  })

  it('takes the first public IPv4 address of an interface, not loopback, private, internal or IPv6 ones, and asks no echo', async () => {
    echoed.length = 0
    const learned = await learnPublicAddress(
      sources(
        {
          lo: [iface('127.0.0.1', {internal: true})],
          eth0: [iface('10.0.0.5'), iface('2001:db8::5', {family: 'IPv6'})],
          tun0: [iface('81.2.69.9', {internal: true})],
          eth1: [iface('81.2.69.20', {family: 4})], // Node 18.0-18.3 said 4
        },
        '81.2.69.99',
      ),
    )
    expect(learned).toEqual({address: '81.2.69.20', from: 'its interface eth1'})
    expect(echoed).toEqual([])
  })

  it('without a public interface: what the echo sees, named by its URL; a private, garbled, missing or failed answer is nothing learned', async () => {
    const behindNat = {eth0: [iface('192.168.1.7')]}
    expect(await learnPublicAddress(sources(behindNat, '81.2.69.99\n'))).toEqual({address: '81.2.69.99', from: 'https://echo.test/'})
    expect(await learnPublicAddress(sources(behindNat, '10.9.9.9'))).toBeUndefined()
    expect(await learnPublicAddress(sources(behindNat, '<html>hello</html>'))).toBeUndefined()
    expect(await learnPublicAddress(sources(behindNat, new Error('timeout')))).toBeUndefined()
    echoed.length = 0
    expect(await learnPublicAddress(sources(behindNat))).toBeUndefined() // no echo named: none asked
    expect(echoed).toEqual([])
  })
})

describe('systemAddressSources: the echo over HTTP, bounded', () => {
  const servers: Server[] = []
  afterAll(() => {
    for (const s of servers) {
      s.closeAllConnections()
      s.close()
    }
  })
  /** An echo on loopback answering `body` (or never, for the time limit). */
  async function echo(handler: (res: import('node:http').ServerResponse) => void): Promise<string> {
    const server = createServer((_req, res) => handler(res))
    servers.push(server)
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done))
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`
  }

  it('returns the answer of an echo that says the address; an error status is no answer', async () => {
    const ok = await echo((res) => res.end('81.2.69.99\n'))
    const s = systemAddressSources(ok, 2000)
    expect(s.echoUrl).toBe(ok)
    expect(await s.askEcho(ok)).toBe('81.2.69.99\n')
    const broken = await echo((res) => res.writeHead(503).end('81.2.69.99'))
    expect(await s.askEcho(broken)).toBeUndefined()
  })

  it("a stand-in's addressEcho (a data: URL, no server) is asked instead; a stand-in's echo must be a URL", async () => {
    const {addressEcho} = parseStandIn(JSON.stringify({addressEcho: 'data:text/plain,81.2.69.7'}), 'x.json')
    expect(await learnPublicAddress({...systemAddressSources(addressEcho), interfaces: () => ({})})).toEqual({address: '81.2.69.7', from: 'data:text/plain,81.2.69.7'})
    expect(() => parseStandIn(JSON.stringify({addressEcho: 'checkip'}), 'x.json')).toThrow(/--stand-in x\.json: addressEcho: /)
  })

  it('gives up on an echo that does not answer within its time limit (learnPublicAddress: nothing learned)', async () => {
    const silent = await echo((res) => {
      setTimeout(() => res.end('81.2.69.99'), 5000).unref()
    })
    const started = Date.now()
    const s = {...systemAddressSources(silent, 300), interfaces: () => ({})}
    expect(await learnPublicAddress(s)).toBeUndefined()
    expect(Date.now() - started).toBeLessThan(2000)
  })
})

describe('sshExposureWarning', () => {
  it('warns for the default and for any /0, naming --ssh-cidr; not for a narrower range', () => {
    const open = 'SSH on the management node is open to the whole internet (0.0.0.0/0); pass --ssh-cidr ADDR/32 to limit it'
    expect(DEFAULT_SSH_CIDR).toBe('0.0.0.0/0')
    expect(sshExposureWarning(undefined)).toBe(open)
    expect(sshExposureWarning('0.0.0.0/0')).toBe(open)
    expect(sshExposureWarning('10.0.0.0/0')).toMatch(/whole internet \(10\.0\.0\.0\/0\)/)
    expect(sshExposureWarning('0.0.0.0/1')).toBeUndefined() // half the internet is wide, but not what the warning says
    expect(sshExposureWarning('203.0.113.7/32')).toBeUndefined()
    expect(sshExposureWarning('10.0.0.0/8')).toBeUndefined()
  })
})
