// What may reach sacctmgr's `key=value` argument syntax. sacctmgr splits values on "," (`add account
// a,b` creates two accounts — checked on slurmdbd 22.05), reads "=" and spaces as syntax, stores names
// in lower case, and prints "|" as its column separator: names are kept to a safe alphabet, and free
// text (descriptions) to what survives a round trip. Each check returns a message or undefined.
import {ACCOUNT, printable, USERNAME} from '../users/validate.js'

const ACCOUNT_MAX = 64
const USER_MAX = 32
const QOS_NAME = /^[a-z0-9][a-z0-9_.-]*$/
const QOS_MAX = 64
/** A TRES as Slurm names it: cpu, mem, node, billing, energy, fs/disk, gres/gpu, gres/gpu:a100, license/x. */
export const TRES_NAME = /^[a-z]+(\/[a-z0-9_.-]+(:[a-z0-9_.-]+)?)?$/
const TEXT_MAX = 200

/** The TRES every Slurm cluster has, plus gres/gpu (citc configures it for GPU shapes). */
export const DEFAULT_TRES: readonly string[] = ['cpu', 'mem', 'node', 'billing', 'energy', 'gres/gpu']

/** An account name citc passes to sacctmgr ("root" is allowed here: callers decide where it may appear). */
export function accountNameProblem(name: string): string | undefined {
  if (name === '') return 'an account name cannot be empty'
  if (name.length > ACCOUNT_MAX) return `account name "${printable(name)}" is ${name.length} characters long; at most ${ACCOUNT_MAX} are allowed`
  if (!ACCOUNT.test(name)) {
    return `"${printable(name)}" is not a safe Slurm account name: a lower-case letter, then only a-z, 0-9, "_" and "-" (sacctmgr lower-cases names and reads spaces, "," and "=" as syntax)`
  }
  return undefined
}

/** A login name as citc's directory allows it (the reserved-name rule is the directory's business). */
export function userNameProblem(name: string): string | undefined {
  if (name === '') return 'a user name cannot be empty'
  if (name.length > USER_MAX) return `user name "${printable(name)}" is ${name.length} characters long; at most ${USER_MAX} are allowed`
  if (!USERNAME.test(name)) return `"${printable(name)}" is not a valid login name: a lower-case letter, then only a-z, 0-9, "_" and "-"`
  return undefined
}

export function qosNameProblem(name: string): string | undefined {
  if (name === '' || name.length > QOS_MAX || !QOS_NAME.test(name)) {
    return `"${printable(name)}" is not a safe QOS name: lower-case letters, digits, "_", "." and "-" (at most ${QOS_MAX})`
  }
  return undefined
}

/**
 * Free text for Description= and Organization=. slurmdbd lower-cases it and turns quotes into
 * backticks, and a "|" would break sacctmgr's parsable output: such text could never compare equal
 * after a round trip, so it is refused here rather than changed on every run.
 */
export function textProblem(text: string, what: string): string | undefined {
  if (text.trim() === '') return `${what} is empty; remove it or write some text`
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/u.test(text)) return `${what} contains a control character or a line break; write it on one line`
  if (/["'`|]/.test(text)) return `${what} cannot contain quotes, backticks or "|" (slurmdbd changes or splits on them)`
  if (text !== text.trim()) return `${what} starts or ends with a space; remove it`
  if ([...text].length > TEXT_MAX) return `${what} is longer than ${TEXT_MAX} characters`
  return undefined
}

/** Text as slurmdbd stores it (lower case): what a description is compared by. */
export const storedText = (text: string): string => text.toLowerCase()

/** True when a name read back from Slurm can be passed to sacctmgr again without being misread. */
export const isSafeAccountName = (name: string): boolean => accountNameProblem(name) === undefined
export const isSafeUserName = (name: string): boolean => userNameProblem(name) === undefined
