// Tests that configure this machine's own services (the management playbook, a whole local cluster)
// must not overlap: they take this lock for the whole file. Other test files run alongside.
import {mkdirSync} from 'node:fs'

import {acquireLock, type LockHandle} from '../../src/lib/cluster/lock.js'

const DIR = '/tmp/citc-system-tests'

export async function lockSystem(what: string): Promise<LockHandle> {
  mkdirSync(DIR, {recursive: true})
  return acquireLock(DIR, what, {wait: true, timeoutMs: 60 * 60_000, note: () => {}, label: 'this machine’s services'})
}
