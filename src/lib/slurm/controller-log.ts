// Why a node cannot join, as slurmctld 22.05 logs it (pure: the text in, findings out; the lines come
// from Controller.versionAndLog, filtered there with CONTROLLER_LOG_SIGNALS). Slurm's own Reason= stays
// empty for most of these — a slurmd whose munge key differs never registers at all — so the log is
// the only place that says it. Line formats (checked against a real slurmctld 22.05.8):
//   [T] error: slurm_unpack_received_msg: [[ws1.lab]:45678] auth_g_verify: REQUEST_CONFIG has authentication error: Unspecified error
//   [T] error: slurm_receive_msg [10.250.99.2:45678]: Unspecified error        (same port: the numeric address)
//   [T] error: Node ws1 appears to have a different slurm.conf than the slurmctld.  This could cause …
//   [T] error: Nodes ws[1-2] not responding            (also "…, setting DOWN"; a hostlist)
//   [T] Node ws1 now responding                        (clears what came before for ws1)
// The peer in the first line is what getnameinfo gave (a name from /etc/hosts or DNS, or the address),
// so the numeric line that follows with the same port is used too.
import {expandHostlist} from './hostlist.js'

export type LogCause = 'munge' | 'slurm-conf' | 'not-responding'

export interface LogEvent {
  /** The log's own timestamp (controller-local ISO time); absent in syslog-style lines. */
  time?: string
  cause: LogCause | 'responding'
  /** Nodes the line names (slurm-conf, not-responding, responding). */
  nodes?: string[]
  /** munge: the peer as logged (name or address) and its numeric address when a later line gave it. */
  peer?: {host: string; address?: string; port: number}
  /** munge: the RPC that failed, e.g. REQUEST_CONFIG, MESSAGE_NODE_REGISTRATION_STATUS. */
  request?: string
  /** munge: what munge said just before ("Invalid credential": another key; "Expired credential": clocks). */
  munge?: string
}

export interface LogFinding {
  cause: LogCause
  time?: string
  request?: string
  munge?: string
}

const MUNGE = /Munge decode failed: (.+)$/
const TIME = /^\[(\d{4}-\d\d-\d\dT[\d:.]+)\]/
const AUTH = /\[(?:\[([^\]]+)\]|([^\s\]]+)):(\d+)\] auth_g_\w+: (\S+) has authentication error/
const NUMERIC = /slurm_receive_msg \[(.+):(\d+)\]:/
const DIFFERENT_CONF = /Node (\S+) appears to have a different slurm\.conf/
const NOT_RESPONDING = /Nodes (\S+) not responding/
const NOW_RESPONDING = /Node (\S+) now responding/

function names(hostlist: string): string[] {
  try {
    return expandHostlist(hostlist, 100_000)
  } catch {
    return [hostlist]
  }
}

export function parseControllerLog(text: string): LogEvent[] {
  const events: LogEvent[] = []
  // Auth failures waiting for their numeric address, by port (the numeric line comes right after).
  const pending = new Map<number, LogEvent>()
  // munge's own words come one line before the auth failure they explain.
  let munge: string | undefined
  for (const line of text.split('\n')) {
    const time = TIME.exec(line)?.[1]
    const at = time ? {time} : {}
    let m: RegExpExecArray | null
    if ((m = MUNGE.exec(line))) {
      munge = m[1].trim()
      continue
    }
    if ((m = AUTH.exec(line))) {
      const port = Number(m[3])
      const event: LogEvent = {...at, cause: 'munge', peer: {host: m[1] ?? m[2], port}, request: m[4], ...(munge ? {munge} : {})}
      events.push(event)
      pending.set(port, event)
      munge = undefined
    } else if ((m = NUMERIC.exec(line))) {
      const port = Number(m[2])
      const event = pending.get(port)
      if (event?.peer) event.peer.address = m[1].replace(/^\[|\]$/g, '')
      pending.delete(port)
    } else if ((m = DIFFERENT_CONF.exec(line))) {
      events.push({...at, cause: 'slurm-conf', nodes: [m[1]]})
    } else if ((m = NOT_RESPONDING.exec(line))) {
      events.push({...at, cause: 'not-responding', nodes: names(m[1])})
    } else if ((m = NOW_RESPONDING.exec(line))) {
      events.push({...at, cause: 'responding', nodes: [m[1]]})
    }
  }
  return events
}

/** Most telling first: a munge failure explains "not responding", not the other way round. */
const RANK: Record<LogCause, number> = {munge: 3, 'slurm-conf': 2, 'not-responding': 1}

/**
 * For each node, what the log says since it last responded: the most telling cause (munge, then a
 * different slurm.conf, then not responding), at its latest time. A munge failure belongs to a node
 * when its peer is the node's address, host name or name.
 */
export function findingsByNode(events: readonly LogEvent[], nodes: ReadonlyArray<{name: string; address?: string; hostName?: string}>): Map<string, LogFinding> {
  const out = new Map<string, LogFinding>()
  for (const node of nodes) {
    const ids = new Set([node.name, node.address, node.hostName].filter((x): x is string => Boolean(x)))
    let best: LogFinding | undefined
    for (const e of events) {
      const mine = e.nodes ? e.nodes.includes(node.name) : Boolean(e.peer && (ids.has(e.peer.host) || (e.peer.address && ids.has(e.peer.address))))
      if (!mine) continue
      if (e.cause === 'responding') {
        best = undefined
        continue
      }
      if (!best || RANK[e.cause] >= RANK[best.cause]) best = {cause: e.cause, ...(e.time ? {time: e.time} : {}), ...(e.request ? {request: e.request} : {}), ...(e.munge ? {munge: e.munge} : {})}
    }
    if (best) out.set(node.name, best)
  }
  return out
}
