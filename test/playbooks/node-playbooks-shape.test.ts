// What the playbooks of joined machines must keep, read from their YAML: node.yml is compute.yml's
// roles in their live-machine mode (one role set for images and machines), the munge key is never
// logged, and node.yml/node-remove.yml become root on the machine (citc may log in as another user).
import {readFileSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {computeRoles} from '../../src/lib/images/inputs.js'
import {ROOT} from '../helpers/cli.js'

const PLAYBOOKS = join(ROOT, 'playbooks')
const read = (path: string) => readFileSync(join(PLAYBOOKS, path), 'utf8')
type Task = Record<string, unknown> & {block?: Task[]}
const play = (file: string) => (parse(read(file)) as Array<Record<string, unknown>>)[0]

/** Every task of a task list, blocks opened. */
const allTasks = (tasks: Task[]): Task[] => tasks.flatMap((t) => [t, ...allTasks(t.block ?? [])])

describe('node.yml and its companions', () => {
  it("node.yml runs compute.yml's roles, no copies of them, in live-machine mode", () => {
    const node = play('node.yml')
    const roles = computeRoles(read('node.yml'))
    expect(roles.length).toBeGreaterThan(0)
    expect(computeRoles(read('compute.yml'))).toEqual(expect.arrayContaining(roles))
    expect(node.vars).toMatchObject({citc_live_node: true})
  })

  it('copies the munge key only in tasks that are never logged', () => {
    const tasks = allTasks(parse(read('roles/munge_key/tasks/main.yml')) as Task[])
    const copies = tasks.filter((t) => {
      const copy = t['ansible.builtin.copy'] as Record<string, unknown> | undefined
      return copy !== undefined && String(copy.src).includes('munge_key_src')
    })
    // One for images (a file on the build machine), one for machines that join (a management node's file).
    expect(copies.length).toBe(2)
    for (const t of copies) expect(t.no_log).toBe(true)
  })

  it('becomes root on the machine (a no-op when citc logs in as root), not on the management node', () => {
    expect(play('node.yml').become).toBe(true)
    expect(play('node-remove.yml').become).toBe(true)
    expect(play('joined-management.yml').become).toBe(false)
  })

  it('marks the machine as joined before any role changes it, and node-remove.yml unmarks it', () => {
    // citc node add's preflight takes a machine with this mark for its own earlier join: a run that
    // failed half-way (slurmd, munged already there) is continued, not refused as a foreign Slurm.
    const marks = (tasks: Task[] = []) => tasks.filter((t) => (t['ansible.builtin.copy'] as {dest?: string} | undefined)?.dest === '/etc/citc-joined')
    const node = play('node.yml') as {pre_tasks?: Task[]; tasks?: Task[]; post_tasks?: Task[]}
    expect(marks(node.pre_tasks)).toHaveLength(1)
    expect(marks(node.tasks)).toHaveLength(0)
    expect(marks(node.post_tasks)).toHaveLength(0)
    expect(String((marks(node.pre_tasks)[0]['ansible.builtin.copy'] as {content: string}).content)).toBe('{{ cluster_name }} {{ joined_name }}\n')
    const removes = ((play('node-remove.yml').tasks ?? []) as Task[]).filter((t) => (t['ansible.builtin.file'] as {path?: string; state?: string} | undefined)?.path === '/etc/citc-joined')
    expect(removes.map((t) => (t['ansible.builtin.file'] as {state: string}).state)).toEqual(['absent'])
  })
})

describe('management.yml', () => {
  // slurmctld resolves its users' uids when it starts: started before the directory (a re-run after a
  // power cut), every directory user's jobs were refused InvalidAccount (the fault suite found it).
  it('starts the directory (ldap, nss) before slurmctld (slurm), and orders it so at boot under systemd', () => {
    const roles = (play('management.yml').roles as Array<string | {role: string}>).map((r) => (typeof r === 'string' ? r : r.role))
    expect(roles.indexOf('ldap')).toBeGreaterThanOrEqual(0)
    expect(roles.indexOf('nss')).toBeLessThan(roles.indexOf('slurm'))
    expect(roles.indexOf('ldap')).toBeLessThan(roles.indexOf('slurm'))
    expect(read('roles/slurm/tasks/main.yml')).toMatch(/After=slapd\.service nslcd\.service/)
  })
})
