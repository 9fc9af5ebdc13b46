// Flags create would ignore are refused rather than dropped without a word: a flag of another
// provider (`--project` for aws, any cloud flag for local), or, for a cluster that exists, a setting
// that differs from the one it was created with (they are fixed: Terraform made the resources from them).
import {isAbsolute, resolve} from 'node:path'

import type {CloudSettings} from '../../cluster/schema.js'
import type {InputProblem} from '../../errors.js'
import {CLOUD_PROVIDER_NAMES, PROVIDER_MODULES, type Provider} from '../../providers/registry.js'
import {givenFlag, type CreateSettings} from './create-request.js'

type Recorded = ((c: CloudSettings) => string | undefined) | undefined

/** Flags of `citc create` every cloud takes, and where cluster.yaml keeps each (fixed once the cluster is made). */
const CLOUD_FLAGS: Record<string, Recorded> = {
  'ssh-timeout': undefined,
  region: (c) => c.region,
  zone: (c) => c.zone,
  'mgmt-shape': (c) => c.mgmtShape,
  'image-os': (c) => c.imageOs,
  'ssh-cidr': (c) => c.sshCidr,
}

/** Which providers take a flag, and for each where cluster.yaml keeps its value. */
function flagTakers(): Map<string, Map<Provider, Recorded>> {
  const takers = new Map<string, Map<Provider, Recorded>>()
  const add = (flag: string, provider: Provider, recorded?: (c: CloudSettings) => string | undefined) => {
    if (!takers.has(flag)) takers.set(flag, new Map())
    takers.get(flag)!.set(provider, recorded)
  }
  for (const m of PROVIDER_MODULES) {
    if (m.cloud) for (const [flag, recorded] of Object.entries(CLOUD_FLAGS)) add(flag, m.name, recorded)
    for (const [flag, spec] of Object.entries(m.cloud?.flags ?? m.flags ?? {})) add(flag, m.name, spec.recorded ? (c) => spec.recorded!(c) : undefined)
  }
  return takers
}

/** The flags given that `provider` (or the existing cluster) cannot use, each a problem at "--flag". */
export function unusableFlags(provider: Provider, given: CreateSettings, existing?: {name: string; cloud?: CloudSettings}): InputProblem[] {
  const problems: InputProblem[] = []
  for (const [flag, byProvider] of flagTakers()) {
    const value = givenFlag(given, flag)
    if (value === undefined || value === false) continue
    if (!byProvider.has(provider)) {
      const names = [...byProvider.keys()]
      const takers = names.length === CLOUD_PROVIDER_NAMES.length && names.every((p) => (CLOUD_PROVIDER_NAMES as readonly string[]).includes(p)) ? 'cloud providers' : names.join(' and ')
      problems.push({where: `--${flag}`, message: `is for ${takers}, not ${provider}: leave it out`})
      continue
    }
    const recordedOf = byProvider.get(provider)
    if (!existing?.cloud || !recordedOf) continue
    const recorded = recordedOf(existing.cloud)
    const same = recorded !== undefined && (recorded === String(value) || (isAbsolute(recorded) && recorded === resolve(String(value))))
    if (!same) {
      problems.push({
        where: `--${flag}`,
        message: `cluster ${existing.name} exists and was created with ${recorded === undefined ? `no --${flag}` : `--${flag} ${recorded}`}; a cluster's settings are fixed once made: leave --${flag} out to continue it, or choose another --name`,
      })
    }
  }
  return problems
}
