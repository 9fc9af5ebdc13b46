// Who may reach SSH on a new cloud management node (--ssh-cidr): the wizard's question, with the
// narrowest range it can honestly propose, and the warning create gives when it is the whole internet.
//
// The proposal is this machine's public IPv4 address as /32, because citc itself connects to the node
// from here (the wait for SSH, Ansible, `citc ssh`): a range without this machine locks citc out. The
// address of the user's own SSH session (SSH_CONNECTION's client) is not proposed for that reason: it
// is where the user sits, not where citc connects from, and ssh_cidr holds one range only.
// Learned, in order: an interface of this machine with a public address (no network needed); else
// what an HTTP echo outside sees (asked only by the wizard, with a short time limit).
import {networkInterfaces} from 'node:os'

import type {Prompts} from '../../io.js'
import {DEFAULT_SSH_CIDR, isCidr} from '../../providers/cloud-inputs.js'

/** Answers with the caller's public address as plain text (AWS's own; any cloud's node sees the same). */
export const ADDRESS_ECHO_URL = 'https://checkip.amazonaws.com/'
/** How long the wizard waits for the echo before proposing without it. */
export const ADDRESS_ECHO_TIMEOUT_MS = 3000

/** Where the wizard learns this machine's public address: injectable, so tests never read this machine or the internet. */
export interface AddressSources {
  /** This machine's network interfaces, as os.networkInterfaces() gives them. */
  interfaces: () => NodeJS.Dict<Array<{address: string; family: string | number; internal: boolean}>>
  /** The echo to ask when no interface has a public address (named in the question); undefined: none. */
  echoUrl?: string
  /** The echo's answer as text; undefined (or a rejection) when it did not answer in time. */
  askEcho: (url: string) => Promise<string | undefined>
}

/** Learns nothing: no interfaces, no echo (what a caller gets that does not say where to look). */
export const NO_ADDRESS_SOURCES: AddressSources = {interfaces: () => ({}), askEcho: async () => undefined}

/** This machine's interfaces, and the echo at `echoUrl` (a stand-in may name another), waited for `timeoutMs` at most. */
export function systemAddressSources(echoUrl: string = ADDRESS_ECHO_URL, timeoutMs = ADDRESS_ECHO_TIMEOUT_MS): AddressSources {
  return {
    interfaces: networkInterfaces,
    echoUrl,
    async askEcho(url) {
      const response = await fetch(url, {signal: AbortSignal.timeout(timeoutMs), redirect: 'error', headers: {'user-agent': 'citc create'}})
      return response.ok ? (await response.text()).slice(0, 100) : undefined
    },
  }
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

function ipv4ToNumber(address: string): number | undefined {
  const m = IPV4.exec(address)
  if (!m) return undefined
  const octets = m.slice(1, 5).map(Number)
  if (octets.some((o) => o > 255)) return undefined
  return ((octets[0] << 24) >>> 0) + (octets[1] << 16) + (octets[2] << 8) + octets[3]
}

/**
 * Ranges no cloud sees a connection come from (IANA's special-purpose registry, "globally reachable:
 * false"): private, shared (carrier NAT), loopback, link-local, documentation (TEST-NET-1/2/3, which
 * sandboxes use), benchmarking, multicast, reserved.
 */
const NOT_PUBLIC = [
  '0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16', '172.16.0.0/12', '192.0.0.0/24', '192.0.2.0/24',
  '192.168.0.0/16', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24', '224.0.0.0/3',
]

/** Whether `cidr` (a valid IPv4 CIDR) holds `address`. */
export function cidrContains(cidr: string, address: string): boolean {
  const [base, bits] = cidr.split('/')
  const a = ipv4ToNumber(address)
  const b = ipv4ToNumber(base)
  if (a === undefined || b === undefined) return false
  const prefix = Number(bits)
  if (prefix === 0) return true
  const mask = (0xffffffff << (32 - prefix)) >>> 0
  return ((a & mask) >>> 0) === ((b & mask) >>> 0)
}

/** An IPv4 address a connection over the internet can come from. */
export function isPublicIpv4(address: string): boolean {
  return ipv4ToNumber(address) !== undefined && !NOT_PUBLIC.some((r) => cidrContains(r, address))
}

export interface LearnedAddress {
  address: string
  /** Where it was learned, for the question: "its interface eth0", "https://checkip.amazonaws.com/". */
  from: string
}

/** This machine's public IPv4 address, and where it was learned; undefined when neither source knows. */
export async function learnPublicAddress(sources: AddressSources): Promise<LearnedAddress | undefined> {
  for (const [name, addresses] of Object.entries(sources.interfaces())) {
    for (const i of addresses ?? []) {
      const v4 = i.family === 'IPv4' || i.family === 4
      if (v4 && !i.internal && isPublicIpv4(i.address)) return {address: i.address, from: `its interface ${name}`}
    }
  }
  if (!sources.echoUrl) return undefined
  // No answer in time, or an answer that is not a public IPv4 address: nothing learned, no error.
  const answer = (await sources.askEcho(sources.echoUrl).catch(() => undefined))?.trim()
  return answer && isPublicIpv4(answer) ? {address: answer, from: sources.echoUrl} : undefined
}

/**
 * The wizard's question: which addresses may reach SSH, proposing `learned`/32 (else the whole
 * internet, saying so). An answer that is not an IPv4 CIDR is refused and asked again.
 */
export async function askSshCidr(prompts: Prompts, learned: LearnedAddress | undefined): Promise<string> {
  const proposal = learned
    ? `proposed: this machine's public address, from ${learned.from}, as citc connects from here`
    : `citc could not learn this machine's public address: ${DEFAULT_SSH_CIDR} is the whole internet`
  const answer = await prompts.input({
    message: `Addresses that may reach SSH on the management node (one IPv4 CIDR; ${proposal}):`,
    default: learned ? `${learned.address}/32` : DEFAULT_SSH_CIDR,
    validate: (v) => isCidr(v.trim()) || `"${v.trim()}" is not an IPv4 CIDR block: type one such as 203.0.113.7/32, or ${DEFAULT_SSH_CIDR} for the whole internet`,
  })
  return answer.trim()
}

/** When `cidr` leaves out the address citc connects from: what to tell the user (create will not reach the node). */
export function excludesThisMachine(cidr: string, learned: LearnedAddress | undefined): string | undefined {
  if (!learned || cidrContains(cidr, learned.address)) return undefined
  return `${cidr} does not include ${learned.address}, this machine's public address: citc connects to the management node from here, and will not reach it unless this machine's connections come from inside ${cidr} (a VPN, another route)`
}

/** The warning for an SSH range that is the whole internet (any /0; undefined is the default, 0.0.0.0/0); undefined otherwise. */
export function sshExposureWarning(cidr: string | undefined): string | undefined {
  const range = cidr ?? DEFAULT_SSH_CIDR
  if (!range.endsWith('/0')) return undefined
  return `SSH on the management node is open to the whole internet (${range}); pass --ssh-cidr ADDR/32 to limit it`
}
