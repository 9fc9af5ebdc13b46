// What `citc create --provider local` needs, from flags or — on a terminal — a short wizard. Every
// question has a flag; --yes takes the defaults; without a terminal nothing is asked. Questions go
// through Io's prompts (unit-tested with scripted answers).
//
// On a machine with NVIDIA GPUs the catalogue has GPU shapes (local.<type>x1, local.<type>x<n>): the wizard
// asks, per GPU type, one node per GPU (the default), one node with all of them, or none; --gpu-nodes answers
// for every type; --yes and no terminal take one node per GPU.
import {readCreateLimits} from '../finish/limits-file.js'

import {InvalidInputError, type InputProblem} from '../../errors.js'
import {promptsOf, type Io} from '../../io.js'
import {detectHost, gpusByType, localCatalogue} from '../../providers/local/shapes.js'
import {nvidiaGpusDir, type LocalGpu} from '../../providers/local/gpus.js'
import type {CreateLocalInput} from './create-local.js'
import {clusterName} from './cluster-name.js'
import type {GpuNodes} from './create-request.js'

const DEFAULT_SMALL_NODES = 4

/** What was given for a local create (flags, --config); the wizard asks for the rest. */
export interface LocalCreateGiven {
  name?: string
  /** The limits file. */
  limitsFile?: string
  /** Unset: 60 s for a new cluster, unchanged on a re-run. */
  suspendTime?: number
  monitoring?: boolean
  /** --gpu-nodes (or the config key), and where it was given (for a refusal). */
  gpuNodes?: {value: GpuNodes; from: Omit<InputProblem, 'message'>}
  /** The limits file is the one an existing cluster was made with (not given on this run). */
  limitsStored?: boolean
  /** Where this machine's GPUs are listed: '/' unless a stand-in's (tests). */
  gpuRoot?: string
  resume: boolean
  force: boolean
}

/** A local cluster's answers: the flags (and --config) given, the wizard's answers, the defaults. */
export async function resolveLocalCreate(io: Io, given: LocalCreateGiven): Promise<Omit<CreateLocalInput, 'packageRoot' | 'provider'>> {
  const ask = io.interactive && !io.yes
  const prompts = promptsOf(io)
  // This machine, read once: its GPUs decide the question and the defaults, and the catalogue is built from it.
  const host = detectHost(undefined, given.gpuRoot ?? '/')
  const {gpus} = host
  if (given.gpuNodes) refuseGpuNodes(given.gpuNodes.from, gpus, given)
  const name = await clusterName(given.name, '--name', ask ? prompts : undefined)

  let limitsText: string
  let limitsFile: string
  if (given.limitsFile) {
    limitsFile = given.limitsFile
    limitsText = readCreateLimits(given.limitsFile, '--limits')
  } else if (ask) {
    limitsFile = '(wizard)'
    const lines: string[] = []
    const catalogue = localCatalogue(host)
    for (const shapeName of catalogue.names()) {
      const shape = catalogue.get(shapeName)!
      if (shape.gpu) continue // GPU nodes: the question below
      const count = await prompts.number({
        message: `How many ${shapeName} nodes at most (${shape.coresPerSocket * shape.sockets} core(s), ${shape.realMemoryMiB} MiB each)?`,
        default: shapeName === 'local.small' ? DEFAULT_SMALL_NODES : 0,
        min: 0,
        max: 64,
      })
      if (count) lines.push(`${shapeName}: ${count}`)
    }
    for (const [type, list] of gpusByType(gpus)) {
      const choice = given.gpuNodes?.value ?? (await askGpuNodes(io, type, list))
      lines.push(...gpuLimitLines(type, list.length, choice))
    }
    limitsText = lines.join('\n') + '\n'
  } else {
    limitsFile = '(default limits)'
    limitsText = defaultLocalLimits(gpus, given.gpuNodes?.value ?? 'per-gpu')
  }
  return {name, limitsText, limitsFile, suspendTime: given.suspendTime, monitoring: given.monitoring, force: given.force, resume: given.resume}
}

/** Limits without a wizard: local.small: 4, and the GPU nodes chosen (one per GPU by default) of every type. */
export function defaultLocalLimits(gpus: readonly LocalGpu[], choice: GpuNodes): string {
  const lines = [`local.small: ${DEFAULT_SMALL_NODES}`]
  for (const [type, list] of gpusByType(gpus)) lines.push(...gpuLimitLines(type, list.length, choice))
  return lines.join('\n') + '\n'
}

/** limits.yaml lines for n GPUs of a type: n one-GPU nodes, one node with all n, or none. */
export function gpuLimitLines(type: string, n: number, choice: GpuNodes): string[] {
  if (choice === 'none' || n === 0) return []
  return choice === 'all' ? [`local.${type}x${n}: 1`] : [`local.${type}x1: ${n}`]
}

async function askGpuNodes(io: Io, type: string, list: readonly LocalGpu[]): Promise<GpuNodes> {
  const n = list.length
  const devices = list.map((g) => g.device).join(', ')
  return promptsOf(io).select<GpuNodes>({
    message: `This machine has ${n} ${type} GPU(s) (${list[0].modelName}: ${devices}). How should Slurm nodes get them?`,
    choices: [
      {name: `one node per GPU (local.${type}x1, up to ${n} node(s))`, value: 'per-gpu'},
      ...(n >= 2 ? [{name: `one node with all ${n} (local.${type}x${n})`, value: 'all' as const}] : []),
      {name: 'no GPU nodes', value: 'none'},
    ],
    default: 'per-gpu',
  })
}

/** --gpu-nodes where it would change nothing: no GPUs here, or limits that come from a file. */
function refuseGpuNodes(from: Omit<InputProblem, 'message'>, gpus: readonly LocalGpu[], given: LocalCreateGiven): void {
  let message: string | undefined
  if (gpus.length === 0) {
    message = `this machine has no NVIDIA GPU (none listed in ${nvidiaGpusDir(given.gpuRoot ?? '/')}): leave it out`
  } else if (given.limitsFile && given.limitsStored) {
    message = `cluster ${given.name} keeps the limits it was made with (${given.limitsFile}); leave it out, and change the GPU nodes there (local.<type>x1 or local.<type>x<n>) with citc finish`
  } else if (given.limitsFile) {
    message = `the limits file (${given.limitsFile}) says which nodes there are: leave it out, or give the GPU shapes in the limits file (local.<type>x1: N or local.<type>x<n>: 1)`
  }
  if (message) throw new InvalidInputError([{...from, message}])
}
