// The fault suite's tally (issue #23): every injected fault runs through `injectFault`, which records
// what was injected, whether the cluster survived it, what was lost and what was left stuck. When
// bench/faults.ts runs the suite it names a report file (CITC_FAULTS_REPORT, a variable of this test
// harness only, never read by citc) and prints one line per class and the total from it; otherwise
// nothing is written. A body that throws is recorded as not survived, and the error goes on to fail the test.
import {appendFileSync} from 'node:fs'

/** The classes of the list, in its order: the bench prints one line each. */
export const FAULT_CLASSES = {
  restart: 'management node restarts (every daemon killed at once)',
  'finish-killed': 'citc finish killed at each apply step',
  'command-killed': 'citc killed during add-user, remove-user, accounts apply, rebuild-image, create, destroy',
  'controller-burst': 'slurmctld killed during a burst of node starts',
  'cloud-api': 'cloud API failing (500s, timeouts) during resume and suspend',
  'disk-full': 'full disk during an image build and finish’s backup',
  'service-down': 'MariaDB, slurmdbd or slapd down during a command',
  'two-commands': 'two citc commands at once, and a stale lock',
  load: '1,000 jobs at once to cold nodes',
} as const
export type FaultClass = keyof typeof FAULT_CLASSES

/** What one injection left behind, counted by the test (each must be 0 for the fault to be survived). */
export interface FaultTally {
  /** Things that existed before and are gone: jobs, users, accounts, configuration lines, images. */
  lost: number
  /** Things left half-way that nothing will finish: half-started nodes, orphan machines, held locks, partial files. */
  stuck: number
  /** What the user sees (the message, the exit code): the closing note's table. */
  seen: string
  /** What brings the cluster back (the command, the watchdog, nothing needed). */
  recovery: string
}

export interface FaultRecord extends FaultTally {
  class: FaultClass
  fault: string
  survived: boolean
  error?: string
}

function write(record: FaultRecord) {
  const file = process.env.CITC_FAULTS_REPORT
  if (file) appendFileSync(file, `${JSON.stringify(record)}\n`)
}

/**
 * Inject one fault: `body` injects it, lets the cluster recover, and counts what was lost and left stuck.
 * Survived means the body finished and counted nothing lost or stuck; the test then asserts the same,
 * so a fault that is not survived fails the suite too.
 */
export async function injectFault(cls: FaultClass, fault: string, body: () => Promise<FaultTally> | FaultTally): Promise<FaultTally> {
  let tally: FaultTally
  try {
    tally = await body()
  } catch (error) {
    write({class: cls, fault, survived: false, lost: 0, stuck: 0, seen: '', recovery: '', error: (error as Error).message.split('\n')[0]})
    throw error
  }
  write({class: cls, fault, survived: tally.lost === 0 && tally.stuck === 0, ...tally})
  if (tally.lost !== 0 || tally.stuck !== 0) throw new Error(`${fault}: ${tally.lost} lost, ${tally.stuck} stuck (${tally.seen})`)
  return tally
}
