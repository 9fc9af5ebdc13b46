// The local driver and the cluster's image: a node whose current image cannot boot fails at once,
// with the reason Slurm will show — before anything is started (a temp dir stands in for the images).
import {mkdirSync, mkdtempSync, readdirSync, symlinkSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it, vi} from 'vitest'

import {currentLocalImage, localDriver} from '../../../../src/lib/providers/local/driver.js'
import {realContext} from '../../../../src/lib/providers/types.js'

const temps: string[] = []
/** A temp dir removed after the file's tests. */
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'citc-driver-image-'))
  temps.push(d)
  return d
}
afterAll(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

describe('local driver: booting the current image', () => {
  it('fails a node at once, saying why, when the current image has no slurmd', async () => {
    const dir = tempDir()
    const imagesDir = join(dir, 'images')
    mkdirSync(join(imagesDir, 'citc-slurm-compute-demo-v20260101000000', 'rootfs'), {recursive: true})
    symlinkSync('citc-slurm-compute-demo-v20260101000000', join(imagesDir, 'current'))
    const driver = localDriver({imagesDir, runDir: join(dir, 'run'), logDir: join(dir, 'log')})
    // "At once": before the boot's wait for the next second, so the outcome comes on vitest's fake clock without
    // the clock moving (a bound on real elapsed time could fail on a loaded machine).
    vi.useFakeTimers()
    let outcomes: Awaited<ReturnType<typeof driver.resume>> | undefined
    try {
      void driver.resume([{name: 'demo-node-1', shape: 'local.small'}], realContext(() => undefined, 1000)).then((o) => (outcomes = o))
      await vi.advanceTimersByTimeAsync(0)
    } finally {
      vi.useRealTimers()
    }
    const [outcome] = outcomes ?? []
    expect(outcome).toEqual({
      name: 'demo-node-1',
      ok: false,
      error: `image citc-slurm-compute-demo-v20260101000000 cannot boot: ${imagesDir}/citc-slurm-compute-demo-v20260101000000/rootfs/usr/sbin/slurmd is missing (citc rebuild-image makes a new one)`,
    })
    expect(readdirSync(join(dir, 'run')).filter((f) => f.endsWith('.pid'))).toEqual([])
  })

  it('reads which image is current from the `current` link; none without one', () => {
    const dir = tempDir()
    expect(currentLocalImage(dir)).toBeUndefined()
    symlinkSync('img-a', join(dir, 'current'))
    expect(currentLocalImage(dir)).toEqual({name: 'img-a', rootfs: join(dir, 'img-a', 'rootfs')})
  })
})
