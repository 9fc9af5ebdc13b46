// How citc fails, as scripts see it: the exit codes of design.md (2 usage, 3 invalid input, 5 no such
// cluster), and under --json exactly one JSON document on stdout, {error: {kind, message, exitCode,
// hint?}}, with the same exit code as without --json.
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {EXIT_CODES} from '../../src/lib/errors.js'
import {type CliResult, cliSandbox, limited} from './support.js'

const sandbox = cliSandbox('errors')
afterAll(() => sandbox.cleanup())
const {run} = sandbox

interface ErrorDoc {
  error: {kind: string; message: string; exitCode: number; hint?: string; [k: string]: unknown}
}

/** stdout is one JSON document and nothing else (no log lines before or after it). */
function onlyJson(r: CliResult): ErrorDoc {
  // JSON.parse of the whole of stdout: a second document or a stray log line would not parse.
  const doc = r.json<ErrorDoc>()
  expect(doc !== null && typeof doc === 'object' && !Array.isArray(doc), r.stdout).toBe(true)
  return doc
}

/** Runs `args` with and without --json: same exit code, a plain message on stderr, one JSON error on stdout. */
async function bothWays(args: string[], env: NodeJS.ProcessEnv = {}) {
  const [plain, json] = await Promise.all([run(args, env), run([...args, '--json'], env)])
  expect(json.code, `--json changed the exit code of citc ${args.join(' ')}`).toBe(plain.code)
  expect(plain.stdout, 'an error prints nothing on stdout').toBe('')
  expect(plain.stderr).toMatch(/^Error: /)
  const doc = onlyJson(json)
  expect(json.stderr, 'under --json nothing goes to stderr').toBe('')
  expect(Object.keys(doc)).toEqual(['error'])
  expect(doc.error).toMatchObject({kind: expect.any(String), message: expect.any(String), exitCode: json.code})
  expect(doc.error.message.length).toBeGreaterThan(0)
  if ('hint' in doc.error) {
    expect(typeof doc.error.hint).toBe('string')
    expect(plain.stderr).toContain(`Try: ${doc.error.hint}`)
  }
  // The message a person reads is the message a script reads.
  expect(plain.stderr).toContain(doc.error.message.split('\n')[0])
  return {plain, json, doc}
}

describe('usage errors: exit 2', () => {
  it('an unknown flag is named', async () => {
    const {plain, doc} = await bothWays(['finish', '--frobnicate'])
    expect(plain.code).toBe(EXIT_CODES.usage)
    expect(plain.stderr).toContain('--frobnicate')
    expect(doc.error).toMatchObject({kind: 'usage', exitCode: 2})
    expect(doc.error.message).toContain('--frobnicate')
    expect(doc.error.hint).toBeTruthy()
  })

  it('a missing required argument, or required flags', async () => {
    const [arg, flags] = await Promise.all([bothWays(['cluster', 'remove']), bothWays(['cluster', 'add', 'prod'])])
    expect(arg.plain.code).toBe(2)
    expect(arg.doc.error.kind).toBe('usage')
    expect(arg.plain.stderr).toMatch(/Missing 1 required arg/)
    expect(flags.plain.code).toBe(2)
    expect(flags.doc.error.kind).toBe('usage')
    for (const f of ['host', 'user', 'key', 'provider']) expect(flags.plain.stderr).toMatch(new RegExp(`Missing required flag ${f}\\b`))
  })

  it('a value that is not one of the flag’s options', async () => {
    const {plain, doc} = await bothWays(['finish', '--dry-run', '--provider', 'azure', '--limits', 'examples/limits-aws.yaml'])
    expect(plain.code).toBe(2)
    expect(doc.error.kind).toBe('usage')
    expect(doc.error.message).toContain('azure')
  })

  it('a flag value oclif cannot parse (an integer below its minimum, or not a number) is a usage error, not "unexpected"', async () => {
    const results = await Promise.all([
      bothWays(['finish', '--dry-run', '--provider', 'oracle', '--limits', 'examples/limits-oracle.yaml', '--mgmt-shape', 'VM.Standard2.1', '--mgmt-ad', '0']),
      bothWays(['create', '--suspend-time', 'soon']),
    ])
    for (const {plain, doc} of results) {
      expect(plain.stderr).not.toMatch(/report/i) // not presented as a bug in citc
      expect(doc.error.kind).toBe('usage')
      expect(plain.code).toBe(EXIT_CODES.usage)
    }
  })
})

describe('create --gpu-nodes (issue #22): refused before anything is made', () => {
  it('a value that is not per-gpu, all or none; a cloud provider; a machine without GPUs', async () => {
    // No GPUs here, whatever this machine has: a stand-in whose gpuRoot is an empty directory.
    const standIn = join(sandbox.tmp, 'no-gpus.json')
    writeFileSync(standIn, JSON.stringify({driver: {gpuRoot: sandbox.tmp}}))
    const [bad, cloud, none] = await Promise.all([
      bothWays(['create', '--provider', 'local', '--gpu-nodes', 'some', '--yes']),
      bothWays(['create', '--provider', 'aws', '--name', 'gpus', '--gpu-nodes', 'all', '--yes']),
      // A limits file that does not exist: were the refusal missing, create would stop there, making nothing.
      bothWays(['create', '--provider', 'local', '--name', 'gpus', '--gpu-nodes', 'all', '--limits', join(sandbox.tmp, 'missing.yaml'), '--stand-in', standIn, '--yes']),
    ])
    expect([bad.plain.code, bad.doc.error.kind]).toEqual([EXIT_CODES.usage, 'usage'])
    expect(bad.doc.error.message).toMatch(/some/)
    expect([cloud.plain.code, cloud.doc.error.message]).toEqual([
      EXIT_CODES.invalidInput,
      "--gpu-nodes: is for the local provider (this machine's GPUs), not aws: leave it out, and name GPU shapes in the limits file",
    ])
    expect(none.plain.code).toBe(EXIT_CODES.invalidInput)
    expect(none.doc.error.message).toBe(`--gpu-nodes: this machine has no NVIDIA GPU (none listed in ${sandbox.tmp}/proc/driver/nvidia/gpus): leave it out`)
  })
})

describe('unknown commands: exit 2 with the closest command', () => {
  it('a word that is no command: Error/Try, or one JSON error document', async () => {
    const {plain, doc} = await bothWays(['frobnicate'])
    expect(plain.code).toBe(EXIT_CODES.usage)
    expect(plain.stderr).toContain('"frobnicate" is not a citc command')
    expect(doc.error).toEqual({kind: 'usage', message: '"frobnicate" is not a citc command', exitCode: 2, hint: expect.stringMatching(/^did you mean `citc [a-z -]+`\? `citc --help` lists every command$/)})
  })

  it('a typo is answered with the command meant, a topic’s too; the arguments after it are not part of the name', async () => {
    const results = await limited(2, [
      () => bothWays(['stauts']),
      () => bothWays(['cluster', 'lst']),
      () => bothWays(['add-usr', 'bob', '--first-name', 'Bob']),
    ])
    const [status, cluster, addUser] = results
    expect(status.doc.error.hint).toMatch(/^did you mean `citc status`\?/)
    expect(cluster.doc.error).toMatchObject({message: '"cluster lst" is not a citc command', hint: expect.stringMatching(/^did you mean `citc cluster list`\?/)})
    expect(addUser.doc.error).toMatchObject({message: '"add-usr" is not a citc command', hint: expect.stringMatching(/^did you mean `citc add-user`\?/)})
    for (const r of results) expect(r.plain.code).toBe(2)
  })

  it('never suggests a hidden node program', async () => {
    const r = await run(['node', 'resum', '--json'])
    expect(r.code).toBe(2)
    // node add and node remove are visible and may be suggested; the node programs slurmctld runs are not.
    expect(r.json().error.hint).not.toMatch(/citc node (resume|suspend|fail|sync)/)
  })
})

describe('invalid input: exit 3', () => {
  it('invalid limits, with the location in file:line:col', async () => {
    const file = join(sandbox.tmp, 'bad-limits.yaml')
    writeFileSync(file, 'c5.xlarge: 2\nc5.xlarg: 4\n')
    const {plain, doc} = await bothWays(['finish', '--dry-run', '--provider', 'aws', '--cluster-id', 'demo', '--limits', file])
    expect(plain.code).toBe(EXIT_CODES.invalidInput)
    expect(doc.error.kind).toBe('invalidInput')
    expect(plain.stderr).toContain(`${file}:2:1`)
    expect(doc.error.problems).toEqual([expect.objectContaining({where: `${file}:2:1`, message: expect.stringContaining('c5.xlarge')})])
  })

  it('a mistyped shape is shown as typed (local.medum, not ["local.medum"]), with the suggestion', async () => {
    const file = join(sandbox.tmp, 'typo-limits.yaml')
    writeFileSync(file, 'local.small: 2\nlocal.medum: 1\n')
    const {plain, doc} = await bothWays(['finish', '--dry-run', '--provider', 'local', '--cluster-id', 'demo', '--limits', file])
    expect(plain.code).toBe(EXIT_CODES.invalidInput)
    expect(plain.stderr).toContain(`Error: ${file}:2:1 local.medum: unknown shape "local.medum" for provider local; did you mean local.medium?`)
    expect(plain.stderr).not.toContain('[')
    expect(doc.error.problems).toEqual([expect.objectContaining({where: `${file}:2:1`, path: 'local.medum'})])
  })
})

describe('accounts and usage check their own input first, with no cluster needed', () => {
  it('an accounts file with a mistake: exit 3 at file:line:col, before any cluster is looked for', async () => {
    const file = join(sandbox.tmp, 'bad-accounts.yaml')
    writeFileSync(file, 'accounts:\n  physics:\n    limits: {MaxJobs: lots}\n  Bad Name: {}\n')
    const {plain, doc} = await bothWays(['accounts', 'apply', '--file', file, '--yes'])
    expect(plain.code).toBe(EXIT_CODES.invalidInput)
    expect(plain.stderr).toContain(`${file}:3:14`)
    expect(plain.stderr).toContain(`${file}:4:3`)
    expect(doc.error.problems).toHaveLength(2)
    const missing = await run(['accounts', 'apply', '--file', join(sandbox.tmp, 'none.yaml')])
    expect(missing.code).toBe(EXIT_CODES.invalidInput)
    expect(missing.stderr).toMatch(/none\.yaml: no such file/)
  })

  it('usage: a date that is none, --since after --until, --csv with --json, an unknown --by: exit 2 naming the flag', async () => {
    const bad = await bothWays(['usage', '--since', 'lastweek'])
    expect(bad.plain.code).toBe(EXIT_CODES.usage)
    expect(bad.plain.stderr).toContain('--since "lastweek" is not a date')
    const order = await run(['usage', '--since', '2026-11-02', '--until', '2026-11-01'])
    expect(order.code).toBe(EXIT_CODES.usage)
    expect(order.stderr).toMatch(/--since \(2026-11-02T00:00:00Z\) must be before --until/)
    const both = await run(['usage', '--csv', '--json'])
    expect(both.code).toBe(EXIT_CODES.usage)
    const by = await run(['usage', '--by', 'project'])
    expect(by.code).toBe(EXIT_CODES.usage)
    expect(by.stderr).toMatch(/account, user, shape, day/)
  })
})

describe('no such cluster: exit 5', () => {
  it('status -c nope', async () => {
    const {plain, doc} = await bothWays(['status', '-c', 'nope'])
    expect(plain.code).toBe(EXIT_CODES.noCluster)
    expect(doc.error.kind).toBe('noCluster')
    expect(doc.error.message).toContain('nope')
  })

  it('CITC_CLUSTER selects the cluster (and an unknown one is named)', async () => {
    const results = await limited(3, [
      () => bothWays(['status'], {CITC_CLUSTER: 'ghost'}),
      () => bothWays(['nodes'], {CITC_CLUSTER: 'ghost'}),
      () => bothWays(['finish', '--dry-run', '--limits', 'examples/limits-aws.yaml'], {CITC_CLUSTER: 'ghost'}),
    ])
    for (const {plain, doc} of results) {
      expect(plain.code).toBe(5)
      expect(plain.stderr).toContain('"ghost"')
      expect(doc.error).toMatchObject({kind: 'noCluster', exitCode: 5})
      expect(doc.error.message).toContain('ghost')
    }
    // -c wins over the environment.
    const flag = await run(['status', '-c', 'other'], {CITC_CLUSTER: 'ghost'})
    expect(flag.code).toBe(5)
    expect(flag.stderr).toContain('"other"')
    expect(flag.stderr).not.toContain('ghost')
  })

  it('no cluster at all: exit 5 with a hint to create or register one', async () => {
    const {plain, doc} = await bothWays(['status'])
    expect(plain.code).toBe(5)
    expect(doc.error.hint).toMatch(/citc create/)
    expect(doc.error.hint).toMatch(/citc cluster add/)
  })
})

describe('success under --json', () => {
  it('cluster list with an empty data dir: {clusters: []}', async () => {
    const [json, plain] = await Promise.all([run(['cluster', 'list', '--json']), run(['cluster', 'list'])])
    expect(json.code).toBe(0)
    expect(json.json()).toEqual({clusters: []})
    expect(json.stderr).toBe('')
    expect(plain.code).toBe(0)
    expect(plain.stdout).toMatch(/No clusters/)
  })
})
