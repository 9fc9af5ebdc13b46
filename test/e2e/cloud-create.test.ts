// citc create on a cloud, as a user runs it: the built CLI with test/doubles/bin/terraform (the TEST DOUBLE
// of the terraform binary: Terraform cannot be installed on these machines) first on PATH, and a real
// OpenSSH sshd on loopback as the "management node", serving the host key citc generated — so the
// pinning, the waiting for SSH, the upload and installation of citc's own package, and the remote
// ansible-playbook run are all real. The sshd stands in for the machine Terraform would make, through
// create's hidden --stand-in file (standIn below; src/lib/stand-in.ts): its port (sshPort), a prefix
// under this test's directory (citcPrefix), and test/fixtures/cloud-mgmt-test.yml instead of
// management.yml (playbook), which would reconfigure this machine (test/e2e/local-cluster.test.ts runs it).
// Create's last step builds the first compute-node image there: `packer` on the node's PATH is the
// packer TEST DOUBLE (test/doubles/bin/packer, through sshd's SetEnv), the cloud is the cloud API double
// (its state file, which the aws CLI double here lists), and the image builds' files on the node live
// under a directory of this test (imageRoot) instead of this machine's /etc and /var/lib.
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join, resolve} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {citc, ROOT, type CliResult} from '../helpers/cli.js'
import {doublesEnv, packerBuilds, packerDoubleEnv, standInFlags, writeAwsOutputs} from '../helpers/cloud.js'
import {parseImageState} from '../../src/lib/providers/cloud-image-state.js'
import {ClusterRegistry} from '../../src/lib/cluster/registry.js'
import {generateFromLimits} from '../../src/lib/tasks/finish/generate-config.js'
import {freePort, slurmSandbox, type SlurmSandbox} from '../helpers/slurm.js'
import {keygenFingerprint, startSshd, type SshdSandbox} from '../helpers/sshd.js'
import {sleep} from '../../src/lib/proc.js'

const PLAYBOOK = resolve(ROOT, 'test', 'fixtures', 'cloud-mgmt-test.yml')
const work = mkdtempSync(join(tmpdir(), 'citc-cloud-create-'))
const dataDir = join(work, 'data')
const prefix = join(work, 'remote-citc') // where citc is installed on the "management node"
const servers: SshdSandbox[] = []

beforeAll(() => {
  mkdirSync(join(work, 'home'))
  writeFileSync(cloudState, JSON.stringify({resources: []}))
})
afterAll(async () => {
  for (const s of servers) await s.stop()
  rmSync(work, {recursive: true, force: true})
  for (const n of ['full', 'sigint', 'play-broken', 'lim']) rmSync(`/tmp/citc-test-playbook-${n}.json`, {force: true})
})

const clusterDir = (name: string) => join(dataDir, 'clusters', name)
const keysDir = (name: string) => join(clusterDir(name), 'keys')
const tfLog = (name: string) => join(work, `${name}-terraform-calls.log`)
const calls = (name: string) => (existsSync(tfLog(name)) ? readFileSync(tfLog(name), 'utf8').trim().split('\n') : [])
const clusterYaml = (name: string) => readFileSync(join(clusterDir(name), 'cluster.yaml'), 'utf8')

/** The port of each cluster's stand-in management node, as its outputs were last written. */
const ports = new Map<string, number>()
/** What `terraform output -json` answers for cluster `name`, whose management node is on 127.0.0.1:port. */
const outputs = (name: string, port: number) => {
  ports.set(name, port)
  return writeAwsOutputs(join(work, `${name}-outputs.json`), name)
}
/** Where the image builds of cluster `name` keep their files on its stand-in node (its /), with the munge key management.yml would have made. */
function imageRoot(name: string): string {
  const root = join(work, 'node-root', name)
  if (!existsSync(join(root, 'etc', 'munge', 'munge.key'))) {
    mkdirSync(join(root, 'etc', 'munge'), {recursive: true})
    writeFileSync(join(root, 'etc', 'munge', 'munge.key'), Buffer.alloc(1024, 5), {mode: 0o400})
  }
  return root
}
/** create's hidden flags for the stand-in management node of cluster `name`. */
const standIn = (name: string) => standInFlags({prefix, playbook: PLAYBOOK, port: ports.get(name), imageRoot: imageRoot(name)})

/** The cloud API double's state (images the packer double "made") and the packer double's calls. */
const cloudState = join(work, 'cloud.json')
const packerLog = join(work, 'packer-calls.log')
const env = (name: string, extra: NodeJS.ProcessEnv = {}) => doublesEnv({dataDir, home: join(work, 'home'), tfLog: tfLog(name), cloudState}, extra)
/** images.json on the stand-in node of cluster `name`. */
const imageState = (name: string) => parseImageState(readFileSync(join(imageRoot(name), 'etc', 'citc', 'images.json'), 'utf8'))
/** The images of cluster `name` in the cloud double. */
const cloudImages = (name: string) =>
  existsSync(cloudState) ? (JSON.parse(readFileSync(cloudState, 'utf8')) as {resources: Array<{kind: string; name: string; tags?: Record<string, string>}>}).resources.filter((r) => r.kind === 'image' && r.tags?.cluster === name) : []

const create = (name: string, args: string[], extra: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<CliResult> =>
  citc(['create', '--provider', 'aws', '--name', name, '--region', 'us-east-1', ...args, ...standIn(name)], {env: env(name, extra), timeoutMs})
const resume = (name: string, args: string[], extra: NodeJS.ProcessEnv = {}, timeoutMs = 180_000): Promise<CliResult> =>
  citc(['create', '--name', name, '--resume', '--yes', ...args, ...standIn(name)], {env: env(name, extra), timeoutMs})

/** The "management node" of cluster `name`: sshd serving the host key citc generated, authorizing citc's admin key. */
async function managementNode(name: string, opts: {ownHostKey?: boolean} = {}): Promise<SshdSandbox> {
  const s = await startSshd({
    hostKeyFile: opts.ownHostKey ? undefined : join(keysDir(name), 'mgmt_host_ed25519'),
    authorizeKey: readFileSync(join(keysDir(name), 'admin_ed25519.pub'), 'utf8'),
    setEnv: packerDoubleEnv({cloudState, packerLog}),
  })
  servers.push(s)
  return s
}

const mode = (file: string) => statSync(file).mode & 0o777

describe('citc create --provider aws --plan-only', () => {
  it('renders, plans and stops: prints {terraformDir, plan}, applies nothing, pins the generated host key', async () => {
    const r = await create('plan', ['--plan-only', '--json'])
    expect(r.code, r.stderr).toBe(0)
    const doc = r.json()
    expect(doc.terraformDir).toBe(join(clusterDir('plan'), 'terraform'))
    expect(doc.plan.counts.create).toBeGreaterThan(10)
    expect(doc.plan.byType.aws_instance).toEqual(['aws_instance.mgmt'])
    expect(doc.plan.empty).toBe(false)
    // Terraform ran init, plan and show: never apply.
    const argv = calls('plan').map((l) => l.split(' ')[0])
    expect(argv).toEqual(['version', 'init', 'plan', 'show'])
    expect(calls('plan').join('\n')).not.toMatch(/^apply/m)
    // Keys in keys/ (0600); the host key's fingerprint pinned in cluster.yaml before any connection.
    for (const f of ['admin_ed25519', 'admin_ed25519.pub', 'mgmt_host_ed25519', 'mgmt_host_ed25519.pub']) expect(mode(join(keysDir('plan'), f)), f).toBe(0o600)
    const fp = keygenFingerprint(join(keysDir('plan'), 'mgmt_host_ed25519.pub'))
    expect(clusterYaml('plan')).toContain(`hostKeyFingerprint: ${fp}`)
    expect(doc.hostKeyFingerprint).toBe(fp)
    expect(clusterYaml('plan')).toMatch(/phase: creating/)
    // The tfvars hold the host private key: 0600, in a 0700 directory.
    const tfvars = join(doc.terraformDir, 'citc.auto.tfvars.json')
    expect(mode(tfvars)).toBe(0o600)
    expect(mode(doc.terraformDir)).toBe(0o700)
    const vars = JSON.parse(readFileSync(tfvars, 'utf8'))
    expect(vars.ssh_host_key_public).toBe(readFileSync(join(keysDir('plan'), 'mgmt_host_ed25519.pub'), 'utf8').trim())
    expect(vars).toMatchObject({cluster_id: 'plan', region: 'us-east-1', zone: 'us-east-1a', mgmt_shape: 't3a.medium'})
  })

  it('a cluster that was only planned: status says so, ssh refuses with a hint, destroy takes it away', async () => {
    const e = env('plan')
    const status = await citc(['status', '-c', 'plan', '--json'], {env: e})
    expect(status.code, status.stderr).toBe(0)
    expect(status.json()).toMatchObject({phase: 'creating', managementNode: '(not made yet)', controller: {up: false, error: expect.stringMatching(/not made yet/)}})
    const nodes = await citc(['nodes', '-c', 'plan'], {env: e})
    expect(nodes.code).toBe(4) // not an empty list that reads as "no nodes"
    expect(nodes.stderr).toMatch(/cannot list the nodes of plan: .*not made yet/)
    const ssh = await citc(['ssh', '-c', 'plan', '--', 'true'], {env: e})
    expect(ssh.code).toBe(2)
    expect(ssh.stderr).toMatch(/has no management node yet/)
    expect(ssh.stderr).toMatch(/citc create --name plan --resume/)
    const destroy = await citc(['destroy', 'plan', '--yes', '--json'], {env: e})
    expect(destroy.code, destroy.stderr).toBe(0)
    // Nothing was applied: forgotten without Terraform or the cloud (and it says so).
    expect(destroy.json()).toMatchObject({destroyed: 'plan', applyStarted: false, poweredDown: [], terraform: {destroyed: 0, ran: false}, sweep: {skipped: true}})
    expect(calls('plan').slice(-1)[0]).toMatch(/^show /) // no terraform call after the plan
    expect(existsSync(clusterDir('plan'))).toBe(false)
  })

  it.each([
    ['google', ['--project', 'my-proj-1', '--region', 'europe-west2'], 'google_compute_instance.mgmt', {project: 'my-proj-1', region: 'europe-west2', zone: 'europe-west2-b'}],
    [
      'oracle',
      ['--region', 'uk-london-1', '--zone', '2', '--tenancy', 'ocid1.tenancy.oc1..aaaa', '--compartment', 'ocid1.compartment.oc1..cccc', '--user', 'ocid1.user.oc1..bbbb', '--fingerprint', '12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de:f0'],
      'oci_core_instance.mgmt',
      {region: 'uk-london-1', availability_domain: 2, tenancy_ocid: 'ocid1.tenancy.oc1..aaaa', compartment_ocid: 'ocid1.compartment.oc1..cccc', user_ocid: 'ocid1.user.oc1..bbbb'},
    ],
  ] as const)('%s: renders and plans its own templates with its own inputs', async (provider, args, instance, vars) => {
    const name = `plan-${provider}`
    const extra = provider === 'oracle' ? ['--key-file', join(work, 'oci_api_key.pem')] : []
    if (provider === 'oracle') writeFileSync(join(work, 'oci_api_key.pem'), '-----BEGIN PRIVATE KEY-----\nnot used by the double\n-----END PRIVATE KEY-----\n', {mode: 0o600})
    const r = await citc(['create', '--provider', provider, '--name', name, ...args, ...extra, '--plan-only', '--json'], {env: env(name)})
    expect(r.code, r.stderr).toBe(0)
    const doc = r.json()
    expect(doc.plan.byType[instance.split('.')[0]]).toEqual([instance])
    expect(doc.plan.counts.create).toBeGreaterThan(8)
    const tfvars = JSON.parse(readFileSync(join(doc.terraformDir, 'citc.auto.tfvars.json'), 'utf8'))
    expect(tfvars).toMatchObject({cluster_id: name, ...vars})
    expect(existsSync(join(doc.terraformDir, 'main.tf'))).toBe(true)
    expect(calls(name).map((l) => l.split(' ')[0])).toEqual(['version', 'init', 'plan', 'show'])
  })

  it('without a terminal, applying needs --yes (said before anything is made)', async () => {
    const r = await create('noyes', [])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/--yes/)
    expect(existsSync(clusterDir('noyes'))).toBe(false)
  })

  it('refuses bad input by flag, and a bad --config at file:line:col, creating nothing', async () => {
    const bad = await create('badzone', ['--zone', 'eu-west-2a', '--plan-only'])
    expect(bad.code).toBe(3)
    expect(bad.stderr).toMatch(/--zone: eu-west-2a is not in region us-east-1/)
    const cfg = join(work, 'cluster.yaml')
    writeFileSync(cfg, 'provider: aws\nname: fromfile\nregion: us-east-1\nzone: us-west-2b\nmgmt-shap: t3a.large\n')
    const r = await citc(['create', '--config', cfg, '--plan-only'], {env: env('fromfile')})
    expect(r.code).toBe(3)
    expect(r.stderr).toContain(`${cfg}:5:1 mgmt-shap: unknown key "mgmt-shap"; did you mean "mgmt-shape"?`)
    writeFileSync(cfg, 'provider: aws\nname: fromfile\nregion: us-east-1\nzone: us-west-2b\n')
    const r2 = await citc(['create', '--config', cfg, '--plan-only'], {env: env('fromfile')})
    expect(r2.code).toBe(3)
    expect(r2.stderr).toContain(`${cfg}:4:1 zone: us-west-2b is not in region us-east-1`)
    expect(existsSync(clusterDir('fromfile'))).toBe(false)
    writeFileSync(cfg, 'provider: aws\nname: fromfile\nregion: us-east-1\nzone: us-east-1b\nmgmt-shape: t3a.large\n')
    const ok = await citc(['create', '--config', cfg, '--plan-only', '--json'], {env: env('fromfile')})
    expect(ok.code, ok.stderr).toBe(0)
    expect(clusterYaml('fromfile')).toMatch(/zone: us-east-1b/)
    expect(clusterYaml('fromfile')).toMatch(/mgmtShape: t3a.large/)

    // A flag that would be ignored is refused: another provider's, or a setting of a cluster that exists.
    const project = await create('wrongflag', ['--project', 'my-proj', '--plan-only'])
    expect(project.code).toBe(3)
    expect(project.stderr).toMatch(/--project: is for google, not aws: leave it out/)
    expect(existsSync(clusterDir('wrongflag'))).toBe(false)
    const local = await citc(['create', '--provider', 'local', '--name', 'x', '--zone', 'a', '--yes'], {env: env('x')})
    expect(local.code).toBe(3)
    expect(local.stderr).toMatch(/--zone: is for cloud providers, not local/)
    const before = clusterYaml('fromfile')
    const moved = await citc(['create', '--name', 'fromfile', '--region', 'eu-west-2', '--mgmt-shape', 't3a.large', '--plan-only'], {env: env('fromfile')})
    expect(moved.code).toBe(3)
    expect(moved.stderr).toMatch(/--region: cluster fromfile exists and was created with --region us-east-1; a cluster's settings are fixed once made/)
    expect(moved.stderr).not.toMatch(/--mgmt-shape/) // the same value as recorded is fine
    expect(clusterYaml('fromfile')).toBe(before)
    const same = await citc(['create', '--name', 'fromfile', '--region', 'us-east-1', '--plan-only'], {env: env('fromfile')})
    expect(same.code, same.stderr).toBe(0)
    // The same from --config, reported at the file's line.
    writeFileSync(cfg, 'provider: aws\nname: cfgflag\nregion: us-east-1\nproject: my-proj\n')
    const fromCfg = await citc(['create', '--config', cfg, '--plan-only'], {env: env('cfgflag')})
    expect(fromCfg.code).toBe(3)
    expect(fromCfg.stderr).toContain(`${cfg}:4:1 project: is for google, not aws: leave it out`)
    expect(existsSync(clusterDir('cfgflag'))).toBe(false)
    // --resume with nothing to continue makes nothing (it used to create a local cluster).
    const nothing = await citc(['create', '--resume', '--yes', '--name', 'ghost'], {env: env('ghost')})
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toMatch(/no cluster named "ghost" to continue/)
    expect(existsSync(clusterDir('ghost'))).toBe(false)
  })
})

describe('citc create --provider aws, all the way, over SSH to a real sshd', () => {
  let sshd: SshdSandbox

  it('applies, reads the outputs, waits for SSH with the pinned key, installs citc there and runs the playbook', async () => {
    expect((await create('full', ['--plan-only'])).code).toBe(0)
    sshd = await managementNode('full')
    const r = await resume('full', ['--json'], {TF_DOUBLE_OUTPUTS: outputs('full', sshd.port)})
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    const doc = r.json()
    expect(doc.mgmt).toMatchObject({host: '127.0.0.1', port: sshd.port, user: sshd.user})
    expect(doc.steps).toEqual(expect.arrayContaining(['render', 'init', 'plan', 'apply', 'outputs', 'ssh', 'tools', 'install', 'playbook', 'image']))
    expect(doc.outputs.vpc_id).toBe('vpc-0abc')
    expect(calls('full').filter((l) => l.startsWith('apply'))).toEqual(['apply -input=false -no-color -lock-timeout=60s citc.tfplan'])
    // cluster.yaml: the address Terraform gave, the outputs, ready.
    const yaml = clusterYaml('full')
    expect(yaml).toMatch(/host: 127\.0\.0\.1/)
    expect(yaml).toMatch(new RegExp(`port: ${sshd.port}`))
    expect(yaml).toMatch(/phase: ready/)
    expect(yaml).toMatch(/vpc_id: vpc-0abc/)
    expect(yaml).toMatch(new RegExp(`citcBin: ${prefix}/lib/node_modules/citc/bin/run.js`))
    // citc's own bundle (with its node_modules) was built, uploaded and unpacked on the node.
    const installed = JSON.parse(readFileSync(join(prefix, 'lib', 'node_modules', 'citc', 'package.json'), 'utf8'))
    expect(installed.name).toBe('citc')
    expect(existsSync(join(prefix, 'lib', 'node_modules', 'citc', 'playbooks', 'management.yml'))).toBe(true)
    // The playbook ran there, with citc's variables.
    const vars = JSON.parse(readFileSync('/tmp/citc-test-playbook-full.json', 'utf8'))
    expect(vars).toEqual({provider: 'aws', cluster_name: 'full', citc_bin: `${prefix}/lib/node_modules/citc/bin/run.js`, citc_node_bin: expect.stringMatching(/\/node$/), shared_fs_host: '10.0.0.20', shared_fs_type: 'nfs4'})
    // A known_hosts file with only the pinned key, for the system's ssh.
    const knownHosts = readFileSync(join(keysDir('full'), 'known_hosts'), 'utf8')
    expect(knownHosts).toBe(`[127.0.0.1]:${sshd.port} ${readFileSync(join(keysDir('full'), 'mgmt_host_ed25519.pub'), 'utf8').split(' ').slice(0, 2).join(' ')}\n`)
    // The first compute-node image: Packer (the double) ran once on the node with the aws source and
    // the installed citc's templates, the image is in the cloud, tagged, and current in images.json.
    expect(doc.image).toMatch(/^citc-slurm-compute-full-v\d{14}$/)
    const builds = packerBuilds(packerLog).filter((l) => l.includes(`${doc.image}.pkrvars.json`))
    expect(builds).toEqual([`build -color=false -timestamp-ui -only=cloud.amazon-ebs.aws -var-file=${imageRoot('full')}/var/lib/citc/image-builds/${doc.image}.pkrvars.json ${prefix}/lib/node_modules/citc/templates/packer`])
    expect(cloudImages('full').map((i) => [i.name, i.tags?.['citc-image-arch']])).toEqual([[doc.image, 'x86_64']])
    const state = imageState('full')
    expect(state.current.x86_64?.name).toBe(doc.image)
    expect(state.inputs[doc.image]).toMatch(/^[0-9a-f]{16}$/)
  }, 240_000)

  it('a plain re-run converges: plans no change, applies nothing new, skips the installed package', async () => {
    const before = calls('full').length
    const r = await citc(['create', '--name', 'full', '--yes', ...standIn('full')], {env: env('full', {TF_DOUBLE_OUTPUTS: outputs('full', sshd.port)}), timeoutMs: 120_000})
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(r.stdout + r.stderr).toMatch(/no changes/)
    expect(r.stdout).toMatch(/already installed on the management node/)
    const again = calls('full').slice(before)
    expect(again.some((l) => l.startsWith('plan'))).toBe(true)
    // Nothing that goes into the image changed: no build, the same image current.
    const current = imageState('full').current.x86_64?.name
    expect(r.stdout).toMatch(new RegExp(`Compute-node image ${current}: unchanged`))
    expect(packerBuilds(packerLog).filter((l) => l.includes('citc-slurm-compute-full-'))).toHaveLength(1)
    expect(cloudImages('full')).toHaveLength(1)
  }, 120_000)

  it('citc ssh -- runs a command with the pinned key and passes its exit code through', async () => {
    const e = {CITC_DATA_DIR: dataDir, CITC_CLUSTER: undefined}
    const hi = await citc(['ssh', '-c', 'full', '--', 'echo', 'hi'], {env: e})
    expect(hi.code, hi.stderr).toBe(0)
    expect(hi.stdout).toBe('hi\n')
    const seven = await citc(['ssh', '-c', 'full', '--', 'sh', '-c', 'echo oops >&2; exit 7'], {env: e})
    expect(seven.code).toBe(7)
    expect(seven.stderr).toBe('oops\n')
    const json = await citc(['ssh', '-c', 'full', '--json', '--', 'sh', '-c', 'echo out; exit 3'], {env: e})
    expect(json.code).toBe(3)
    expect(json.json()).toEqual({cluster: 'full', command: ['sh', '-c', 'echo out; exit 3'], exitCode: 3, stdout: 'out\n', stderr: ''})
    const quoted = await citc(['ssh', '-c', 'full', '--', 'printf', '%s|', 'a b', '$(id)', "it's"], {env: e})
    expect(quoted.stdout).toBe("a b|$(id)|it's|")
  })

  it('citc ssh without a command is the system ssh with the pinned known_hosts (a shell reading stdin here)', async () => {
    // No TTY in a test: ssh runs the remote login shell on the piped stdin, which is enough to show it connects.
    const r = await citc(['ssh', '-c', 'full'], {env: {CITC_DATA_DIR: dataDir, CITC_CLUSTER: undefined}, input: 'echo via-openssh\nexit 5\n'})
    expect(r.stdout).toContain('via-openssh')
    expect(r.code).toBe(5)
  })
})

describe('failures, --resume and Ctrl-C', () => {
  // Each failing step, then --resume: the failed step runs again, the ones done are not repeated,
  // and the run continues to the next step (here: SSH, which nobody answers, so it ends there).
  it.each([
    ['init', /terraform init failed: Terraform could not reach the network/],
    ['plan', /terraform plan failed: the cloud credentials are missing, expired or invalid \(ExpiredToken\)/],
    ['show', /terraform show failed/],
    ['apply', /terraform apply failed \(aws_instance\.mgmt\): the cloud has no capacity for this shape in this zone right now \(InsufficientInstanceCapacity\)/],
    ['output', /terraform output failed/],
  ])('a failure at %s is explained, and --resume continues after it', async (step, message) => {
    const name = `fail-${step}`
    const closed = await freePort() // nobody listens here: SSH never comes up
    const failed = await create(name, ['--yes', '--ssh-timeout', '2'], {TF_DOUBLE_FAIL: step, TF_DOUBLE_OUTPUTS: outputs(name, closed)})
    expect(failed.code, failed.stderr).toBe(4)
    expect(failed.stderr).toMatch(message)
    expect(failed.stderr).toMatch(/Try: .*citc create --name fail-\w+ --resume continues where it stopped/)
    const first = calls(name).length
    const resumed = await resume(name, ['--ssh-timeout', '2'], {TF_DOUBLE_OUTPUTS: outputs(name, closed)})
    const second = calls(name).slice(first).map((l) => l.split(' ')[0])
    // It got past every Terraform step, to SSH.
    expect(resumed.code).toBe(4)
    expect(resumed.stderr).toMatch(/SSH on the management node \S+@127\.0\.0\.1:\d+ never came up: \d+ attempt\(s\) in \d+ s, the last one: .*connection refused/)
    expect(resumed.stderr).toMatch(/console log \(cloud-init\)/)
    if (step === 'init') expect(second.filter((c) => c === 'init')).toHaveLength(1) // it failed: again
    else expect(second).not.toContain('init') // done before (.terraform exists)
    if (step === 'output') expect(second).not.toContain('apply') // applied before: not again
    else expect(second.filter((c) => c === 'apply')).toHaveLength(1)
    expect(second).toContain('output')
  }, 60_000)

  it('Ctrl-C during apply stops Terraform and exits 130; --resume plans again and finishes', async () => {
    const name = 'sigint'
    expect((await create(name, ['--plan-only'])).code).toBe(0)
    const pidFile = join(work, 'tf.pid')
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'run.js'), 'create', '--name', name, '--resume', '--yes', ...standIn(name)], {
      env: {...process.env, CI: 'true', NO_COLOR: '1', ...env(name, {TF_DOUBLE_HANG: 'apply', TF_DOUBLE_PID_FILE: pidFile})},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    child.stdout.resume()
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)))
    const deadline = Date.now() + 30_000
    while (!calls(name).some((l) => l.startsWith('apply')) && Date.now() < deadline) await sleep(100)
    await sleep(500) // the double prints its first resource, then hangs
    const tfPid = Number(readFileSync(pidFile, 'utf8'))
    child.kill('SIGINT')
    const code = await Promise.race([exited, sleep(20_000).then(() => 'timeout')])
    expect(code).toBe(130)
    expect(stderr).toMatch(/create interrupted/)
    expect(stderr).toMatch(/--resume/)
    expect(() => process.kill(tfPid, 0)).toThrow() // Terraform was stopped, not orphaned
    expect(readFileSync(join(clusterDir(name), 'journal'), 'utf8')).not.toMatch(/"step":"apply"/)

    const node = await managementNode(name)
    const r = await resume(name, [], {TF_DOUBLE_OUTPUTS: outputs(name, node.port)})
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(r.stdout).toMatch(/Cluster sigint is ready/)
  }, 120_000)

  it('refuses a management node whose host key is not the pinned one, at once', async () => {
    const name = 'pinned'
    expect((await create(name, ['--plan-only'])).code).toBe(0)
    const impostor = await managementNode(name, {ownHostKey: true}) // authorizes citc's key, but its own host key
    const t0 = Date.now()
    const r = await resume(name, ['--ssh-timeout', '120'], {TF_DOUBLE_OUTPUTS: outputs(name, impostor.port)})
    expect(r.code).toBe(4)
    expect(Date.now() - t0).toBeLessThan(30_000) // not retried until the timeout
    expect(r.stderr).toMatch(/does not match the pinned key/)
    expect(r.stderr).toContain(`expected ${keygenFingerprint(join(keysDir(name), 'mgmt_host_ed25519.pub'))}`)
    expect(r.stderr).toContain(`received ${impostor.hostKeyFingerprint}`)
    expect(impostor.log()).not.toMatch(/Accepted publickey/) // citc never authenticated to it
    // The interactive `citc ssh` (the system ssh, with the pinned known_hosts) refuses it as well.
    const shell = await citc(['ssh', '-c', name], {env: {CITC_DATA_DIR: dataDir, CITC_CLUSTER: undefined}, input: 'echo should-not-run\n'})
    expect(shell.code).toBe(255)
    expect(shell.stdout).not.toContain('should-not-run')
    expect(shell.stderr).toMatch(/Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/)
    expect(impostor.log()).not.toMatch(/Accepted publickey/)
  }, 60_000)

  it('a failed playbook names the failing task, shows its output, points at the log; --resume runs only the playbook again', async () => {
    const name = 'play-broken'
    expect((await create(name, ['--plan-only'])).code).toBe(0)
    const node = await managementNode(name)
    const r = await resume(name, [], {TF_DOUBLE_OUTPUTS: outputs(name, node.port)})
    expect(r.code).toBe(4)
    expect(r.stderr).toMatch(/cloud-mgmt-test\.yml failed at task "Break on purpose"/)
    expect(r.stderr).toMatch(/broken on purpose/)
    const log = /read the failed task's output in (\S+ansible-\S+\.log)/.exec(r.stderr)?.[1]
    expect(log, r.stderr).toBeDefined()
    expect(readFileSync(log!, 'utf8')).toMatch(/PLAY RECAP/)
    const before = calls(name).length
    const again = await resume(name, [], {TF_DOUBLE_OUTPUTS: outputs(name, node.port)})
    expect(again.code).toBe(4)
    expect(again.stdout).toMatch(/done in an earlier run/)
    expect(calls(name).slice(before).some((l) => l.startsWith('apply'))).toBe(false)
  }, 120_000)
})

describe('with node limits: finish runs on the management node over SSH', () => {
  let sb: SlurmSandbox
  afterAll(async () => {
    await sb?.stop()
  })

  it('writes slurm.conf from the limits there and restarts its slurmctld', async () => {
    // The management node's Slurm: a private slurmctld (its own munged) running one node so far.
    const programs = join(work, 'lim-programs')
    mkdirSync(programs)
    for (const p of ['resume', 'suspend', 'resume-fail']) writeFileSync(join(programs, p), '#!/bin/sh\nexit 0\n', {mode: 0o755})
    sb = await slurmSandbox('lim')
    const initial = generateFromLimits({provider: 'aws', clusterId: 'lim', limitsText: 'c5.xlarge: 1\n', limitsFile: 'initial.yaml', elastic: {programsDir: programs}, current: sb.base})
    writeFileSync(sb.confPath, initial.generated.slurmConf)
    await sb.startController()
    const limits = join(work, 'lim-limits.yaml')
    writeFileSync(limits, 'c5.xlarge: 2\n')

    // Create gets as far as SSH (nobody listens yet); then the cluster's Slurm paths are pointed at the
    // sandbox (as `citc cluster add --conf-path` would), its sshd is started, and create continues.
    const closed = await freePort()
    const first = await create('lim', ['--yes', '--limits', limits, '--ssh-timeout', '1'], {TF_DOUBLE_OUTPUTS: outputs('lim', closed)})
    expect(first.code, first.stderr).toBe(4)
    new ClusterRegistry(dataDir).update('lim', (r) => {
      r.slurm.confPath = sb.confPath
      r.slurm.programsDir = programs
      r.slurm.restartCommand = [sb.restartScript]
    })
    const node = await managementNode('lim')
    const r = await resume('lim', [], {TF_DOUBLE_OUTPUTS: outputs('lim', node.port)})
    expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
    expect(r.stdout).toMatch(/Configuration applied \((restart|reconfigure)\)/)
    const conf = readFileSync(sb.confPath, 'utf8')
    expect(conf).toMatch(/^NodeName=lim-c5-xlarge-\[0001-0002\] /m)
    expect(conf).toContain(`ResumeProgram=${programs}/resume`)
    expect(sb.ping()).toBe(true)
    const status = await citc(['status', '-c', 'lim', '--json'], {env: {CITC_DATA_DIR: dataDir, CITC_CLUSTER: undefined}})
    expect(status.json().nodes.map((n: {name: string}) => n.name)).toEqual(['lim-c5-xlarge-0001', 'lim-c5-xlarge-0002'])
  }, 180_000)
})
