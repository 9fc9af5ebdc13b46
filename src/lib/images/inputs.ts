// What goes into an image, as one digest: `citc create` rebuilds the image only when it changed (the
// template, the compute playbook and the roles it names, the customisation script, the Slurm version,
// the playbook's variables). And what goes into its base (the local provider's cached root filesystem,
// everything an image has before the customisation script runs): the same inputs without the script.
import {createHash} from 'node:crypto'
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {join, relative} from 'node:path'

import {parse} from 'yaml'

/** The roles compute.yml runs (a name, or {role: name}): only changes to these rebuild an image. */
export function computeRoles(computeYml: string): string[] {
  const plays = parse(computeYml) as Array<{roles?: Array<string | {role: string}>}>
  return plays.flatMap((p) => (p.roles ?? []).map((r) => (typeof r === 'string' ? r : r.role)))
}

function filesUnder(dir: string): string[] {
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return []
  }
  return entries.sort().flatMap((e) => {
    const path = join(dir, e)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

export interface ImageInputs {
  /** citc's package (templates/packer/, playbooks/). */
  packageRoot: string
  /** The customisation script's text, if any. */
  script?: string
  slurmVersion: string
  arch: string
  /** compute.yml's variables apart from the image's own name. */
  playbookVars: Record<string, unknown>
}

/** The digest of the template's and playbooks' files, then `tail` (the same order for both digests). */
function digestWith(packageRoot: string, tail: string): string {
  const playbooks = join(packageRoot, 'playbooks')
  const roles = computeRoles(readFileSync(join(playbooks, 'compute.yml'), 'utf8'))
  const files = [
    ...filesUnder(join(packageRoot, 'templates', 'packer')),
    join(playbooks, 'compute.yml'),
    join(playbooks, 'ansible.cfg'),
    ...filesUnder(join(playbooks, 'group_vars')),
    ...filesUnder(join(playbooks, 'connection_plugins')),
    ...roles.flatMap((r) => filesUnder(join(playbooks, 'roles', r))),
  ]
  const h = createHash('sha256')
  for (const f of files) h.update(`${relative(packageRoot, f)}\0`).update(readFileSync(f)).update('\0')
  h.update(tail)
  return h.digest('hex').slice(0, 16)
}

export function imageInputsDigest(i: ImageInputs): string {
  return digestWith(i.packageRoot, `script\0${i.script ?? ''}\0slurm\0${i.slurmVersion}\0arch\0${i.arch}\0vars\0${stableJson(i.playbookVars)}`)
}

/**
 * What goes into an image's base (the local provider's cached root filesystem, before the customisation
 * script): every input of the image (imageInputsDigest) but the script. The local builder adds what
 * its packages come from (providers/local/image-bases.ts baseKey).
 */
export function baseInputsDigest(i: Omit<ImageInputs, 'script'>): string {
  return digestWith(i.packageRoot, `base\0slurm\0${i.slurmVersion}\0arch\0${i.arch}\0vars\0${stableJson(i.playbookVars)}`)
}

/** JSON with every object's keys sorted, so the same variables always give the same digest. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>
    return `{${Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(',')}}`
  }
  return JSON.stringify(v) ?? 'null'
}
