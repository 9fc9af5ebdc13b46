// What a local GPU node gets of this machine's NVIDIA stack: its own device files as gres.conf gives
// them, and the driver's user-space (a stand-in tree; the boot itself is in test/e2e/local-cluster).
import {mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {driverUserspace, gpuFilesOf, readGresConf} from '../../../../src/lib/providers/local/gpu-node.js'
import {localDriver} from '../../../../src/lib/providers/local/driver.js'
import {realContext} from '../../../../src/lib/providers/types.js'
import {makeGpuStandin, STANDIN_DRIVER} from '../../../helpers/gpu-standin.js'

const temps: string[] = []
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'citc-gpu-node-'))
  temps.push(d)
  return d
}
afterAll(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

const GRES = `# Managed by citc
NodeName=ws-local-h100x1-0001 Name=gpu Type=h100 File=/dev/nvidia0
NodeName=ws-local-h100x1-0002 Name=gpu Type=h100 File=/dev/nvidia2
NodeName=ws-local-h100x2-0001 Name=gpu Type=h100 File=/dev/nvidia[1,3]
NodeName=lab-g6-xlarge-[0001-0004] Name=gpu Type=l4 File=/dev/nvidia0
NodeName=ws-local-small-0001 Name=mps Count=100 File=/dev/nvidia9
`

describe("a local GPU node's devices (gres.conf)", () => {
  it('are the File= of the Name=gpu lines that name it, expanded; none for a node no line names', () => {
    expect(gpuFilesOf(GRES, 'ws-local-h100x1-0001')).toEqual(['/dev/nvidia0'])
    expect(gpuFilesOf(GRES, 'ws-local-h100x1-0002')).toEqual(['/dev/nvidia2'])
    expect(gpuFilesOf(GRES, 'ws-local-h100x2-0001')).toEqual(['/dev/nvidia1', '/dev/nvidia3'])
    expect(gpuFilesOf(GRES, 'lab-g6-xlarge-0003')).toEqual(['/dev/nvidia0'])
    // Not a gpu line; not named at all.
    expect(gpuFilesOf(GRES, 'ws-local-small-0001')).toBeUndefined()
    expect(gpuFilesOf(GRES, 'ws-local-h100x1-0003')).toBeUndefined()
    expect(gpuFilesOf('', 'x')).toBeUndefined()
  })

  it('are read from gres.conf beside slurm.conf, or nothing without one', () => {
    const dir = tempDir()
    expect(readGresConf(join(dir, 'slurm.conf'))).toBe('')
    writeFileSync(join(dir, 'gres.conf'), GRES)
    expect(readGresConf(join(dir, 'slurm.conf'))).toBe(GRES)
  })
})

describe("the host's driver user-space", () => {
  it('is nvidia-smi and the driver libraries (links kept as links), each at its path below the root; nothing else', () => {
    const root = makeGpuStandin(2, {dir: tempDir()})
    const lib = '/usr/lib/x86_64-linux-gnu'
    expect(driverUserspace(root)).toEqual([
      {source: join(root, 'usr/bin/nvidia-smi'), target: '/usr/bin/nvidia-smi'},
      {source: join(root, lib, 'libcuda.so.1'), target: `${lib}/libcuda.so.1`},
      {source: join(root, lib, `libcuda.so.${STANDIN_DRIVER}`), target: `${lib}/libcuda.so.${STANDIN_DRIVER}`},
      {source: join(root, lib, 'libnvidia-ml.so.1'), target: `${lib}/libnvidia-ml.so.1`},
      {source: join(root, lib, `libnvidia-ml.so.${STANDIN_DRIVER}`), target: `${lib}/libnvidia-ml.so.${STANDIN_DRIVER}`},
    ])
  })

  it('is empty on a machine without NVIDIA’s driver', () => {
    expect(driverUserspace(tempDir())).toEqual([])
  })
})

describe('the local driver refuses a GPU node it cannot give its GPUs, at once and saying why', () => {
  /** A cluster with an image that has a slurmd, and this gres.conf beside its slurm.conf. */
  function cluster(gres: string) {
    const dir = tempDir()
    const rootfs = join(dir, 'images', 'img-v1', 'rootfs')
    mkdirSync(join(rootfs, 'usr/sbin'), {recursive: true})
    writeFileSync(join(rootfs, 'usr/sbin/slurmd'), '')
    symlinkSync('img-v1', join(dir, 'images', 'current'))
    mkdirSync(join(dir, 'etc'))
    writeFileSync(join(dir, 'etc', 'gres.conf'), gres)
    const gpuRoot = makeGpuStandin(2, {dir: join(dir, 'gpu')})
    return localDriver({imagesDir: join(dir, 'images'), runDir: join(dir, 'run'), logDir: join(dir, 'log'), confPath: join(dir, 'etc', 'slurm.conf'), gpuRoot})
  }
  const resume = async (driver: ReturnType<typeof localDriver>, name: string, gpus?: number) =>
    (await driver.resume([{name, shape: 'local.h100x1', ...(gpus ? {gpus} : {})}], realContext(() => undefined, 1000)))[0]

  it('a device gres.conf names that this machine does not have (no dev/nvidia0 in the stand-in without devices)', async () => {
    const outcome = await resume(cluster('NodeName=ws-local-h100x1-0001 Name=gpu Type=h100 File=/dev/nvidia0\n'), 'ws-local-h100x1-0001', 1)
    expect(outcome).toEqual({
      name: 'ws-local-h100x1-0001',
      ok: false,
      error: "citc: gpu: /dev/nvidia0 is not on this machine (gres.conf's File= for ws-local-h100x1-0001); is NVIDIA's driver loaded? nvidia-smi -L lists the GPUs",
    })
  })

  it('a node slurm.conf gives GPUs that gres.conf gives no device', async () => {
    const outcome = await resume(cluster('# none\n'), 'ws-local-h100x1-0002', 1)
    expect(outcome).toEqual({name: 'ws-local-h100x1-0002', ok: false, error: 'citc: config: gres.conf gives ws-local-h100x1-0002 no GPU device file; run citc finish'})
  })

  it('a GPU node of a cluster without an image (its own /dev needs one)', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'gres.conf'), 'NodeName=n1 Name=gpu File=/dev/nvidia0\n')
    const driver = localDriver({imagesDir: join(dir, 'no-images'), runDir: join(dir, 'run'), logDir: join(dir, 'log'), confPath: join(dir, 'slurm.conf')})
    expect(await resume(driver, 'n1', 1)).toEqual({name: 'n1', ok: false, error: 'citc: config: GPU nodes boot from an image (their own /dev); run citc rebuild-image'})
  })
})
