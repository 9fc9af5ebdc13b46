// The NVIDIA kernel module's GPU list, /proc/driver/nvidia/gpus/<bus id>/information, as files under a temp
// directory that stands for '/' (a stand-in's driver.gpuRoot): the local catalogue reads exactly these files.
// The text is the module's own layout (driver 535–570): "Key: <tabs/spaces> value" lines.
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

export interface StandInGpu {
  model: string
  minor: number
  /** Default: 0000:<minor+0x17>:00.0. */
  bus?: string
  excluded?: boolean
}

/** The information file of one GPU, as the driver writes it. */
export function gpuInformation(g: StandInGpu & {bus: string}): string {
  return [
    `Model: \t\t ${g.model}`,
    'IRQ:   \t\t 170',
    'GPU UUID: \t GPU-5a2f0e3c-6f7b-4c8e-9d1a-0b2c3d4e5f60',
    'Video BIOS: \t 96.00.99.00.01',
    'Bus Type: \t PCIe',
    'DMA Size: \t 52 bits',
    'DMA Mask: \t 0xfffffffffffff',
    `Bus Location: \t ${g.bus}`,
    `Device Minor: \t ${g.minor}`,
    `GPU Excluded:\t ${g.excluded ? 'Yes' : 'No'}`,
    '',
  ].join('\n')
}

/** A new gpuRoot (under `parent`, default the temp dir) holding these GPUs; the caller removes it. */
export function standInGpuRoot(gpus: StandInGpu[], parent = tmpdir()): string {
  const root = mkdtempSync(join(parent, 'citc-gpu-root-'))
  const dir = join(root, 'proc', 'driver', 'nvidia', 'gpus')
  mkdirSync(dir, {recursive: true})
  for (const g of gpus) {
    const bus = g.bus ?? `0000:${(0x17 + g.minor).toString(16).padStart(2, '0')}:00.0`
    mkdirSync(join(dir, bus))
    writeFileSync(join(dir, bus, 'information'), gpuInformation({...g, bus}))
  }
  return root
}
