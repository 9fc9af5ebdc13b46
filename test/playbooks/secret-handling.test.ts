// How the playbooks handle secrets (the munge key, the directory admin's and the accounting database's
// passwords, host private keys), read from every task of every playbook and role: what a task reads
// from a secret under no_log reaches other tasks only under no_log too and never a command line; a
// secret file is read and written under no_log, written with no group/other bits, and generated under
// umask 077; no task passes a password on a command line (ldap -w, mysql -p, sshpass, slappasswd -s).
// The real run is in the fault suite (argv sampled while commands run); this catches the next task
// that slips, before a cluster is made.
import {execFileSync} from 'node:child_process'
import {readdirSync} from 'node:fs'
import {join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'
import {stringify} from 'yaml'

const PLAYBOOKS = join(import.meta.dirname, '../../playbooks')

type Task = Record<string, unknown>
interface Found {
  where: string
  task: Task
}

/** Every task in a list, blocks opened (block, rescue, always). */
function flatten(tasks: unknown, where: string): Found[] {
  if (!Array.isArray(tasks)) return []
  return tasks.flatMap((t: Task, i) => {
    const here = `${where} #${i + 1}${typeof t.name === 'string' ? ` "${t.name}"` : ''}`
    const inner = ['block', 'rescue', 'always'].flatMap((k) => flatten(t[k], here))
    return inner.length > 0 ? inner.map((f) => ({...f, task: {...f.task, no_log: f.task.no_log ?? t.no_log}})) : [{where: here, task: t}]
  })
}

/** Every playbook and role task file, parsed by PyYAML as Ansible parses them (the yaml package is
 * stricter about multi-line quoted scalars than Ansible). One python3 for all files. */
function allTasks(): Found[] {
  const files: Array<{file: string; plays: boolean}> = readdirSync(PLAYBOOKS)
    .filter((f) => f.endsWith('.yml'))
    .map((f) => ({file: f, plays: true}))
  const roles = join(PLAYBOOKS, 'roles')
  for (const role of readdirSync(roles)) {
    for (const dir of ['tasks', 'handlers']) {
      let names: string[] = []
      try {
        names = readdirSync(join(roles, role, dir)).filter((f) => f.endsWith('.yml'))
      } catch {
        continue
      }
      files.push(...names.map((f) => ({file: relative(PLAYBOOKS, join(roles, role, dir, f)), plays: false})))
    }
  }
  const script = 'import json, sys, yaml\nprint(json.dumps([yaml.safe_load(open(f)) for f in sys.argv[1:]]))'
  const docs = JSON.parse(execFileSync('python3', ['-c', script, ...files.map((f) => join(PLAYBOOKS, f.file))], {encoding: 'utf8'})) as unknown[]
  return files.flatMap(({file, plays}, i) => {
    if (!plays) return flatten(docs[i], file)
    return ((docs[i] ?? []) as Array<Record<string, unknown>>).flatMap((play) => ['pre_tasks', 'tasks', 'post_tasks', 'handlers'].flatMap((k) => flatten(play[k], file)))
  })
}

const MODULES = ['command', 'shell', 'copy', 'template', 'slurp', 'file', 'lineinfile', 'blockinfile']
/** The task's module and its arguments (`ansible.builtin.copy:` or `copy:`). */
function moduleOf(t: Task): {module: string; args: Record<string, unknown> | string} | undefined {
  for (const m of MODULES) {
    for (const key of [`ansible.builtin.${m}`, m]) if (t[key] !== undefined) return {module: m, args: t[key] as Record<string, unknown> | string}
  }
  return undefined
}

/** What runs as a command line: argv, cmd, a free-form command, a shell script (never stdin). */
function commandLine(t: Task): string | undefined {
  const m = moduleOf(t)
  if (!m || (m.module !== 'command' && m.module !== 'shell')) return undefined
  if (typeof m.args === 'string') return m.args
  if (Array.isArray(m.args.argv)) return (m.args.argv as unknown[]).join(' ')
  return typeof m.args.cmd === 'string' ? m.args.cmd : undefined
}

/** Files that hold a secret (by variable or path). */
const SECRET_PATH = /(_password_file|citc_secrets_dir|munge_key_src|munge\.key|\/etc\/citc\/secrets|ssh_host_[a-z0-9]+_key(?!\.pub))/

/** The variables registered by no_log tasks: what they hold is secret (or may be). */
function secretRegisters(tasks: Found[]): string[] {
  return [...new Set(tasks.filter((f) => f.task.no_log === true && typeof f.task.register === 'string').map((f) => f.task.register as string))]
}

/** The task's own text without its name, register and conditions (a condition's value is never printed). */
function body(t: Task): string {
  const {name: _n, register: _r, when: _w, changed_when: _c, failed_when: _f, ...rest} = t
  return stringify(rest)
}

/** Uses of a registered variable's content: anything but its status (`is changed`, `.rc`, `.changed`…). */
function contentUses(text: string, v: string): string[] {
  const re = new RegExp(`\\b${v}\\b(\\.[A-Za-z_]+)?(\\s+is\\s+(not\\s+)?(changed|skipped|failed|succeeded|success))?`, 'g')
  return [...text.matchAll(re)].filter((m) => !m[2] && !['.rc', '.changed', '.skipped', '.failed'].includes(m[1] ?? '')).map((m) => m[0])
}

const tasks = allTasks()

describe('secrets in the playbooks', () => {
  it('reads every task (the audit sees the roles that handle secrets)', () => {
    const names = tasks.map((f) => f.where)
    for (const role of ['mariadb', 'ldap', 'slurmdbd', 'munge', 'munge_key', 'ssh_host_keys']) expect(names.some((w) => w.startsWith(`roles/${role}/`))).toBe(true)
    expect(secretRegisters(tasks)).toEqual(expect.arrayContaining(['citc_slurmdbd_db_password', 'citc_ldap_admin_hash']))
  })

  it('uses what a no_log task read only under no_log, and never on a command line', () => {
    const secrets = secretRegisters(tasks)
    const bad: string[] = []
    for (const f of tasks) {
      const text = body(f.task)
      const cmd = commandLine(f.task) ?? ''
      for (const v of secrets) {
        const uses = contentUses(text, v)
        if (uses.length > 0 && f.task.no_log !== true) bad.push(`${f.where}: uses ${uses[0]} without no_log`)
        if (contentUses(cmd, v).length > 0) bad.push(`${f.where}: ${v} on the command line (give it on stdin or in a 0600 file)`)
      }
    }
    expect(bad).toEqual([])
  })

  it('passes no password on a command line', () => {
    const patterns: Array<[RegExp, string]> = [
      [/\bldap[a-z]+\b.*\s-w\s/, 'an LDAP tool with -w (use -y FILE)'],
      [/\bslappasswd\b.*\s-s\s/, 'slappasswd -s (use -T FILE)'],
      [/\bmysql(admin)?\b.*\s(-p\S|--password)/, 'mysql with a password (socket auth, or stdin)'],
      [/\bsshpass\b/, 'sshpass'],
      [/IDENTIFIED BY|PASSWORD\(/i, 'SQL with a password (give it on stdin)'],
      [/StoragePass=/, 'StoragePass'],
    ]
    const bad = tasks.flatMap((f) => {
      const cmd = commandLine(f.task)
      return cmd === undefined ? [] : patterns.filter(([re]) => re.test(cmd)).map(([, what]) => `${f.where}: ${what}`)
    })
    expect(bad).toEqual([])
  })

  it('reads and writes secret files under no_log, with no group/other bits, generated under umask 077', () => {
    const secrets = secretRegisters(tasks)
    const bad: string[] = []
    for (const f of tasks) {
      const m = moduleOf(f.task)
      if (!m) continue
      if (m.module === 'shell') {
        const script = typeof m.args === 'string' ? m.args : String(m.args.cmd ?? '')
        if (/>[^\n]*_password_file/.test(script) && !/umask 0?077/.test(script)) bad.push(`${f.where}: generates a secret file without umask 077`)
      }
      if (typeof m.args === 'string') continue
      const args = m.args
      const src = String(args.src ?? '')
      const dest = String(args.dest ?? args.path ?? '')
      const holdsSecret = secrets.some((v) => contentUses(body(f.task), v).length > 0)
      if (m.module === 'slurp' && SECRET_PATH.test(src) && f.task.no_log !== true) bad.push(`${f.where}: reads ${src} without no_log`)
      if ((m.module === 'copy' || m.module === 'template') && (holdsSecret || SECRET_PATH.test(dest))) {
        if (f.task.no_log !== true && m.module === 'template') bad.push(`${f.where}: writes ${dest} without no_log`)
        const mode = String(args.mode ?? '')
        if (!/^0?[0-7]00$/.test(mode)) bad.push(`${f.where}: writes ${dest} with mode ${mode || '(default: umask)'}`)
      }
    }
    expect(bad).toEqual([])
  })
})
