// The built CLI's help (bin/run.js → src/fast-help.ts, no oclif start-up) against oclif's own start-up
// (execute(), as bin/run.js called it before): the same bytes on stdout and stderr and the same exit
// code, in a narrow and a wide terminal width and in colour — which oclif decides when its modules
// load, so each run is a process of its own. test/fast-help.test.ts covers every command in process.
import {spawn} from 'node:child_process'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'

import {afterAll, describe, expect, it} from 'vitest'

import {cliSandbox, limited, ROOT} from './support.js'

const sandbox = cliSandbox('fast-help')
afterAll(() => sandbox.cleanup())

const BIN = join(ROOT, 'bin', 'run.js')
/** oclif's start-up itself, as bin/run.js runs it for everything but help. */
const OCLIF = `import {execute} from '@oclif/core'; await execute({dir: ${JSON.stringify(pathToFileURL(BIN).href)}, args: JSON.parse(process.env.ARGS)})`

interface Out {
  code: number | null
  stdout: string
  stderr: string
}

function run(argv: string[], args: string[], env: NodeJS.ProcessEnv): Promise<Out> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, argv, {
      cwd: ROOT,
      env: {...process.env, NODE_ENV: 'production', CITC_DATA_DIR: sandbox.dataDir, CITC_CONFIG_DIR: join(sandbox.tmp, 'config'), ARGS: JSON.stringify(args), ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({code, stdout, stderr})
    })
  })
}

const VARIANTS: Array<[string, NodeJS.ProcessEnv]> = [
  ['40 columns, no colour', {OCLIF_COLUMNS: '40', NO_COLOR: '1', FORCE_COLOR: undefined}],
  ['200 columns, in colour', {OCLIF_COLUMNS: '200', FORCE_COLOR: '1', NO_COLOR: undefined}],
]
const finishHelp = new Map<string, string>()
const SUBJECTS = [[], ['--help'], ['finish', '--help'], ['accounts', '--help'], ['node', '--help'], ['status', '--json', '--help']]

describe('citc help, served without oclif’s start-up', () => {
  it.each(VARIANTS)('is what oclif prints, %s', async (_, env) => {
    const pairs = await limited(
      2,
      SUBJECTS.flatMap((args) => [() => run([BIN, ...args], args, env), () => run(['--input-type=module', '-e', OCLIF], args, env)]),
    )
    for (let i = 0; i < SUBJECTS.length; i++) {
      const [fast, oclif] = [pairs[2 * i], pairs[2 * i + 1]]
      expect(oclif.code, `oclif: citc ${SUBJECTS[i].join(' ')}: ${oclif.stderr}`).toBe(0)
      expect(fast, `citc ${SUBJECTS[i].join(' ')}`).toEqual(oclif)
    }
    const finish = pairs[4].stdout
    expect(finish).toContain('EXAMPLES')
    finishHelp.set(env.OCLIF_COLUMNS!, finish)
    // Not vacuous: the colour took effect (and the width: below).
    if (env.FORCE_COLOR) expect(finish).toContain('\u001B[1mUSAGE\u001B[22m')
    else expect(finish).not.toContain('\u001B[')
  }, 180_000)

  it('wrapped to the width asked for', () => {
    const lines = (columns: string) => finishHelp.get(columns)!.split('\n').length
    expect(lines('40')).toBeGreaterThan(lines('200') * 1.5)
  })
})
