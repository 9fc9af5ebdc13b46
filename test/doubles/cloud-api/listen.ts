// Every fake cloud server listens the same way: loopback only, a free port, its base URL back.
import type {Server} from 'node:http'
import type {AddressInfo} from 'node:net'

export async function listenOnLoopback(server: Server): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}
