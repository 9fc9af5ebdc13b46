// This machine's NVIDIA GPUs, for the local catalogue (one node per GPU, or one node with all of them).
//
// The list comes from the kernel module's own files, <gpuRoot>/proc/driver/nvidia/gpus/<bus id>/information:
// exactly the GPUs nvidia-smi lists, with the device minor (the N of /dev/nvidiaN), and no process to run
// on every catalogue load. gpuRoot is '/' except under a stand-in (src/lib/stand-in.ts driver.gpuRoot: finish
// finds it in cluster.json, create in its --stand-in file), where it is a tree of stand-in files.
//
// Reading never throws: a catalogue load must not fail because one GPU directory is odd (a GPU being
// reset, a file the module writes differently) — that GPU is left out and the others are offered.
import {readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'

export interface LocalGpu {
  /** The model as the driver names it, e.g. "NVIDIA H100 80GB HBM3". */
  modelName: string
  /** Slurm's Gres type made from the model name, e.g. "h100" (see gpuType). */
  type: string
  /** The device minor: the GPU's device file is /dev/nvidia<minor>. */
  minor: number
  /** "/dev/nvidia<minor>". */
  device: string
  /** PCI bus location, e.g. "0000:17:00.0". */
  bus: string
}

/** The directory that holds one folder per GPU, named by its bus id. */
export function nvidiaGpusDir(gpuRoot: string): string {
  return join(gpuRoot, 'proc', 'driver', 'nvidia', 'gpus')
}

// Words of a model name that say nothing about the chip: the brand, memory size, form factor, memory type.
const BRANDS = new Set(['nvidia', 'tesla', 'geforce', 'quadro'])
const FORM_WORD = /^(\d+gb|pcie|sxm\d*|hbm\d*e?|nvl\d*|mig|max-q|mobile|laptop|gpu)$/
// Product lines whose next word is the model: "RTX 4090" → rtx4090, "RTX A6000" → rtxa6000.
const LINE_WORDS = new Set(['rtx', 'gtx', 'titan'])

/**
 * Slurm's Gres type for a model name: lower case, brand and memory/form words dropped, the first word
 * up to its first '-'; RTX/GTX/TITAN joined with the word after them.
 * "NVIDIA H100 80GB HBM3" → h100, "NVIDIA A100-SXM4-80GB" → a100, "NVIDIA GeForce RTX 4090" → rtx4090.
 * A name with nothing left gives "gpu" (a valid type; the user still gets a node per GPU).
 */
export function gpuType(modelName: string): string {
  const words = modelName
    .toLowerCase()
    .split(/\s+/)
    .filter((w) => w && !BRANDS.has(w) && !FORM_WORD.test(w))
  if (words.length === 0) return 'gpu'
  const clean = (w: string) => w.split('-')[0].replace(/[^a-z0-9]/g, '')
  const first = clean(words[0])
  const type = LINE_WORDS.has(first) && words.length > 1 ? first + clean(words[1]) : first
  return type || 'gpu'
}

/** One `information` file's fields ("Key: \t value" lines), or undefined when it is not a usable GPU. */
export function parseGpuInformation(text: string): {modelName: string; bus: string; minor: number; excluded: boolean} | undefined {
  const fields = new Map<string, string>()
  for (const line of text.split('\n')) {
    const m = /^([^:]+):\s*(.*?)\s*$/.exec(line)
    if (m) fields.set(m[1].trim().toLowerCase(), m[2])
  }
  const modelName = fields.get('model')
  const minorText = fields.get('device minor')
  if (!modelName || minorText === undefined || !/^\d+$/.test(minorText)) return undefined
  return {
    modelName,
    bus: fields.get('bus location') ?? '',
    minor: Number(minorText),
    excluded: /^yes$/i.test(fields.get('gpu excluded') ?? ''),
  }
}

/** This machine's usable GPUs (excluded ones and odd directories left out), sorted by device minor. */
export function detectGpus(gpuRoot = '/'): LocalGpu[] {
  const dir = nvidiaGpusDir(gpuRoot)
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return [] // no NVIDIA kernel module (or no stand-in tree): no GPUs
  }
  const gpus: LocalGpu[] = []
  const minors = new Set<number>()
  for (const entry of entries) {
    let text: string
    try {
      text = readFileSync(join(dir, entry, 'information'), 'utf8')
    } catch {
      continue
    }
    const info = parseGpuInformation(text)
    if (!info || info.excluded || minors.has(info.minor)) continue
    minors.add(info.minor)
    gpus.push({
      modelName: info.modelName,
      type: gpuType(info.modelName),
      minor: info.minor,
      device: `/dev/nvidia${info.minor}`,
      bus: info.bus || entry,
    })
  }
  return gpus.sort((a, b) => a.minor - b.minor)
}
