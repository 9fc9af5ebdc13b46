// The Ansible adapter's parsing, fed with output captured from real ansible-playbook 2.14 runs on
// Debian 12 (the default callback, no colour): citc's management.yml and small playbooks that fail
// in each way Ansible can. runPlaybook itself runs for real in test/e2e/playbooks.test.ts.
import {spawn, spawnSync} from 'node:child_process'
import {copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join, resolve} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CitcError} from '../../../src/lib/errors.js'
import {pidAlive, procStat} from '../../../src/lib/proc.js'
import {localTransport} from '../../../src/lib/transport/local.js'
import {waitFor} from '../../helpers/wait.js'

import {
  PlaybookOutputParser,
  failureMessage,
  parseFailureLine,
  parseRecapLine,
  parseTaskLine,
  playbookArgv,
  playbookEnv,
  PlaybookError,
  recapSucceeded,
  runPlaybook,
  type OutputParserOptions,
} from '../../../src/lib/tools/ansible.js'

/** A whole captured output through the parser runPlaybook streams into. */
function parsePlaybookOutput(text: string, exitCode: number, opts: OutputParserOptions = {}) {
  const p = new PlaybookOutputParser(opts)
  p.push(text)
  p.end()
  return p.result(exitCode)
}

// management.yml, first run on this machine (middle tasks left out)
const SUCCESS = `
PLAY [Management node] *********************************************************

TASK [Gathering Facts] *********************************************************
ok: [localhost]

TASK [common : Check the variables citc passes] ********************************
ok: [localhost]

TASK [common : Create citc's configuration directory] **************************
changed: [localhost]

TASK [citc_programs : Install the node programs] *******************************
changed: [localhost] => (item=resume)
changed: [localhost] => (item=suspend)
changed: [localhost] => (item=resume-fail)

TASK [citc_programs : Describe the cluster for the node programs] **************
changed: [localhost]

RUNNING HANDLER [slurmdbd : Restart slurmdbd] **********************************
changed: [localhost]

RUNNING HANDLER [nss : Restart nslcd] ******************************************
changed: [localhost]

PLAY RECAP *********************************************************************
localhost                  : ok=54   changed=36   unreachable=0    failed=0    skipped=6    rescued=0    ignored=0   

`

// an ignored failure, a rescued one, an ignored loop item, an ignored no_log task, then a real failure
const FAILURES = `
PLAY [Samples] *****************************************************************

TASK [Ignored failure] *********************************************************
fatal: [localhost]: FAILED! => {"ansible_facts": {"discovered_interpreter_python": "/usr/bin/python3"}, "changed": true, "cmd": ["/bin/false"], "delta": "0:00:00.004743", "end": "2026-11-21 05:10:19.235169", "msg": "non-zero return code", "rc": 1, "start": "2026-11-21 05:10:19.230426", "stderr": "", "stderr_lines": [], "stdout": "", "stdout_lines": []}
...ignoring

TASK [Fails inside a block] ****************************************************
fatal: [localhost]: FAILED! => {"changed": false, "msg": "rescued soon"}

TASK [Rescue task] *************************************************************
ok: [localhost] => {
    "msg": "rescued"
}

TASK [Loop with a failing item] ************************************************
changed: [localhost] => (item=a)
failed: [localhost] (item=b) => {"ansible_loop_var": "item", "changed": true, "cmd": ["test", "b", "=", "a"], "delta": "0:00:00.003739", "end": "2026-11-21 05:10:19.785040", "item": "b", "msg": "non-zero return code", "rc": 1, "start": "2026-11-21 05:10:19.781301", "stderr": "", "stderr_lines": [], "stdout": "", "stdout_lines": []}
...ignoring

TASK [Secret failure] **********************************************************
fatal: [localhost]: FAILED! => {"censored": "the output has been hidden due to the fact that 'no_log: true' was specified for this result", "changed": true}
...ignoring

TASK [Install something] *******************************************************
fatal: [localhost]: FAILED! => {"ansible_facts": {"discovered_interpreter_python": "/usr/bin/python3"}, "changed": true, "cmd": "echo \\"E: Unable to locate package nosuchpkg\\" >&2; exit 100", "delta": "0:00:00.003087", "end": "2026-11-21 05:10:20.487724", "msg": "non-zero return code", "rc": 100, "start": "2026-11-21 05:10:20.484637", "stderr": "E: Unable to locate package nosuchpkg", "stderr_lines": ["E: Unable to locate package nosuchpkg"], "stdout": "", "stdout_lines": []}

PLAY RECAP *********************************************************************
localhost                  : ok=4    changed=3    unreachable=0    failed=1    skipped=0    rescued=1    ignored=3   

`

// one item of a loop fails
const LOOP_FAILURE = `
PLAY [More samples] ************************************************************

TASK [Loop with a failing item] ************************************************
changed: [localhost] => (item=a)
failed: [localhost] (item=b) => {"ansible_loop_var": "item", "changed": true, "cmd": ["test", "b", "=", "a"], "delta": "0:00:00.007139", "end": "2026-11-21 05:10:27.544554", "item": "b", "msg": "non-zero return code", "rc": 1, "start": "2026-11-21 05:10:27.537415", "stderr": "", "stderr_lines": [], "stdout": "", "stdout_lines": []}

PLAY RECAP *********************************************************************
localhost                  : ok=0    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0   

`

// apt cannot find a package
const APT_FAILURE = `
PLAY [Apt sample] **************************************************************

TASK [Install packages] ********************************************************
fatal: [localhost]: FAILED! => {"ansible_facts": {"discovered_interpreter_python": "/usr/bin/python3"}, "changed": false, "msg": "No package matching 'nosuchpkg-citc' is available"}

PLAY RECAP *********************************************************************
localhost                  : ok=0    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0   

`

// ssh to a closed port, in a loop
const UNREACHABLE_LOOP = `
PLAY [More samples] ************************************************************

TASK [Loop with a failing item] ************************************************
failed: [127.0.0.1] (item=a) => {"ansible_loop_var": "item", "item": "a", "msg": "Data could not be sent to remote host \\"127.0.0.1\\". Make sure this host can be reached over ssh: ssh: connect to host 127.0.0.1 port 1: Connection refused\\r\\n", "unreachable": true}
failed: [127.0.0.1] (item=b) => {"ansible_loop_var": "item", "item": "b", "msg": "Data could not be sent to remote host \\"127.0.0.1\\". Make sure this host can be reached over ssh: ssh: connect to host 127.0.0.1 port 1: Connection refused\\r\\n", "unreachable": true}
fatal: [127.0.0.1]: UNREACHABLE! => {"changed": false, "msg": "All items completed", "results": [{"ansible_loop_var": "item", "item": "a", "msg": "Data could not be sent to remote host \\"127.0.0.1\\". Make sure this host can be reached over ssh: ssh: connect to host 127.0.0.1 port 1: Connection refused\\r\\n", "unreachable": true}, {"ansible_loop_var": "item", "item": "b", "msg": "Data could not be sent to remote host \\"127.0.0.1\\". Make sure this host can be reached over ssh: ssh: connect to host 127.0.0.1 port 1: Connection refused\\r\\n", "unreachable": true}]}

PLAY RECAP *********************************************************************
127.0.0.1                  : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0   

`

// ssh to a closed port while gathering facts (management.yml)
const UNREACHABLE = `
PLAY [Management node] *********************************************************

TASK [Gathering Facts] *********************************************************
fatal: [127.0.0.1]: UNREACHABLE! => {"changed": false, "msg": "Data could not be sent to remote host \\"127.0.0.1\\". Make sure this host can be reached over ssh: ssh: connect to host 127.0.0.1 port 1: Connection refused\\r\\n", "unreachable": true}

PLAY RECAP *********************************************************************
127.0.0.1                  : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0   

`

// -e @file that does not exist: warnings, ERROR!, no recap
const MISSING_VARS_FILE = `[WARNING]:  * Failed to parse localhost, with host_list plugin: Unable to
retrieve file contents Could not find or access '/nonexistent.json' on the
Ansible Controller. If you are using a module and expect the file to exist on
the remote, see the remote_src option
[WARNING]: Unable to parse localhost, as an inventory source
[WARNING]: No inventory was parsed, only implicit localhost is available
ERROR! Unable to retrieve file contents
Could not find or access '/nonexistent.json' on the Ansible Controller.
If you are using a module and expect the file to exist on the remote, see the remote_src option
`

// a YAML error in the playbook (stderr)
const SYNTAX_ERROR = `ERROR! We were unable to read either as JSON nor YAML, these are the errors we got from each:
JSON: Expecting value: line 1 column 1 (char 0)

Syntax Error while loading YAML.
  mapping values are not allowed in this context

The error appears to be in '/tmp/pbsamples/fail.yml': line 26, column 46, but may
be elsewhere in the file depending on the exact syntax problem.

The offending line appears to be:

    - name: Install something
      ansible.builtin.command: sh -c 'echo "E: Unable to locate package nosuchpkg" >&2; exit 100'
                                             ^ here
`

// management.yml with a provider it does not know
const ASSERT_FAILURE = `
PLAY [Management node] *********************************************************

TASK [Gathering Facts] *********************************************************
ok: [localhost]

TASK [common : Check the variables citc passes] ********************************
fatal: [localhost]: FAILED! => {"assertion": "provider in ['local', 'aws', 'google', 'oracle', 'azure']", "changed": false, "evaluated_to": false, "msg": "bad variables: provider=nimbus cluster_name=citc slurm_user=slurm shared_dir=/mnt/shared citc_bin=(undefined)"}

PLAY RECAP *********************************************************************
localhost                  : ok=1    changed=0    unreachable=0    failed=1    skipped=0    rescued=0    ignored=0   

`

describe('line parsers', () => {
  it('reads task and handler names', () => {
    expect(parseTaskLine('TASK [common : Install packages] ***********************************************')).toBe('common : Install packages')
    expect(parseTaskLine('TASK [Gathering Facts] *********************************************************')).toBe('Gathering Facts')
    expect(parseTaskLine('RUNNING HANDLER [nss : Restart nslcd] ******************************************')).toBe('nss : Restart nslcd')
    expect(parseTaskLine("TASK [ldap : Refuse a database for dc=citc,dc=local that citc did not make] ***")).toBe(
      'ldap : Refuse a database for dc=citc,dc=local that citc did not make',
    )
    expect(parseTaskLine('PLAY [Management node] *****')).toBeUndefined()
    expect(parseTaskLine('ok: [localhost] => (item=TASK [x])')).toBeUndefined()
  })

  it('reads a recap line', () => {
    expect(parseRecapLine('localhost                  : ok=49   changed=0    unreachable=0    failed=0    skipped=10   rescued=0    ignored=0   ')).toEqual({
      host: 'localhost',
      stats: {ok: 49, changed: 0, unreachable: 0, failed: 0, skipped: 10, rescued: 0, ignored: 0},
    })
    expect(parseRecapLine('127.0.0.1                  : ok=0    changed=0    unreachable=1    failed=0    skipped=0    rescued=0    ignored=0')?.stats.unreachable).toBe(1)
    expect(parseRecapLine('changed: [localhost]')).toBeUndefined()
  })

  it('reads fatal and failed lines', () => {
    const apt = APT_FAILURE.split('\n').find((l) => l.startsWith('fatal:'))!
    expect(parseFailureLine(apt)).toEqual({
      host: 'localhost',
      item: undefined,
      unreachable: false,
      message: "No package matching 'nosuchpkg-citc' is available",
    })
    const item = LOOP_FAILURE.split('\n').find((l) => l.startsWith('failed:'))!
    expect(parseFailureLine(item)).toMatchObject({host: 'localhost', item: 'b', unreachable: false, message: 'non-zero return code (exit 1)'})
    const unreachable = UNREACHABLE.split('\n').find((l) => l.startsWith('fatal:'))!
    expect(parseFailureLine(unreachable)).toMatchObject({host: '127.0.0.1', unreachable: true})
    expect(parseFailureLine(unreachable)?.message).toContain('Connection refused')
    expect(parseFailureLine('ok: [localhost]')).toBeUndefined()
  })

  it('says what failed in a result, and never shows a no_log result', () => {
    expect(failureMessage({msg: 'non-zero return code', rc: 100, stderr: 'E: Unable to locate package x', stdout: ''})).toBe(
      'non-zero return code (exit 100): E: Unable to locate package x',
    )
    expect(failureMessage({msg: 'non-zero return code', rc: 1, stderr: '', stdout: 'out'})).toBe('non-zero return code (exit 1): out')
    expect(failureMessage({censored: "the output has been hidden due to the fact that 'no_log: true' was specified for this result"})).toMatch(/hidden/)
    expect(failureMessage({msg: 'All items completed', results: [{msg: 'ok'}, {failed: true, msg: 'broke'}]})).toBe('All items completed')
    expect(failureMessage({results: [{msg: 'ok'}, {failed: true, msg: 'broke'}]})).toBe('broke')
  })
})

describe('a whole run', () => {
  it('follows a successful run: every task in order, the recap, no failure', () => {
    const tasks: string[] = []
    const r = parsePlaybookOutput(SUCCESS, 0, {onTask: (t) => tasks.push(t)})
    expect(r.ok).toBe(true)
    expect(r.failedTask).toBeUndefined()
    expect(r.recap).toEqual({localhost: {ok: 54, changed: 36, unreachable: 0, failed: 0, skipped: 6, rescued: 0, ignored: 0}})
    expect(tasks).toEqual([
      'Gathering Facts',
      'common : Check the variables citc passes',
      "common : Create citc's configuration directory",
      'citc_programs : Install the node programs',
      'citc_programs : Describe the cluster for the node programs',
      'slurmdbd : Restart slurmdbd',
      'nss : Restart nslcd',
    ])
    expect(r.lastLines.at(-1)).toMatch(/^localhost\s+: ok=54/)
  })

  it('reports the failure that counts: not the ignored, rescued or hidden ones before it', () => {
    const r = parsePlaybookOutput(FAILURES, 2)
    expect(r.ok).toBe(false)
    expect(r.recap.localhost).toMatchObject({failed: 1, rescued: 1, ignored: 3})
    expect(r.failedTask).toEqual({
      name: 'Install something',
      host: 'localhost',
      item: undefined,
      unreachable: false,
      message: 'non-zero return code (exit 100): E: Unable to locate package nosuchpkg',
    })
  })

  it('names the loop item that failed', () => {
    const r = parsePlaybookOutput(LOOP_FAILURE, 2)
    expect(r.ok).toBe(false)
    expect(r.failedTask).toMatchObject({name: 'Loop with a failing item', item: 'b'})
  })

  it('reports an apt failure with apt\'s message', () => {
    const r = parsePlaybookOutput(APT_FAILURE, 2)
    expect(r.failedTask).toMatchObject({name: 'Install packages', message: "No package matching 'nosuchpkg-citc' is available"})
  })

  it('fails on an unreachable host, even with failed=0 in the recap', () => {
    for (const sample of [UNREACHABLE, UNREACHABLE_LOOP]) {
      const r = parsePlaybookOutput(sample, 4)
      expect(r.ok).toBe(false)
      expect(r.recap['127.0.0.1']).toMatchObject({failed: 0, unreachable: 1})
      expect(r.failedTask?.unreachable).toBe(true)
      expect(r.failedTask?.message).toContain('ssh: connect to host 127.0.0.1 port 1: Connection refused')
    }
    expect(parsePlaybookOutput(UNREACHABLE, 4).failedTask?.name).toBe('Gathering Facts')
    expect(parsePlaybookOutput(UNREACHABLE_LOOP, 4).failedTask?.item).toBe('b')
    expect(recapSucceeded(parsePlaybookOutput(UNREACHABLE, 0).recap)).toBe(false)
  })

  it("reports Ansible's own ERROR! when the play never ran", () => {
    const r = parsePlaybookOutput(MISSING_VARS_FILE, 1)
    expect(r.ok).toBe(false)
    expect(r.recap).toEqual({})
    expect(r.failedTask?.message).toMatch(/^Unable to retrieve file contents\nCould not find or access '\/nonexistent.json'/)
    const syntax = parsePlaybookOutput(SYNTAX_ERROR, 4)
    expect(syntax.failedTask?.message).toContain('Syntax Error while loading YAML.')
    expect(syntax.failedTask?.message).toContain("line 26, column 46")
  })

  it('reports a failed assertion with its message', () => {
    const r = parsePlaybookOutput(ASSERT_FAILURE, 2)
    expect(r.failedTask).toMatchObject({name: 'common : Check the variables citc passes', host: 'localhost'})
    expect(r.failedTask?.message).toContain('bad variables: provider=nimbus')
  })

  it('treats a missing recap as a failure, whatever the exit code', () => {
    const cut = SUCCESS.slice(0, SUCCESS.indexOf('PLAY RECAP'))
    const r = parsePlaybookOutput(cut, 0)
    expect(r.ok).toBe(false)
    expect(r.failedTask?.message).toBe('ansible-playbook exited 0 without a PLAY RECAP')
    // A recap with failed=0 but a non-zero exit (e.g. killed after the recap) is not a success either.
    expect(parsePlaybookOutput(SUCCESS, 1).ok).toBe(false)
  })

  it('succeeds when a failure was rescued', () => {
    const rescuedOnly = FAILURES.slice(0, FAILURES.indexOf('TASK [Loop with a failing item]')) +
      'PLAY RECAP *********************************************************************\n' +
      'localhost                  : ok=3    changed=1    unreachable=0    failed=0    skipped=0    rescued=1    ignored=1   \n'
    const r = parsePlaybookOutput(rescuedOnly, 0)
    expect(r.ok).toBe(true)
    expect(r.failedTask).toBeUndefined()
  })

  it('gives the same answer however the output is chunked, with stderr interleaved', () => {
    const whole = parsePlaybookOutput(FAILURES, 2)
    for (const size of [1, 7, 64, 1000]) {
      const tasks: string[] = []
      const p = new PlaybookOutputParser({onTask: (t) => tasks.push(t)})
      for (let i = 0; i < FAILURES.length; i += size) {
        p.push(FAILURES.slice(i, i + size), 'stdout')
        p.push(i === 0 ? '[WARNING]: a warning on stderr, split ' : i === size ? 'across chunks\n' : '', 'stderr')
      }
      p.end()
      const r = p.result(2)
      expect(r.failedTask).toEqual(whole.failedTask)
      expect(r.recap).toEqual(whole.recap)
      expect(tasks).toEqual(['Ignored failure', 'Fails inside a block', 'Rescue task', 'Loop with a failing item', 'Secret failure', 'Install something'])
    }
  })

  it('tells the task now running', () => {
    const p = new PlaybookOutputParser()
    p.push('\nPLAY [Management node] ****\n\nTASK [common : Install packages] ****')
    expect(p.task).toBeUndefined() // the line is not finished yet
    p.push('*****\n')
    expect(p.task).toBe('common : Install packages')
  })

  it('keeps the last lines, without blank ones', () => {
    const r = parsePlaybookOutput(FAILURES, 2)
    expect(r.lastLines.length).toBeLessThanOrEqual(40)
    expect(r.lastLines.every((l) => l.trim() !== '')).toBe(true)
    expect(r.lastLines.at(-2)).toMatch(/^PLAY RECAP/)
  })
})

describe('how ansible-playbook is run', () => {
  it('runs the playbook on the node it configures, with the vars file', () => {
    expect(playbookArgv({playbookPath: '/opt/citc/playbooks/management.yml', extraVarsPath: '/root/.citc/vars.json'})).toEqual([
      'env', '-C', '/opt/citc/playbooks',
      'ansible-playbook', '-i', 'localhost,', '-c', 'local', '/opt/citc/playbooks/management.yml', '-e', '@/root/.citc/vars.json',
    ])
    expect(playbookArgv({playbookPath: '/p/teardown.yml', cwd: '/tmp'}).slice(0, 3)).toEqual(['env', '-C', '/tmp'])
  })

  it('asks for plain default-callback output and the playbooks\' ansible.cfg', () => {
    expect(playbookEnv('/opt/citc/playbooks/management.yml')).toMatchObject({
      ANSIBLE_CONFIG: '/opt/citc/playbooks/ansible.cfg',
      ANSIBLE_STDOUT_CALLBACK: 'default',
      ANSIBLE_NOCOLOR: '1',
      ANSIBLE_FORCE_COLOR: '0',
    })
  })
})

// runPlaybook with the real ansible-playbook and the local Transport, on small playbooks in a temp
// dir (with the project's ansible.cfg next to them, as citc ships it): nothing on the system changes.
const hasAnsible = spawnSync('sh', ['-c', 'command -v ansible-playbook']).status === 0
describe('runPlaybook', () => {
  // CI installs ansible-core (.ci/run): fail, never skip, where it is missing.
  beforeAll(() => {
    if (!hasAnsible) throw new Error('ansible-playbook is not installed: bash .ci/run installs it')
  })

  let dir: string
  const book = (name: string, tasks: string) => {
    const path = join(dir, name)
    writeFileSync(path, `- name: Test play\n  hosts: all\n  gather_facts: false\n  tasks:\n${tasks}`)
    return path
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'citc-ansible-'))
    const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
    copyFileSync(join(root, 'playbooks', 'ansible.cfg'), join(dir, 'ansible.cfg'))
    writeFileSync(join(dir, 'vars.json'), JSON.stringify({greeting: 'hello from vars'}), {mode: 0o600})
  })
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('runs a playbook with its vars, reports tasks as they start and logs the output', async () => {
    const playbookPath = book('ok.yml', [
      '    - name: Say hello',
      '      ansible.builtin.debug:',
      '        msg: "{{ greeting }}"',
      '    - name: Touch a file',
      `      ansible.builtin.file: {path: ${dir}/touched, state: touch, mode: "0644"}`,
      '',
    ].join('\n'))
    const tasks: string[] = []
    const logFile = join(dir, 'logs', 'ok.log')
    const r = await runPlaybook(localTransport(), {playbookPath, extraVarsPath: join(dir, 'vars.json'), onTask: (t) => tasks.push(t), logFile})
    expect(r.ok).toBe(true)
    expect(r.recap).toEqual({localhost: {ok: 2, changed: 1, unreachable: 0, failed: 0, skipped: 0, rescued: 0, ignored: 0}})
    expect(tasks).toEqual(['Say hello', 'Touch a file'])
    const log = readFileSync(logFile, 'utf8')
    expect(log).toContain('"msg": "hello from vars"')
    expect(log).toMatch(/^# \S+ this machine: env -C .* ansible-playbook -i localhost, -c local /)
    expect(statSync(logFile).mode & 0o777).toBe(0o600)
  }, 120_000)

  it('rejects with the failed task, its message and the recap (exit code 4)', async () => {
    const playbookPath = book('fail.yml', [
      '    - name: Fine',
      '      ansible.builtin.command: /bin/true',
      '    - name: Break',
      "      ansible.builtin.shell: 'echo broken on purpose >&2; exit 3'",
      '',
    ].join('\n'))
    const error = await runPlaybook(localTransport(), {playbookPath, logFile: join(dir, 'logs', 'fail.log')}).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(PlaybookError)
    const e = error as PlaybookError
    expect(e.exitCode).toBe(4)
    expect(e.message).toBe('fail.yml failed at task "Break" on localhost: non-zero return code (exit 3): broken on purpose')
    expect(e.hint).toBe(`full Ansible output: ${join(dir, 'logs', 'fail.log')}`)
    expect(e.result.recap.localhost).toMatchObject({ok: 1, failed: 1})
    expect(e.result.lastLines.at(-1)).toMatch(/^localhost\s+: ok=1/)
  }, 120_000)

  it('stops when cancelled, naming the task it was in (exit code 130)', async () => {
    const playbookPath = book('slow.yml', ['    - name: Take a while', '      ansible.builtin.command: sleep 60', ''].join('\n'))
    const ac = new AbortController()
    const started = Date.now()
    const error = await runPlaybook(localTransport(), {
      playbookPath,
      signal: ac.signal,
      onTask: (t) => t === 'Take a while' && setTimeout(() => ac.abort(), 500),
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(CitcError)
    expect((error as CitcError).exitCode).toBe(130)
    expect((error as CitcError).message).toBe('slow.yml cancelled during "Take a while"')
    expect(Date.now() - started).toBeLessThan(30_000)
  }, 120_000)

  it('leaves nothing of the playbook running when citc is SIGKILLed (no exit hook: the reaper stops it)', async () => {
    const pidFile = join(dir, 'task.pid')
    // The task's shell becomes the sleep (exec): its PID is the task's, in ansible-playbook's process group.
    const playbookPath = book('killed.yml', ['    - name: Run until citc dies', `      ansible.builtin.shell: 'echo $$ > ${pidFile}; exec sleep 300'`, ''].join('\n'))
    const script = join(dir, 'citc-standin.mts')
    const src = (p: string) => JSON.stringify(resolve(dirname(fileURLToPath(import.meta.url)), '../../../src/lib', p))
    writeFileSync(
      script,
      [
        `import {runPlaybook} from ${src('tools/ansible.ts')}`,
        `import {localTransport} from ${src('transport/local.ts')}`,
        `runPlaybook(localTransport(), {playbookPath: ${JSON.stringify(playbookPath)}}).catch(() => {})`,
        `setTimeout(() => process.exit(2), 120_000)`,
      ].join('\n'),
    )
    const standIn = spawn(join(process.cwd(), 'node_modules/.bin/tsx'), [script], {stdio: 'ignore'})
    let taskPid = 0
    try {
      await waitFor('the task to start', () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 90_000)
      taskPid = Number(readFileSync(pidFile, 'utf8'))
      const group = procStat(taskPid)!.pgrp // ansible-playbook's own (exec.ts makes every child a group leader)
      expect(readFileSync(`/proc/${group}/cmdline`, 'utf8')).toContain('ansible-playbook')
      const citcPid = procStat(group)!.ppid
      // Only ever the stand-in itself (never whatever adopted an orphan).
      expect(readFileSync(`/proc/${citcPid}/cmdline`, 'utf8')).toContain(script)
      process.kill(citcPid, 'SIGKILL')
      await waitFor('the playbook and its task to be gone', () => !pidAlive(taskPid) && !pidAlive(group), 30_000)
    } finally {
      standIn.kill('SIGKILL')
      if (taskPid && pidAlive(taskPid)) process.kill(taskPid, 'SIGKILL')
    }
  }, 120_000)
})
