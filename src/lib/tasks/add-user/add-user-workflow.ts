// `citc add-user` on a cluster: the users asked for (flags, a --from file, or questions on a
// terminal), checked and their keys fetched before anything else; then, under the cluster's lock,
// made on its management node by createUsers (create-users.ts), all or nothing.
import {clusterRegistry} from '../../cluster/registry.js'
import {readInputFile} from '../../config/input-file.js'
import {usageError} from '../../errors.js'
import {promptsOf, type Io} from '../../io.js'
import type {KeyOptions} from '../../users/keys.js'
import {parseUsersFile, prepareUsers, type PreparedUser, requestFromFlags, type UserRequest} from '../../users/request.js'
import {personNameProblem, usernameProblem} from '../../users/validate.js'
import {taskList} from '../listr.js'
import {clusterWorkflow} from '../workflow.js'
import {type CreatedUser, createUsers, type NodeLayout} from './create-users.js'

export interface AddUserInput {
  /** The cluster (default: the only one, or CITC_CLUSTER). */
  cluster?: string
  /** One user: what is missing is asked on a terminal. */
  username?: string
  firstName?: string
  surname?: string
  /** Public keys, .pub files or https:// / file:// URLs. */
  keys: string[]
  /** The Slurm account (default: the cluster's). */
  account?: string
  /** Every user of this YAML file instead (then none of the above). */
  from?: string
  /** Wait for another citc command holding the cluster instead of refusing. */
  wait: boolean
}

export interface AddUserResult {
  cluster: string
  users: CreatedUser[]
  logFile: string
}

/** Ask for what is missing on a terminal; without one, refuse naming the flag. */
async function ask(io: Io, current: string | undefined, flag: string, message: string, validate: (v: string) => string | undefined): Promise<string> {
  if (current !== undefined) return current
  if (!io.interactive) throw usageError(`${flag} is required (there is no terminal to ask on)`, `pass ${flag}`)
  return promptsOf(io).input({message, validate: (v) => validate(v) ?? true})
}

export async function gatherRequests(io: Io, u: Omit<AddUserInput, 'cluster' | 'wait'>): Promise<UserRequest[]> {
  if (u.from !== undefined) {
    const given = (
      [
        ['--first-name', u.firstName],
        ['--surname', u.surname],
        ['--key', u.keys.length > 0 ? u.keys : undefined],
        ['--account', u.account],
      ] as const
    ).filter(([, v]) => v !== undefined)
    if (u.username !== undefined || given.length > 0) {
      throw usageError(`--from takes every user from the file: do not also give ${u.username !== undefined ? 'USERNAME' : given[0][0]}`)
    }
    const text = readInputFile(u.from)
    return parseUsersFile(text, u.from, u.from)
  }
  const name = await ask(io, u.username, 'USERNAME', 'Login name of the new user:', (v) => usernameProblem(v))
  const first = await ask(io, u.firstName, '--first-name', `First name of ${name}:`, (v) => personNameProblem(v.trim(), 'the first name'))
  const surname = await ask(io, u.surname, '--surname', `Surname of ${name}:`, (v) => personNameProblem(v.trim(), 'the surname'))
  let keys = u.keys
  if (keys.length === 0) {
    keys = [await ask(io, undefined, '--key', `SSH public key of ${name} (the key, a .pub file, or a URL like https://github.com/NAME.keys):`, (v) => (v.trim() ? undefined : 'a key is required'))]
  }
  return [requestFromFlags({username: name, firstName: first, surname, keys, account: u.account})]
}

export interface RunAddUserOptions {
  keyOptions?: KeyOptions
  /** Node layout overrides (tests); the real command uses the node's own files. */
  layout?: NodeLayout
}

export async function runAddUser(io: Io, request: AddUserInput, dataDir: string, o: RunAddUserOptions = {}): Promise<AddUserResult> {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(request.cluster)
  const record = registry.get(name)

  const requests = await gatherRequests(io, request)
  // Every value and every key before the lock or a connection: bad input costs nothing.
  let users: PreparedUser[] = []
  await taskList(
    [
      {
        title: `Check ${requests.length === 1 ? requests[0].username : `${requests.length} users`} and fetch their SSH keys`,
        task: async () => {
          users = await prepareUsers(requests, o.keyOptions)
        },
      },
    ],
    io.renderer,
  ).run()

  return clusterWorkflow(
    {
      paths: registry.paths(name),
      command: 'citc add-user',
      renderer: io.renderer,
      lock: {wait: request.wait, timeoutMs: 30 * 60_000},
      // Bad input (a name taken) changed nothing: its own message is the whole story.
      log: {kind: 'add-user', passThrough: (error) => error.kind === 'invalidInput', inDetails: true},
    },
    async (wf) => {
      const logFile = wf.logFile('add-user')
      const transport = await wf.connect(record)
      const created = await wf.guard(() => createUsers(users, {transport, renderer: io.renderer, signal: wf.signal, note: io.note, ...o.layout}))
      for (const u of created) {
        io.log(
          `Added ${u.username} (uid ${u.uid}, ${u.name}): home ${u.home}, ${u.keys.length} SSH key${u.keys.length === 1 ? '' : 's'}` +
            `${u.account ? `, Slurm account ${u.account}` : ''}. The password is in ${u.passwordFile} (readable by ${u.username} only).`,
        )
      }
      return {cluster: record.name, users: created, logFile}
    },
  )
}
