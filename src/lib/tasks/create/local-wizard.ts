// What `citc create --provider local` needs, from flags or — on a terminal — a short wizard. Every
// question has a flag; --yes takes the defaults; without a terminal nothing is asked. Questions go
// through Io's prompts (unit-tested with scripted answers).
import {readCreateLimits} from '../finish/limits-file.js'

import {promptsOf, type Io} from '../../io.js'
import {localCatalogue} from '../../providers/local/shapes.js'
import type {CreateLocalInput} from './create-local.js'
import {clusterName} from './cluster-name.js'

const DEFAULT_LOCAL_LIMITS = 'local.small: 4\n'

/** What was given for a local create (flags, --config); the wizard asks for the rest. */
export interface LocalCreateGiven {
  name?: string
  /** The limits file. */
  limitsFile?: string
  /** Unset: 60 s for a new cluster, unchanged on a re-run. */
  suspendTime?: number
  monitoring?: boolean
  resume: boolean
  force: boolean
}

/** A local cluster's answers: the flags (and --config) given, the wizard's answers, the defaults. */
export async function resolveLocalCreate(io: Io, given: LocalCreateGiven): Promise<Omit<CreateLocalInput, 'packageRoot' | 'provider'>> {
  const ask = io.interactive && !io.yes
  const prompts = promptsOf(io)
  const name = await clusterName(given.name, '--name', ask ? prompts : undefined)

  let limitsText: string
  let limitsFile: string
  if (given.limitsFile) {
    limitsFile = given.limitsFile
    limitsText = readCreateLimits(given.limitsFile, '--limits')
  } else if (ask) {
    limitsFile = '(wizard)'
    const lines: string[] = []
    const catalogue = localCatalogue()
    for (const shapeName of catalogue.names()) {
      const shape = catalogue.get(shapeName)!
      const count = await prompts.number({
        message: `How many ${shapeName} nodes at most (${shape.coresPerSocket * shape.sockets} core(s), ${shape.realMemoryMiB} MiB each)?`,
        default: shapeName === 'local.small' ? 4 : 0,
        min: 0,
        max: 64,
      })
      if (count) lines.push(`${shapeName}: ${count}`)
    }
    limitsText = lines.join('\n') + '\n'
  } else {
    limitsFile = '(default limits)'
    limitsText = DEFAULT_LOCAL_LIMITS
  }
  return {name, limitsText, limitsFile, suspendTime: given.suspendTime, monitoring: given.monitoring, force: given.force, resume: given.resume}
}
