// One image build, for every provider: citc names it, writes Packer's var file and compute.yml's
// variables on the management node, runs Packer there with the provider's source, and hands the result
// to the provider's builder (collect) — or has it remove what the build left (discard) when Packer
// failed or the build was interrupted. Making the image current, and pruning, is the caller's.
import {CitcError} from '../errors.js'
import type {Arch} from '../shapes/types.js'
import type {Transport} from '../transport/types.js'
import {imageName, imageVersion} from './naming.js'
import type {ImageBuilder, ImageRecord} from '../providers/image-types.js'

export interface BuildOptions {
  cluster: string
  arch: Arch
  /** The digest of what goes in (inputs.ts), recorded with the image. */
  inputs: string
  /** The digest of what goes in but the script (inputs.ts baseInputsDigest): the local builder's cached base is keyed by it. */
  baseInputs?: string
  /** The controller's Slurm package version: the image's slurmd is exactly it. */
  slurmVersion: string
  /** compute.yml's variables (the builder's playbookVars(), read once by the caller for the inputs digest too). */
  playbookVars: Record<string, unknown>
  /** The customisation script, already on the management node. */
  scriptOnManagement?: string
  management: Transport
  signal: AbortSignal
  /** Every line of Packer's output (its own timestamps stripped), as it comes. */
  onLine?: (line: string) => void
  now?: Date
  /** Packer's whole run; default 60 minutes. */
  timeoutMs?: number
}

/** Packer's own progress and summary lines. */
const PACKER_OWN = /^(==>|-->) |^Build '[^']*' (errored|finished)/

/** Packer's -timestamp-ui prefix. */
const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ: /

/**
 * Which step a build is at, from Packer's output: the marker lines citc's provisioning scripts print
 * (`citc-step: …`), refined by the Ansible task running in it.
 */
export class BuildProgress {
  step = 'starting Packer'
  private task?: string
  readonly lines: string[] = []
  /** The image's /etc/citc/image.json, from the `citc-image-json: {…}` line the template prints at the end. */
  imageJson?: Record<string, unknown>

  push(raw: string): string {
    const line = raw.replace(STAMP, '').replace(/^\s*[\w.-]+\.[\w-]+\.[\w-]+: /, '').trimEnd()
    const marker = /citc-step: (.+)$/.exec(line)
    if (marker) {
      this.step = marker[1]
      this.task = undefined
    }
    const json = /citc-image-json: (\{.*\})\s*$/.exec(line)
    if (json) {
      try {
        this.imageJson = JSON.parse(json[1]) as Record<string, unknown>
      } catch {
        // Not what the template prints: the image's record then says nothing it did not read.
      }
    }
    const task = /^TASK \[(.+)\]/.exec(line)
    if (task) this.task = task[1]
    this.lines.push(line)
    if (this.lines.length > 200) this.lines.splice(0, this.lines.length - 200)
    return line
  }

  /** "compute.yml (task slurmd : Install slurmd)" */
  where(): string {
    return this.task ? `${this.step} (task ${this.task})` : this.step
  }

  /** The last lines of the build's own output: Packer's summary lines ("==> …", "--> …", "Build '…' errored") say less. */
  lastLines(n: number): string[] {
    const own = this.lines.filter((l) => l.trim() !== '' && !PACKER_OWN.test(l))
    return (own.length > 0 ? own : this.lines.filter((l) => l.trim() !== '')).slice(-n)
  }
}

export async function buildImage(builder: ImageBuilder, o: BuildOptions): Promise<ImageRecord> {
  const version = imageVersion(o.now ?? new Date())
  const name = imageName(o.cluster, version)
  const build = {name, version, arch: o.arch, slurmVersion: o.slurmVersion}
  const m = o.management
  const root = await builder.packageRoot()
  await m.check(['mkdir', '-p', '-m', '0700', builder.workDir])
  const playbookVarsFile = `${builder.workDir}/${name}.playbook-vars.json`
  const varFile = `${builder.workDir}/${name}.pkrvars.json`
  const manifest = `${builder.workDir}/${name}.manifest.json`
  const progress = new BuildProgress()
  let partial = ''
  const onOutput = (chunk: string) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()!
    for (const l of lines) {
      const line = progress.push(l) // always: `o.onLine?.(push(l))` would skip the push without onLine
      o.onLine?.(line)
    }
  }
  try {
    const playbookVars = {
      ...o.playbookVars,
      slurm_version: o.slurmVersion,
      citc_image: {name, version, cluster: o.cluster, arch: o.arch},
    }
    await m.writeFile(playbookVarsFile, JSON.stringify(playbookVars, null, 2) + '\n', {mode: 0o600})
    const vars = {
      cluster: o.cluster,
      version,
      image_name: name,
      arch: o.arch,
      playbooks_dir: `${root}/playbooks`,
      playbook_vars_file: playbookVarsFile,
      script: o.scriptOnManagement ?? '',
      manifest,
      ...(await builder.vars({...build, ...(o.baseInputs ? {baseInputs: o.baseInputs} : {})})),
    }
    await m.writeFile(varFile, JSON.stringify(vars, null, 2) + '\n', {mode: 0o600})
    const argv = ['packer', 'build', '-color=false', '-timestamp-ui', `-only=${builder.packerOnly}`, `-var-file=${varFile}`, `${root}/templates/packer`]
    const r = await m.run(argv, {signal: o.signal, onOutput, timeoutMs: o.timeoutMs ?? 60 * 60_000, stopIfCitcDies: true})
    if (partial) onOutput('\n')
    if (r.exitCode !== 0) {
      const last = progress.lastLines(6)
      throw new CitcError('remote', `image ${name} failed at ${progress.where()}:\n${last.map((l) => `  ${l}`).join('\n')}`, {
        hint: {fix: 'fix what the lines above say', retry: 'then build again; the current image is unchanged'},
        details: {step: progress.where(), lastLines: last, exitCode: r.exitCode},
      })
    }
    return await builder.collect({...build, inputs: o.inputs, ...(progress.imageJson ? {imageJson: progress.imageJson} : {})})
  } catch (error) {
    await builder.discard(build)
    throw error
  } finally {
    await m.run(['rm', '-f', varFile, playbookVarsFile, manifest]).catch(() => undefined)
  }
}
