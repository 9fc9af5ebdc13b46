// TEST DOUBLES of the clouds' compute APIs (EC2, Compute Engine, OCI Core) — not the clouds. These
// machines have no cloud, so the node drivers' real SDKs (and Google's REST client) are pointed at
// these servers on 127.0.0.1 through a stand-in's `endpoints` (src/lib/stand-in.ts).
// Every fake (ec2.ts, gce.ts, oci.ts) has the same surface, typed here, so tests and the e2e's
// "launch boots a local slurmd" hook treat the three alike.

/** One machine the fake cloud holds. */
export interface FakeInstance {
  id: string
  /** Its name: EC2's Name tag, Compute's instance name, OCI's displayName. */
  name: string
  /** Tags / labels / freeform tags, as the launch gave them. */
  tags: Record<string, string>
  shape: string
  /** Zone / availability domain. */
  zone: string
  imageId: string
  /** The user-data, decoded to plain text (what cloud-init would run). */
  userData: string
  state: 'pending' | 'running' | 'stopping' | 'terminated'
  privateIp: string
  /** Epoch ms. */
  launchedAt: number
}

/** One API request as the fake received it (for assertions: counts, tokens, signatures). */
export interface RecordedRequest {
  /** The operation: 'RunInstances', 'insert', 'LaunchInstance', 'imds:token', … */
  op: string
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  body: string
  /** The HTTP status answered. */
  status: number
  at: number
}

/** A scripted fault: the next `times` requests of `op` (matching `when`, if given) get this answer. */
export interface Fault {
  op: string
  times: number
  /** HTTP status and the cloud's own error code / message, in that cloud's error format. */
  status: number
  code: string
  message?: string
  /** Only requests for this shape (launches). */
  shape?: string
  /** Answer after this long (slow answers). */
  delayMs?: number
}

export interface FakeCloudHooks {
  /** After a launch is accepted (the instance is pending): the e2e boots it as a local node. */
  onLaunch?(instance: FakeInstance): void | Promise<void>
  /** After a terminate is accepted. */
  onTerminate?(instance: FakeInstance): void | Promise<void>
}

export interface FakeCloud {
  /** Base URL of the API, e.g. http://127.0.0.1:41234 (what `endpoints.api` is set to). */
  url: string
  /** Base URL of the fake metadata/identity server, if the cloud's credentials chain uses one. */
  metadataUrl?: string
  instances: FakeInstance[]
  requests: RecordedRequest[]
  /** Queue faults, answered in order before normal handling. */
  fail(...faults: Fault[]): void
  /** Add an instance directly (another cluster's, an orphan, one launched earlier). */
  add(instance: Partial<FakeInstance> & {name: string}): FakeInstance
  close(): Promise<void>
}

export interface FakeCloudOptions {
  hooks?: FakeCloudHooks
  /** Mutating calls allowed (token bucket): beyond it the cloud's throttling error. */
  rateLimit?: {perSecond: number; burst: number}
  /** Milliseconds before a pending instance reports running (default 0: at the next read). */
  bootMs?: number
}
