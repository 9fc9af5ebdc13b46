// Loopback ports for the servers tests start: a free one to listen on, and whether one answers yet.
import {connect, createServer} from 'node:net'

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as {port: number}).port
      srv.close(() => resolve(port))
    })
  })
}

export function portAccepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({host: '127.0.0.1', port})
    sock.once('connect', () => {
      sock.destroy()
      resolve(true)
    })
    sock.once('error', () => resolve(false))
  })
}
