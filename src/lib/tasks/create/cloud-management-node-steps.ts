// Cloud create's steps on the new management node, over SSH: connect (host key pinned) and wait for
// cloud-init, install Node.js, ansible-core and Packer (apt), install citc from the bundle built here (no npm
// registry on the node), and run management.yml there — the last through the playbook step local
// create shares (management-steps.ts). Journal names: ssh, tools, install, playbook.
import {readFileSync} from 'node:fs'
import {basename, join} from 'node:path'

import {cloudPlaybookVars} from '../../providers/cloud-playbook-vars.js'
import {bundleCitc} from '../../tools/bundle.js'
import {withLog} from '../../transport/logged.js'
import {asRootOn, sshTargetOf, writeKnownHosts} from '../../cluster/management.js'
import type {SshTransport} from '../../transport/ssh/index.js'
import type {Step} from '../workflow.js'
import {type CloudCreateContext, connected, type ManagementNodeSession} from './cloud-create-context.js'
import {DEFAULT_REMOTE_PREFIX, installedPackage, installPackage, installTools, remoteCitcBin, remoteNodeBin, waitForCloudInit, waitForSsh} from './management-node-setup.js'
import {configureManagementNode} from './management-steps.js'

/** Connected in every run (a connection does not outlive one); closed by closeSession when the workflow ends. */
export const connectToNode: Step<CloudCreateContext> = {
  title: 'Wait for SSH (host key pinned)',
  journal: 'ssh',
  always: true,
  run: async (ctx, task) => {
    const r = ctx.record()
    task.title = `Wait for SSH on ${r.mgmt.host}:${r.mgmt.port} (host key ${r.mgmt.hostKeyFingerprint} pinned)`
    const ssh = await waitForSsh({
      ...sshTargetOf(r),
      timeoutMs: ctx.opts.sshTimeoutS * 1000,
      signal: ctx.signal,
      report: (m) => (task.output = m),
    })
    ctx.node.ssh = ssh
    ctx.node.rootUnlogged = asRootOn(r, ssh)
    ctx.node.root = withLog(ctx.node.rootUnlogged, ctx.logFile('create'))
    task.output = 'waiting for cloud-init to finish'
    await waitForCloudInit(ctx.node.root, {signal: ctx.signal})
    ctx.node.knownHosts = await writeKnownHosts(r, ctx.paths)
  },
}

export const installNodeAndAnsible: Step<CloudCreateContext> = {
  title: 'Install Node.js, ansible-core and Packer on the management node (apt)',
  journal: 'tools',
  run: async (ctx, task) => {
    const installed = await installTools(connected(ctx.node).root, {signal: ctx.signal, onOutput: (l) => (task.output = l)})
    task.title = installed.length > 0 ? `Installed ${installed.join(', ')} on the management node` : 'Node.js, ansible-core and Packer: already on the management node'
  },
}

/** The bundle (citc with its production node_modules) uploaded and unpacked, unless exactly it is there. */
export const installCitc: Step<CloudCreateContext> = {
  title: 'Install citc on the management node',
  journal: 'install',
  run: async (ctx, task) => {
    const {ssh, root} = connected(ctx.node)
    const prefix = remotePrefix(ctx)
    task.output = 'bundling citc with its dependencies'
    const pkg = await bundleCitc(ctx.opts.packageRoot, join(ctx.paths.dir, 'package'), ctx.signal)
    if (await installedPackage(root, prefix, pkg.sha256)) {
      task.title = `citc ${pkg.version}: already installed on the management node (${prefix})`
    } else {
      const remoteTgz = `${await uploadDir(ctx.node)}/${basename(pkg.file)}`
      task.output = `uploading ${basename(pkg.file)} (${(pkg.bytes / 1e6).toFixed(1)} MB, ${pkg.dependencies} dependencies)`
      await ssh.writeFile(remoteTgz, readFileSync(pkg.file), {mode: 0o644, signal: ctx.signal})
      await installPackage(root, {prefix, tarball: remoteTgz, sha256: pkg.sha256, signal: ctx.signal, onOutput: (l) => (task.output = l)})
      task.title = `Installed citc ${pkg.version} on the management node (${prefix}, no registry needed)`
    }
    const nodeBin = await remoteNodeBin(root)
    ctx.update((r) => {
      r.cloud = {...r.cloud!, citcBin: remoteCitcBin(prefix), nodeBin}
    })
  },
}

/** management.yml of the installed citc (or a stand-in's playbook), run on the node with its variables uploaded. */
export const configureCloudNode = configureManagementNode<CloudCreateContext>({
  title: 'Configure the management node (management.yml)',
  explainFailure: true,
  prepare: async (ctx) => {
    const {ssh, rootUnlogged} = connected(ctx.node)
    const dir = await uploadDir(ctx.node)
    let playbookPath = `${remotePrefix(ctx)}/lib/node_modules/citc/playbooks/management.yml`
    const standInPlaybook = ctx.opts.standIn?.playbook
    if (standInPlaybook) {
      playbookPath = `${dir}/${basename(standInPlaybook)}`
      await ssh.writeFile(playbookPath, readFileSync(standInPlaybook), {mode: 0o644})
    }
    const extraVarsPath = `${dir}/vars.json`
    await ssh.writeFile(extraVarsPath, JSON.stringify(cloudPlaybookVars(ctx.record()), null, 2), {mode: 0o600})
    return {transport: rootUnlogged, playbookPath, extraVarsPath}
  },
  done: ({ok, changed, playbook}) => `Configured the management node (${playbook}: ok=${ok} changed=${changed} failed=0)`,
})

/** Remove what was uploaded and close the connection (the workflow's clean-up: failed or not). */
export async function closeSession(node: ManagementNodeSession): Promise<void> {
  if (node.uploadDir && node.ssh) await node.ssh.run(['rm', '-rf', node.uploadDir], {timeoutMs: 30_000}).catch(() => {})
  await node.ssh?.close()
}

const remotePrefix = (ctx: CloudCreateContext) => ctx.opts.standIn?.citcPrefix ?? DEFAULT_REMOTE_PREFIX

/** A private directory on the management node for what citc uploads (the login user's, 0700), made once a run. */
async function uploadDir(node: ManagementNodeSession): Promise<string> {
  node.uploadDir ??= await makeUploadDir(connected(node).ssh)
  return node.uploadDir
}

async function makeUploadDir(ssh: SshTransport): Promise<string> {
  const r = await ssh.check(['mktemp', '-d', '/tmp/citc-upload.XXXXXXXX'], {timeoutMs: 60_000})
  return r.stdout.trim()
}
