// Shared by the Oracle driver tests: the fake OCI (a TEST DOUBLE, test/doubles/cloud-api/oci.ts), a cluster.json
// oracle section pointing at it, images.json in a temp dir, and a driver context with an injected clock
// whose sleeps only advance the clock (no real waiting) and are recorded.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {oracleDriver} from '../../../../src/lib/providers/oracle/driver.js'
import {FAKE_OCI_SECTION, type FakeOci} from '../../../doubles/cloud-api/oci.js'
import {fakeDriverContext} from '../../../doubles/clock.js'
import {driverInput} from '../../../helpers/driver-input.js'

export const CLUSTER = 'oc1test'
export const IMAGE = {x86_64: 'ocid1.image.oc1.uk-london-1.computex86', arm64: 'ocid1.image.oc1.uk-london-1.computearm'}

/** images.json in a new temp dir (its path, and how to remove it). */
export function imagesJson(current: Partial<Record<'x86_64' | 'arm64', string>> = IMAGE) {
  const dir = mkdtempSync(join(tmpdir(), 'citc-oracle-driver-'))
  const file = join(dir, 'images.json')
  const cur = Object.fromEntries(Object.entries(current).map(([arch, id]) => [arch, {name: `citc-${arch}`, version: 'v1', id}]))
  writeFileSync(file, JSON.stringify({version: 1, current: cur, inputs: {}}))
  return {file, remove: () => rmSync(dir, {recursive: true, force: true})}
}

/** What node-programs driverFor hands the factory, flat (driverInput splits it): cluster, sharedDir, the section, a stand-in, confPath. */
export function driverOptions(cloud: FakeOci, images: string, extra: Record<string, unknown> = {}) {
  return {
    cluster: CLUSTER,
    sharedDir: '/mnt/shared',
    ...FAKE_OCI_SECTION,
    endpoints: {api: cloud.url, metadata: cloud.metadataUrl},
    imagesJson: images,
    confPath: '/etc/slurm/slurm.conf',
    ...extra,
  }
}

export const makeDriver = (cloud: FakeOci, images: string, extra: Record<string, unknown> = {}) => oracleDriver(driverInput(driverOptions(cloud, images, extra)))

/** A context on a fake clock (test/doubles/clock.ts), and the retry delays the driver logged per node. */
export function fakeContext(budgetMs = 300_000) {
  const c = fakeDriverContext(budgetMs)
  /** The retry delays the driver logged ("… attempt N; again in X s"), in ms, per node. */
  const retryDelays = (node: string) =>
    c.logs.filter((l) => l.startsWith(`${node}:`) && l.includes('; again in ')).map((l) => Number(/again in ([\d.]+) s/.exec(l)![1]) * 1000)
  return {...c, lines: c.logs, retryDelays}
}
