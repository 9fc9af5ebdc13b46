// `citc doctor`: the tools citc runs and the credentials it would use, checked on this machine.
// Reads files, the environment and the tools' own version output: no network call.
import {homedir} from 'node:os'

import {CitcError} from '../../errors.js'
import type {CloudProvider, CredentialSource} from '../../providers/cloud.js'
import {cloudModule, isCloud, PROVIDER_NAMES, providerModule, type Provider} from '../../providers/registry.js'

import {run, which} from '../../tools/exec.js'
import {compareVersions, detectTerraform, INSTALL_HINT} from '../../tools/terraform.js'
import {monitoringLines, type MonitoringReport} from './check-monitoring.js'

/** The providers whose needs are checked. */
export type Scope = Provider
export const ALL_SCOPES: readonly Scope[] = PROVIDER_NAMES

export interface ToolCheck {
  name: string
  /** What needs it, e.g. "create and destroy on aws, google, oracle". */
  purpose: string
  required: boolean
  ok: boolean
  path?: string
  version?: string
  /** Why it is not ok, or a note. */
  problem?: string
  hint?: string
}

export interface CredentialCheck {
  provider: CloudProvider
  found: Array<Pick<CredentialSource, 'id' | 'label' | 'kind' | 'isDefault' | 'problem' | 'region' | 'project'>>
  /** The one citc would use without being told (the default), if any. */
  wouldUse?: string
}

export interface DoctorReport {
  ok: boolean
  scope: Scope[]
  tools: ToolCheck[]
  credentials: CredentialCheck[]
  /** Names of required tools that are missing or too old. */
  missing: string[]
  /** With -c NAME: that cluster's monitoring (check-monitoring.ts). */
  monitoring?: MonitoringReport
}

/** The machine's report with a cluster's monitoring: not ok when either is not. */
export function withMonitoring(r: DoctorReport, monitoring: MonitoringReport): DoctorReport {
  return {...r, ok: r.ok && monitoring.ok, monitoring}
}

const MIN_NODE = '20.0.0'

async function version(path: string, args: string[], pick: RegExp): Promise<string | undefined> {
  try {
    const r = await run(path, args, {timeoutMs: 30_000})
    return pick.exec(`${r.stdout}\n${r.stderr}`)?.[1]
  } catch {
    return undefined
  }
}

export async function doctor(scope: readonly Scope[] = ALL_SCOPES): Promise<DoctorReport> {
  const clouds = scope.filter((s): s is CloudProvider => isCloud(s))
  const tools: ToolCheck[] = []

  const nodeVersion = process.versions.node
  tools.push({
    name: 'node',
    purpose: 'citc itself',
    required: true,
    ok: compareVersions(nodeVersion, MIN_NODE) >= 0,
    path: process.execPath,
    version: nodeVersion,
    ...(compareVersions(nodeVersion, MIN_NODE) >= 0 ? {} : {problem: `Node.js ${nodeVersion} is older than ${MIN_NODE}`, hint: 'install Node.js 20 or newer'}),
  })

  if (clouds.length > 0) {
    const purpose = `create and destroy on ${clouds.join(', ')}`
    try {
      const tf = await detectTerraform()
      tools.push({name: tf.binary, purpose, required: true, ok: true, path: tf.path, version: tf.version})
    } catch (error) {
      const e = error as CitcError
      tools.push({name: 'terraform', purpose, required: true, ok: false, problem: e.message, hint: e.hint ?? INSTALL_HINT})
    }
    const npm = await which('npm')
    tools.push({
      name: 'npm',
      purpose: 'create on clouds (packs citc to install it on the management node)',
      required: true,
      ok: Boolean(npm),
      ...(npm ? {path: npm, version: await version(npm, ['--version'], /^(\d+\.\d+\.\d+)/m)} : {problem: 'not found on PATH', hint: 'npm comes with Node.js: install it from nodejs.org or your distribution (package npm)'}),
    })
  }

  // The tools a provider needs of its own (local: ansible-playbook), in the registry's order.
  for (const provider of PROVIDER_NAMES.filter((p) => scope.includes(p))) {
    for (const t of providerModule(provider).doctorTools ?? []) {
      if (tools.some((done) => done.name === t.name)) continue
      const path = await which(t.name)
      tools.push({
        name: t.name,
        purpose: t.purpose,
        required: t.required,
        ok: Boolean(path),
        ...(path ? {path, version: await version(path, t.version.args, t.version.pick)} : {problem: 'not found on PATH', hint: t.install}),
      })
    }
  }

  const ssh = await which('ssh')
  tools.push({
    name: 'ssh',
    purpose: 'citc ssh (interactive shell)',
    required: false,
    ok: Boolean(ssh),
    ...(ssh ? {path: ssh, version: await version(ssh, ['-V'], /OpenSSH_([^\s,]+)/)} : {problem: 'not found on PATH', hint: 'install the OpenSSH client (openssh-client)'}),
  })
  const keygen = await which('ssh-keygen')
  tools.push({
    name: 'ssh-keygen',
    purpose: 'making your own SSH keys (citc generates the cluster keys itself)',
    required: false,
    ok: Boolean(keygen),
    ...(keygen ? {path: keygen} : {problem: 'not found on PATH', hint: 'install the OpenSSH client (openssh-client)'}),
  })

  for (const provider of clouds) {
    const {tool, install} = cloudModule(provider).cloud.sweepTool
    const path = await which(tool)
    tools.push({
      name: tool,
      purpose: `destroy on ${provider}: the sweep for leftovers tagged with the cluster`,
      required: false,
      ok: Boolean(path),
      ...(path ? {path, version: await version(path, ['--version'], /(\d+\.\d+\.\d+)/)} : {problem: 'not found on PATH', hint: install}),
    })
  }

  const ctx = {env: process.env, home: process.env.HOME || homedir()}
  const credentials: CredentialCheck[] = await Promise.all(clouds.map(async (provider) => {
    const found = await cloudModule(provider).cloud.discoverCredentials(ctx)
    return {
      provider,
      found: found.map(({id, label, kind, isDefault, problem, region, project}) => ({id, label, kind, isDefault, problem, region, project})),
      wouldUse: (found.find((s) => s.isDefault) ?? found[0])?.label,
    }
  }))

  const missing = tools.filter((t) => t.required && !t.ok).map((t) => t.name)
  return {ok: missing.length === 0, scope: [...scope], tools, credentials, missing}
}

/** The report for people. */
export function doctorLines(r: DoctorReport): string[] {
  const lines: string[] = []
  for (const t of r.tools) {
    const mark = t.ok ? '✓' : t.required ? '✗' : '!'
    const what = t.ok ? `${t.version ? `${t.version} ` : ''}(${t.path})` : `${t.problem}${t.required ? '' : ' (optional)'}`
    lines.push(`${mark} ${t.name.padEnd(19)} ${what}`)
    lines.push(`  ${''.padEnd(19)} for ${t.purpose}${!t.ok && t.hint ? `; ${t.hint}` : ''}`)
  }
  for (const c of r.credentials) {
    if (c.found.length === 0) {
      lines.push(`! ${`${c.provider} credentials`.padEnd(19)} none found in the environment or the usual files`)
      continue
    }
    lines.push(`✓ ${`${c.provider} credentials`.padEnd(19)} ${c.wouldUse ? `would use ${c.wouldUse}` : ''}`)
    for (const s of c.found) lines.push(`  ${''.padEnd(19)} ${s.isDefault ? '*' : '-'} ${s.label}${s.problem ? ` — ${s.problem}` : ''}`)
  }
  if (r.monitoring) lines.push('', ...monitoringLines(r.monitoring))
  const verdict: string[] = []
  if (r.missing.length > 0) verdict.push(`Missing: ${r.missing.join(', ')}.`)
  if (r.monitoring && !r.monitoring.ok) verdict.push(`The monitoring of ${r.monitoring.cluster} needs attention: ${r.monitoring.checks.filter((c) => !c.ok).map((c) => c.name).join(', ')}.`)
  lines.push('', verdict.length === 0 ? 'Everything required is there.' : verdict.join(' '))
  return lines
}
