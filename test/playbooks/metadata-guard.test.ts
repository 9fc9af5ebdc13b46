// Role metadata_guard (cloud management nodes): the cloud's metadata service hands out the machine's
// role credentials and its user-data (with the SSH host private key citc generated) to any local
// process, and the cluster's users log in there. The role's nftables rule, loaded for real in a network
// namespace of the test's own where a server stands in for the metadata service at 169.254.169.254
// (and AWS's and Google's IPv6 addresses): ordinary users (uid >= 1000) are refused on port 80, system accounts
// and the Slurm user (Debian's has uid 64030) are not, other ports (DNS at the same address on Oracle and Google) stay open; loading twice leaves one
// set of rules; teardown's task removes it; Ansible accepts the plays that use it (--syntax-check).
// Root only (namespaces, nft, setpriv).
import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parse} from 'yaml'

import {waitFor} from '../helpers/wait.js'

const ROLE = join(import.meta.dirname, '../../playbooks/roles/metadata_guard')
const root = process.getuid?.() === 0 && spawnSync('nft', ['--version']).status === 0
const NS = `citc-mdg-${process.pid}`

let server: ChildProcess | undefined
let work: string
let rules: string
/** The Slurm user's uid in the rendered rule (Debian's is 64030; any uid >= 1000 shows the exception). */
const SLURM_UID = 4242

const inNs = (argv: string[]) => spawnSync('ip', ['netns', 'exec', NS, ...argv], {encoding: 'utf8', timeout: 20_000})

const SERVER = `
const net = require('net')
let up = 0
for (const [host, port] of [['169.254.169.254', 80], ['169.254.169.254', 53], ['fd00:ec2::254', 80], ['fd20:ce::254', 80]]) {
  net.createServer((s) => { s.on('error', () => {}); s.end('ok') }).listen(port, host, () => { if (++up === 4) console.log('ready') })
}`

const CLIENT = `
const s = require('net').connect({host: process.argv[1], port: Number(process.argv[2])})
s.setTimeout(3000, () => { console.log('timeout'); process.exit(0) })
s.on('connect', () => { console.log('accepted'); s.destroy() })
s.on('error', (e) => console.log(e.code))`

/** How a connection from `uid` to host:port ends: accepted, ECONNREFUSED, timeout… */
function outcome(uid: number, host: string, port: number): string {
  const r = inNs(['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', process.execPath, '-e', CLIENT, host, String(port)])
  return (r.stdout || r.stderr).trim()
}

describe.skipIf(!root)('role metadata_guard', () => {
  beforeAll(async () => {
    // The role's template rendered by Ansible itself, as the role renders it.
    work = mkdtempSync(join(tmpdir(), 'citc-mdg-'))
    rules = join(work, 'metadata-guard.nft')
    const rendered = spawnSync(
      'ansible',
      ['localhost', '-i', 'localhost,', '-c', 'local', '-m', 'ansible.builtin.template', '-a', `src=${join(ROLE, 'templates/metadata-guard.nft.j2')} dest=${rules}`,
        '-e', `citc_metadata_slurm_uid=${SLURM_UID}`, '-e', 'slurm_user=slurm'],
      {encoding: 'utf8', timeout: 120_000, env: {...process.env, ANSIBLE_CONFIG: join(ROLE, '../../ansible.cfg')}},
    )
    expect(rendered.status, rendered.stdout + rendered.stderr).toBe(0)
    expect(spawnSync('ip', ['netns', 'add', NS]).status).toBe(0)
    for (const argv of [
      ['link', 'set', 'lo', 'up'],
      ['addr', 'add', '169.254.169.254/32', 'dev', 'lo'],
      ['-6', 'addr', 'add', 'fd00:ec2::254/128', 'dev', 'lo', 'nodad'],
      ['-6', 'addr', 'add', 'fd20:ce::254/128', 'dev', 'lo', 'nodad'],
    ])
      expect(spawnSync('ip', ['-n', NS, ...argv], {encoding: 'utf8'}).stderr).toBe('')
    let out = ''
    server = spawn('ip', ['netns', 'exec', NS, process.execPath, '-e', SERVER], {stdio: ['ignore', 'pipe', 'inherit']})
    server.stdout!.on('data', (d: Buffer) => (out += d.toString()))
    await waitFor("the stand-in metadata server", () => out.includes("ready"), 15_000)
  })

  afterAll(() => {
    if (server?.pid) process.kill(server.pid, 'SIGKILL')
    spawnSync('ip', ['netns', 'del', NS])
    if (work) rmSync(work, {recursive: true, force: true})
  })

  it('refuses ordinary users on port 80 and nothing else, loads idempotently, and teardown removes it', () => {
    // Without the rule, everyone reaches it (the test can fail).
    expect(outcome(10001, '169.254.169.254', 80)).toBe('accepted')

    for (let i = 0; i < 2; i++) expect(inNs(['nft', '-f', rules]).status).toBe(0)
    const listed = inNs(['nft', 'list', 'table', 'inet', 'citc_metadata_guard']).stdout
    expect(listed.match(/reject/g)).toHaveLength(2)

    expect(outcome(10001, '169.254.169.254', 80)).toBe('ECONNREFUSED')
    expect(outcome(1000, '169.254.169.254', 80)).toBe('ECONNREFUSED')
    expect(outcome(10001, 'fd00:ec2::254', 80)).toBe('ECONNREFUSED')
    expect(outcome(10001, 'fd20:ce::254', 80)).toBe('ECONNREFUSED')
    expect(outcome(0, '169.254.169.254', 80)).toBe('accepted')
    expect(outcome(999, '169.254.169.254', 80)).toBe('accepted')
    // The Slurm user: the node programs launch and terminate instances with the machine's identity.
    expect(outcome(SLURM_UID, '169.254.169.254', 80)).toBe('accepted')
    expect(outcome(SLURM_UID, 'fd00:ec2::254', 80)).toBe('accepted')
    expect(outcome(0, 'fd00:ec2::254', 80)).toBe('accepted')
    expect(outcome(10001, '169.254.169.254', 53)).toBe('accepted')

    // teardown.yml's task, as written there.
    const teardown = parse(readFileSync(join(import.meta.dirname, '../../playbooks/teardown.yml'), 'utf8')) as Array<{tasks: Array<Record<string, unknown>>}>
    const task = teardown[0].tasks.find((t) => t.name === "Remove the metadata service's rule")!
    const removed = inNs(['sh', '-c', task['ansible.builtin.shell'] as string])
    expect(removed.stdout.trim()).toBe('removed')
    expect(outcome(10001, '169.254.169.254', 80)).toBe('accepted')
    expect(inNs(['sh', '-c', task['ansible.builtin.shell'] as string]).stdout.trim()).toBe('')
  })

  it('loads at boot, from the file the role writes', () => {
    const tasks = parse(readFileSync(join(ROLE, 'tasks/main.yml'), 'utf8')) as Array<Record<string, {src?: string; dest?: string; argv?: string[]}>>
    const ruleTask = tasks.find((t) => t['ansible.builtin.template']?.src === 'metadata-guard.nft.j2')!
    const ruleDest = ruleTask['ansible.builtin.template'].dest
    // The uid the template gets is the Slurm user's, looked up on the machine.
    expect(ruleTask.vars).toEqual({citc_metadata_slurm_uid: '{{ ansible_facts.getent_passwd[slurm_user][1] }}'})
    const unit = readFileSync(join(ROLE, 'files/citc-metadata-guard.service'), 'utf8')
    expect(unit).toContain(`ExecStart=/usr/sbin/nft -f ${ruleDest}`)
    expect(unit).toMatch(/^Before=network-pre\.target\b/m)
    expect(unit).toMatch(/^WantedBy=multi-user\.target$/m)
    // systemd reads it without a complaint (it warns, and still exits 0, on an unknown key).
    const verify = spawnSync('systemd-analyze', ['verify', join(ROLE, 'files/citc-metadata-guard.service')], {encoding: 'utf8', timeout: 60_000})
    expect({status: verify.status, said: (verify.stdout + verify.stderr).trim()}).toEqual({status: 0, said: ''})
    expect(tasks.find((t) => t['ansible.builtin.command'])!['ansible.builtin.command'].argv).toEqual(['nft', '-f', ruleDest])
    // Cloud management nodes only: on the local provider this machine is the user's own.
    const play = parse(readFileSync(join(import.meta.dirname, '../../playbooks/management.yml'), 'utf8')) as Array<{roles: Array<string | {role: string; when?: string}>}>
    expect(play[0].roles).toContainEqual({role: 'metadata_guard', when: "provider != 'local'"})
    // And Ansible reads the plays that use it (the role's tasks, teardown's).
    for (const playbook of ['management.yml', 'teardown.yml']) {
      const r = spawnSync('ansible-playbook', ['--syntax-check', '-i', 'localhost,', playbook], {
        cwd: join(import.meta.dirname, '../../playbooks'),
        env: {...process.env, ANSIBLE_CONFIG: 'ansible.cfg'},
        encoding: 'utf8',
        timeout: 120_000,
      })
      expect(r.status, r.stderr).toBe(0)
    }
  })
})
