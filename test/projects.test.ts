// The vitest projects (vitest.projects.ts): every test file runs in exactly one of unit, integration
// e2e and faults, and a unit file starts no daemon, needs no build and drives nothing on a terminal — so
// `npm run test:unit` stays quick and runs without root. A new file lands in unit unless listed.
import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {E2E, FAULTS, INTEGRATION} from '../vitest.projects.js'

const ROOT = join(import.meta.dirname, '..')
const DIR_GLOB = '/**/*.test.ts'

const testFiles = readdirSync(join(ROOT, 'test'), {recursive: true, encoding: 'utf8'})
  .filter((f) => f.endsWith('.test.ts'))
  .map((f) => `test/${f.split('\\').join('/')}`)
  .sort()

/** An entry of the lists: a file, or a directory as `DIR/**\/*.test.ts`. */
const matches = (entry: string, file: string) => (entry.endsWith(DIR_GLOB) ? file.startsWith(entry.slice(0, -DIR_GLOB.length) + '/') : file === entry)
const projectsOf = (file: string) => [
  ...(INTEGRATION.some((e) => matches(e, file)) ? ['integration'] : []),
  ...(E2E.some((e) => matches(e, file)) ? ['e2e'] : []),
  ...(FAULTS.some((e) => matches(e, file)) ? ['faults'] : []),
]

/** What makes a file integration or e2e: a helper that starts a daemon or a pty, the built CLI, a playbook. */
const NOT_UNIT: Array<[RegExp, string]> = [
  [/\b(startSshd|slurmSandbox|startSlapd|startPrometheus)\(/, 'starts a daemon (sshd, slurmctld, slapd, prometheus)'],
  [/\bstartMachine\(/, 'starts a machine (namespaces with their own sshd, root)'],
  [/\brunOnPty\(/, 'drives citc on a pseudo-terminal'],
  [/\blockSystem\(/, "takes the machine lock (configures this machine's services)"],
  [/\b(citc|cliSandbox)\(|'dist\/[\w/]+\.js'/, 'runs or packs the built CLI (needs npm run build)'],
  [/\brunPlaybook\(/, 'runs a playbook'],
  // `slurmd -C` and `slurmd -G` print the node's hardware or GPUs and exit: no daemon.
  [/['"](ansible-playbook|slurmctld|slurmd|sshd|slapd|munged|mariadbd|mysqld)['"]\s*,\s*\[(?!\s*'-[CG]')/, 'runs a daemon or a playbook'],
]

describe('vitest projects', () => {
  it('finds the test files', () => {
    expect(testFiles.length).toBeGreaterThan(40)
    expect(testFiles).toContain('test/projects.test.ts')
  })

  it('lists only files and directories that exist', () => {
    for (const entry of [...INTEGRATION, ...E2E, ...FAULTS]) {
      const path = entry.endsWith(DIR_GLOB) ? entry.slice(0, -DIR_GLOB.length) : entry
      expect(existsSync(join(ROOT, path)), entry).toBe(true)
    }
  })

  it('puts every file in at most one of integration, e2e and faults (unit takes the rest)', () => {
    for (const file of testFiles) expect(projectsOf(file).length, `${file}: ${projectsOf(file).join(', ')}`).toBeLessThanOrEqual(1)
  })

  it('keeps daemons, pseudo-terminals, the built CLI and playbooks out of unit', () => {
    const misplaced: string[] = []
    for (const file of testFiles.filter((f) => projectsOf(f).length === 0)) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      for (const [pattern, why] of NOT_UNIT) if (pattern.test(text)) misplaced.push(`${file} ${why}: list it in vitest.projects.ts`)
    }
    expect(misplaced).toEqual([])
  })

  const reasons = (file: string) => NOT_UNIT.filter(([p]) => p.test(readFileSync(join(ROOT, file), 'utf8'))).map(([, why]) => why)

  it('lists in integration and e2e only files that do one of those things', () => {
    const listedForNothing = testFiles.filter((f) => projectsOf(f).length > 0 && reasons(f).length === 0)
    expect(listedForNothing).toEqual([])
  })

  it('would catch a misplaced file (the patterns match what the listed files do)', () => {
    expect(reasons('test/lib/transport/ssh/index.test.ts')).toContain('starts a daemon (sshd, slurmctld, slapd, prometheus)')
    expect(reasons('test/lib/monitoring/page.test.ts')).toContain('starts a daemon (sshd, slurmctld, slapd, prometheus)')
    expect(reasons('test/cli/wizard.test.ts')).toContain('drives citc on a pseudo-terminal')
    expect(reasons('test/cli/errors.test.ts')).toContain('runs or packs the built CLI (needs npm run build)')
    expect(reasons('test/playbooks/group-vars.test.ts')).toContain('runs a daemon or a playbook')
  })
})
