// What an add-user has made of one user so far, kept on the management node while it runs
// (/var/lib/citc/pending/add-user-USER.json, root only): a citc killed half-way (SIGKILL, a power cut)
// cannot undo, so the next add-user of that name undoes what the file lists first and then makes the
// user whole — never a directory entry without a home or an association left behind. An entry is
// listed before ldapadd with its uidNumber (undone only while it still has that number: never another's);
// the rest right after each is made. A finished user, or a complete undo, removes the file.
import type {Transport} from '../../transport/types.js'

export const PENDING_DIR = '/var/lib/citc/pending'

export type Made =
  | {kind: 'entry'; dn: string; uidNumber: number}
  | {kind: 'home'; path: string}
  | {kind: 'slurm-account'; name: string}
  | {kind: 'slurm-user'; name: string}

/** The file for a user name (validated by then: letters, digits, _ and -). */
export const madeFile = (username: string) => `${PENDING_DIR}/add-user-${username}.json`

export async function writeMade(t: Transport, username: string, made: readonly Made[]): Promise<void> {
  await t.check(['mkdir', '-p', '-m', '0700', PENDING_DIR])
  await t.writeFile(madeFile(username), JSON.stringify({username, made}, null, 1) + '\n', {mode: 0o600})
}

/** What an interrupted add-user of `username` left, or undefined. A file citc cannot read is an error, not nothing. */
export async function readMade(t: Transport, username: string): Promise<Made[] | undefined> {
  const raw = await t.readFile(madeFile(username))
  if (raw === undefined) return undefined
  const doc = JSON.parse(raw.toString('utf8')) as {made?: unknown}
  if (!Array.isArray(doc.made)) throw new Error(`${madeFile(username)} is not what citc writes (no "made" list)`)
  return doc.made as Made[]
}

export async function clearMade(t: Transport, username: string): Promise<void> {
  await t.check(['rm', '-f', madeFile(username)])
}
