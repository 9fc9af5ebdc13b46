// What the files of the SSH transport share: the Transport it returns, and one live connection.
import type {Client} from 'ssh2'

import type {Transport} from '../types.js'
import type {LocalForward} from './tunnel.js'

/** Transport.writeFile with one extra option: cancellation of the upload. */
export interface SshTransport extends Transport {
  writeFile(path: string, data: string | Buffer, opts?: {mode?: number; signal?: AbortSignal}): Promise<void>
  /** A listener on 127.0.0.1 (random port) whose connections go to host:port as the server sees it (tunnel.ts). */
  forwardLocal(remoteHost: string, remotePort: number): Promise<LocalForward>
}

/** An authenticated connection, as commands (exec.ts) and files (sftp.ts) use it. */
export interface Connection {
  readonly client: Client
  /** "user@host:port", for messages. */
  readonly description: string
  /** True once the connection has closed (for any reason): nothing more can be sent. */
  readonly closed: boolean
}
