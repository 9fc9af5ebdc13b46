// What the cloud tests share: the environment that puts the TEST DOUBLES (test/doubles/bin: terraform, and
// the aws/gcloud/oci CLIs of the sweep) in place of the real tools, and the `terraform output -json`
// document the terraform double answers with for an aws cluster whose management node is an sshd here.
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir, userInfo} from 'node:os'
import {join, resolve} from 'node:path'

import type {ManagementNodeStandIn, StandIn} from '../../src/lib/stand-in.js'
import {ROOT} from './cli.js'

export const DOUBLES = resolve(ROOT, 'test', 'doubles', 'bin')

/** citc with the doubles first on PATH, a HOME without cloud credentials, and the doubles' logs. */
export function doublesEnv(o: {dataDir: string; home: string; tfLog: string; cloudLog?: string; cloudState?: string}, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    CITC_DATA_DIR: o.dataDir,
    CITC_CLUSTER: undefined,
    CITC_TERRAFORM: join(DOUBLES, 'terraform'),
    PATH: `${DOUBLES}:${process.env.PATH}`,
    HOME: o.home, // no cloud credentials: the doubles do not need any
    AWS_PROFILE: undefined,
    AWS_ACCESS_KEY_ID: undefined,
    TF_DOUBLE_LOG: o.tfLog,
    ...(o.cloudLog ? {CLOUD_DOUBLE_LOG: o.cloudLog} : {}),
    ...(o.cloudState ? {CLOUD_DOUBLE_STATE: o.cloudState} : {}),
    ...extra,
  }
}

/**
 * `citc create --stand-in FILE` for a stand-in management node (src/lib/stand-in.ts, docs/stand-ins.md):
 * an sshd on loopback at `port`, citc installed under `prefix`, `playbook` run instead of
 * management.yml, the image builds' files under `imageRoot`. Terraform's outputs know nothing of them,
 * as on a cloud. The file is written to a temporary directory, one per call.
 */
export function standInFlags(o: {port?: number; prefix?: string; playbook?: string; imageRoot?: string}): string[] {
  const here = (p?: string) => p && resolve(p) // relative to this process's directory, as flags were
  const managementNode: ManagementNodeStandIn = {sshPort: o.port, citcPrefix: o.prefix, playbook: here(o.playbook), imageRoot: here(o.imageRoot)}
  const file = join(mkdtempSync(join(tmpdir(), 'citc-stand-in-')), 'stand-in.json')
  writeFileSync(file, JSON.stringify({managementNode} satisfies StandIn))
  return ['--stand-in', file]
}

/**
 * The environment of a stand-in management node's sessions (startSshd's setEnv) for image builds:
 * the packer TEST DOUBLE first on its PATH, "creating" images in the cloud API double's state that
 * citc's aws CLI (the double, on this machine) then lists, and logging its calls.
 */
export function packerDoubleEnv(o: {cloudState: string; packerLog: string}): Record<string, string> {
  return {PATH: `${DOUBLES}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`, CLOUD_DOUBLE_STATE: o.cloudState, PACKER_DOUBLE_LOG: o.packerLog}
}

/** The packer double's `build` calls so far (PACKER_DOUBLE_LOG). */
export function packerBuilds(log: string): string[] {
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter((l) => l.startsWith('build ')) : []
}

/**
 * Write the outputs of an aws cluster `name` whose management node is at 127.0.0.1 (the values a real
 * apply would give, overridable) to `file`, for TF_DOUBLE_OUTPUTS. Its SSH port is create's
 * stand-in's sshPort (standInFlags), not an output: no template has one.
 */
export function writeAwsOutputs(file: string, name: string, overrides: Record<string, unknown> = {}): string {
  const values: Record<string, unknown> = {
    cluster_id: name,
    mgmt_public_ip: '127.0.0.1',
    mgmt_private_ip: '10.0.0.10',
    mgmt_user: userInfo().username,
    mgmt_hostname: 'mgmt',
    mgmt_shape: 't3a.medium',
    region: 'us-east-1',
    zone: 'us-east-1a',
    // What templates/terraform/aws outputs for the management node's AMI (the image builder's base).
    base_image: {id: 'ami-0123', os: 'ubuntu-24.04', owner: '099720109477', architecture: 'x86_64', name_filter: 'ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-*'},
    shared_fs_host: '10.0.0.20',
    shared_fs_path: '/',
    shared_fs_type: 'nfs4',
    shared_fs_mount_options: 'nfsvers=4.1',
    vpc_id: 'vpc-0abc',
    subnet_id: 'subnet-0abc',
    compute_security_group_id: 'sg-0abc',
    node_role_arn: 'arn:aws:iam::123456789012:role/x',
    mgmt_shared_fs_source: 'fs-0abc:/',
    mgmt_shared_fs_type: 'efs',
    mgmt_shared_fs_mount_options: 'tls,iam,mounttargetip=10.0.0.20,_netdev',
    ...overrides,
  }
  const doc = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, {value: v, sensitive: false, type: typeof v === 'number' ? 'number' : 'string'}]))
  writeFileSync(file, JSON.stringify(doc))
  return file
}
