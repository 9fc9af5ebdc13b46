// A local port forward over an authenticated connection (`ssh -L 127.0.0.1:<random>:host:port`): each
// connection to the local listener becomes one ssh2 `forwardOut` channel to host:port as the server
// sees it. `citc monitor` reaches a cloud management node's loopback-only Prometheus this way; the
// listener is on loopback only, so only this machine can use it.
import {createServer, type Socket} from 'node:net'

import {remoteError} from '../../errors.js'
import type {Connection} from './types.js'

export interface LocalForward {
  /** The local port (on 127.0.0.1) that leads to the remote host:port. */
  readonly port: number
  /** Stop listening and cut the connections it carries. The SSH connection stays open. */
  close(): Promise<void>
}

export async function forwardLocal(conn: Connection, remoteHost: string, remotePort: number): Promise<LocalForward> {
  const sockets = new Set<Socket>()
  const server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => socket.destroy())
    if (conn.closed) {
      socket.destroy()
      return
    }
    conn.client.forwardOut('127.0.0.1', socket.remotePort ?? 0, remoteHost, remotePort, (error, stream) => {
      // The server refused the channel (nothing listens there, or forwarding is off): the local
      // client sees its connection reset, as it would with `ssh -L`.
      if (error) {
        socket.destroy()
        return
      }
      if (socket.destroyed) {
        stream.close()
        return
      }
      socket.pipe(stream).pipe(socket)
      stream.on('error', () => socket.destroy())
      stream.on('close', () => socket.destroy())
      socket.on('close', () => stream.close())
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(remoteError(`cannot listen on 127.0.0.1 for the tunnel to ${remoteHost}:${remotePort} on ${conn.description}: ${error.message}`)))
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const port = (server.address() as {port: number}).port
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}
