// `citc cluster add`: register a Slurm cluster that exists already (CitC layout), so finish and
// status work on it. The management node's host key is confirmed by the user or given as a flag,
// then pinned: citc never connects to it with another key.
import {readFileSync} from 'node:fs'
import {resolve} from 'node:path'

import {clusterRegistry} from '../../cluster/registry.js'
import {HOST_KEY_FINGERPRINT, type ClusterRecord} from '../../cluster/schema.js'
import {CitcError, InvalidInputError, remoteError, usageError} from '../../errors.js'
import {promptsOf, type Io} from '../../io.js'
import {managedHere} from '../../cluster/management-node.js'
import type {Provider} from '../../providers/registry.js'
import {Controller} from '../../slurm/controller.js'
import {connectSsh, fetchHostKeyFingerprint} from '../../transport/ssh/index.js'
import {withManagementNode} from '../management-session.js'

export interface ClusterAddInput {
  name: string
  host: string
  port: number
  user: string
  key: string
  provider: Provider
  hostKeyFingerprint?: string
  confPath: string
  programsDir: string
  restartCommand?: string[]
  mgmtShape?: string
  mgmtAd?: number
}


export async function addCluster(io: Io, input: ClusterAddInput, dataDir: string) {
  const registry = clusterRegistry(dataDir)
  // A registered cluster is reached over SSH: one whose management node is this machine is created, not registered.
  if (managedHere(input)) throw usageError(`a ${input.provider} cluster is made with \`citc create --provider ${input.provider}\`, not registered`)
  if (input.hostKeyFingerprint !== undefined && !HOST_KEY_FINGERPRINT.test(input.hostKeyFingerprint)) {
    throw new InvalidInputError([
      {where: '--host-key-fingerprint', message: `"${input.hostKeyFingerprint}" is not an OpenSSH SHA256 fingerprint (SHA256: and 43 base64 characters)`},
    ])
  }
  const keyPath = resolve(input.key)
  let keyText: string
  try {
    keyText = readFileSync(keyPath, 'utf8')
  } catch (error) {
    throw new InvalidInputError([{where: '--key', message: `cannot read ${keyPath} (${(error as NodeJS.ErrnoException).code})`}])
  }
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(keyText)) {
    throw new InvalidInputError([{where: '--key', message: `${keyPath} is not a private key file (give the private key, not the .pub)`}])
  }
  registry.assertNameFree(input.name)

  // 1. The host key: shown and confirmed, or given; never accepted silently.
  const seen = await fetchHostKeyFingerprint({host: input.host, port: input.port, timeoutMs: 15_000})
  if (input.hostKeyFingerprint) {
    if (input.hostKeyFingerprint !== seen.fingerprint) {
      throw remoteError(
        `the host key of ${input.host}:${input.port} does not match --host-key-fingerprint\n  expected ${input.hostKeyFingerprint}\n  received ${seen.fingerprint} (${seen.algorithm})`,
        {hint: 'check the fingerprint on the management node (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub); do not proceed if it differs'},
      )
    }
  } else if (io.interactive) {
    const ok = await promptsOf(io).confirm({
      message: `The host key of ${input.host}:${input.port} is ${seen.algorithm} ${seen.fingerprint}. Is this the management node's key?`,
      default: false,
    })
    if (!ok) throw new CitcError('cancelled', 'host key not confirmed: nothing was registered')
  } else {
    throw usageError(
      `the host key of ${input.host}:${input.port} (${seen.algorithm} ${seen.fingerprint}) must be confirmed, and there is no terminal to ask on`,
      `check it on the management node, then pass --host-key-fingerprint ${seen.fingerprint}`,
    )
  }

  // 2. Connect with the pinned key and check the CitC layout before registering anything.
  const login = (signal: AbortSignal) =>
    connectSsh({host: input.host, port: input.port, user: input.user, privateKey: keyPath, hostKeyFingerprint: seen.fingerprint, readyTimeoutMs: 20_000, signal})
  const hostname = await withManagementNode(login, {command: 'citc cluster add'}, async (transport) => {
    const conf = await transport.readFile(input.confPath)
    if (!conf) {
      throw remoteError(`${input.confPath} does not exist on ${transport.description}: not a CitC-style management node`, {
        hint: 'pass --conf-path with the location of slurm.conf on that machine',
      })
    }
    if (input.user !== 'root' && (await transport.run(['sudo', '-n', 'true'])).exitCode !== 0) {
      throw remoteError(`${input.user} on ${input.host} cannot run sudo without a password: citc needs root there (finish, add-user)`, {
        hint: `log in as root (--user root), or give ${input.user} passwordless sudo (a line "${input.user} ALL=(ALL) NOPASSWD:ALL" in /etc/sudoers.d/)`,
      })
    }
    const which = await transport.run(['sh', '-c', 'command -v scontrol'])
    if (which.exitCode !== 0) throw remoteError(`scontrol is not installed on ${transport.description}`)
    const controller = new Controller(transport, {confPath: input.confPath})
    if (!(await controller.ping())) io.note(`note: slurmctld on ${input.host} does not answer now; finish will start it.`)
    return (await transport.check(['hostname', '-s'])).stdout.trim()
  })

  // 3. Register: the key is copied into the cluster's keys/ (0600) so the state stands on its own.
  const record: ClusterRecord = {
    name: input.name,
    provider: input.provider,
    createdAt: new Date().toISOString(),
    origin: 'registered',
    mgmt: {
      host: input.host,
      port: input.port,
      user: input.user,
      keyPath: '',
      hostKeyFingerprint: seen.fingerprint,
      hostname,
      // Root through sudo for anyone else (checked in step 2).
      ...(input.user !== 'root' ? {sudo: true} : {}),
      ...(input.mgmtShape ? {shape: input.mgmtShape} : {}),
      ...(input.mgmtAd ? {ad: input.mgmtAd} : {}),
    },
    slurm: {
      confPath: input.confPath,
      programsDir: input.programsDir,
      ...(input.restartCommand?.length ? {restartCommand: input.restartCommand} : {}),
    },
  }
  const created = registry.create(record, () => {
    record.mgmt.keyPath = registry.writeKey(input.name, 'admin', keyText)
  })
  io.log(`Registered ${input.name}: ${input.user}@${input.host}:${input.port}, host key ${seen.fingerprint} pinned.`)
  io.log(`Next: citc finish -c ${input.name} --dry-run`)
  return {cluster: created}
}
