import {Flags, type Interfaces} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import type {CreateFlagSpec} from '../lib/providers/module.js'
import {CLOUD_PROVIDER_NAMES, cloudModule, PROVIDER_MODULES, PROVIDER_NAMES} from '../lib/providers/registry.js'
import {DEFAULT_SSH_CIDR} from '../lib/providers/cloud-inputs.js'
import {DEFAULT_SSH_TIMEOUT_S, GPU_NODES, IMAGE_OS, type CreateRequest, type ProviderFlagValues} from '../lib/tasks/create/create-request.js'
import {ADDRESS_ECHO_TIMEOUT_MS, ADDRESS_ECHO_URL} from '../lib/tasks/create/ssh-cidr.js'

/**
 * The flags only some providers take, from their modules: one flag per name, its description each
 * taker's own prefixed by its name ("aws: a profile of ~/.aws/config; oracle: a profile of ~/.oci/config").
 */
function providerFlags() {
  const byName = new Map<string, Array<{provider: string; spec: CreateFlagSpec}>>()
  for (const m of PROVIDER_MODULES) {
    for (const [flag, spec] of Object.entries(m.cloud?.flags ?? m.flags ?? {})) byName.set(flag, [...(byName.get(flag) ?? []), {provider: m.name, spec}])
  }
  const strings: Record<string, Interfaces.OptionFlag<string | undefined>> = {}
  const booleans: Record<string, Interfaces.BooleanFlag<boolean>> = {}
  for (const [flag, takers] of byName) {
    const description = takers.map((t) => `${t.provider}: ${t.spec.description}`).join('; ')
    if (takers[0].spec.kind === 'boolean') booleans[flag] = Flags.boolean({description, default: false})
    else strings[flag] = Flags.string({description})
  }
  return {strings, booleans}
}
const PROVIDER_FLAGS = providerFlags()

export default class Create extends BaseCommand<typeof Create> {
  static summary = 'Create an elastic Slurm cluster: on AWS, Google Cloud or Oracle Cloud, or on this machine (local)'

  static description = `With --provider aws|google|oracle, Terraform (or OpenTofu, >= 1.5: bring your own) builds the network,
the shared filesystem and the management node in your account, all tagged cluster=<name>. citc
generates the management node's SSH host key and hands it over by cloud-init, so the key is pinned
before the first connection. It waits for SSH, installs Node.js and Ansible there, installs this same
citc with its dependencies (the node needs no npm registry), runs its management playbook on the node,
and applies the node limits if you gave some.
--plan-only stops after \`terraform plan\` and creates nothing.

With --provider local (the default), this machine becomes the cluster's management node:
citc installs Slurm, munge, MariaDB (accounting), OpenLDAP (users) and, unless --no-monitoring,
Prometheus with node-exporter (on loopback only, for citc monitor) with apt and Ansible, writes
slurm.conf from the limits, and runs compute nodes as slurmd processes that Slurm starts when jobs
need them and stops when they are idle. Needs root on Debian 12 or Ubuntu 24.04. On a machine with
NVIDIA GPUs (the driver loaded), the local shapes include GPU nodes: local.<type>x1 (one GPU each)
and local.<type>x<n> (all of a type's GPUs); --gpu-nodes (or the wizard) picks one node per GPU,
one node with all of them, or none.

SSH to a cloud management node is open to --ssh-cidr, one IPv4 range; the default, ${DEFAULT_SSH_CIDR}, is the
whole internet, and create then warns once (on stderr; under --json in "warnings"). The wizard asks,
proposing this machine's public address as /32, from an interface or else from
${ADDRESS_ECHO_URL} (${ADDRESS_ECHO_TIMEOUT_MS / 1000} s at most): citc connects to the node from this machine,
so the range must include it.

On a terminal, a short wizard asks what no flag says (provider; the credentials found and which one
is used; region and zone; management shape; who may reach SSH; name; node limits); --yes takes the
defaults. Every answer can also come from --config FILE, a YAML file whose keys are these flags'
names without "--".
Re-running create converges (changes nothing that is right); --resume continues after a failure or
Ctrl-C, skipping the steps done.`

  static examples = [
    {description: 'A local cluster with the defaults (4 small nodes)', command: '<%= config.bin %> create --provider local --yes'},
    {description: 'On a workstation with NVIDIA GPUs: one node with all of a type\'s GPUs, plus 4 small CPU nodes', command: '<%= config.bin %> create --provider local --gpu-nodes all --yes'},
    {description: 'Named, with your own limits and a 2-minute idle time', command: '<%= config.bin %> create --name lab --limits limits.yaml --suspend-time 120 --yes'},
    {description: 'Look at what Terraform would build on AWS, creating nothing', command: '<%= config.bin %> create --provider aws --profile research --region eu-west-2 --name lab --plan-only'},
    {description: 'SSH to the management node only from one address (this machine\'s: citc connects from here)', command: '<%= config.bin %> create --provider aws --name lab --ssh-cidr 203.0.113.7/32 --yes'},
    {description: 'A Google Cloud cluster with node limits', command: '<%= config.bin %> create --provider google --project my-project --region europe-west2 --zone europe-west2-b --name lab --limits limits.yaml --yes'},
    {description: 'An Oracle Cloud cluster from a profile of ~/.oci/config', command: '<%= config.bin %> create --provider oracle --profile DEFAULT --compartment ocid1.compartment.oc1..aaa --zone 2 --name lab --yes'},
    {description: 'Every answer from a file', command: '<%= config.bin %> create --config cluster.yaml --yes'},
    {description: 'Continue after a failure or Ctrl-C', command: '<%= config.bin %> create --name lab --resume --yes'},
  ]

  static flags = {
    provider: Flags.option({char: 'p', options: PROVIDER_NAMES, description: `where the cluster runs (default ${PROVIDER_NAMES[0]})`} as const)(),
    name: Flags.string({char: 'n', description: 'cluster name (default: two random words, as CitC)'}),
    config: Flags.string({description: 'a YAML file with any of these flags (keys: the flag names without --); flags win'}),
    limits: Flags.string({char: 'l', description: 'limits file: node shapes and counts (local default: local.small: 4; clouds: none until citc finish)'}),
    region: Flags.string({description: 'cloud region (default: the credentials\' region, else the provider\'s default)'}),
    zone: Flags.string({description: 'zone (aws, google) or availability domain 1-3 (oracle)'}),
    ...PROVIDER_FLAGS.strings,
    'mgmt-shape': Flags.string({
      description: `shape of the management node (${CLOUD_PROVIDER_NAMES.map((p) => `${p} ${cloudModule(p).cloud.defaults.mgmtShape}`).join(', ')})`,
    }),
    'image-os': Flags.option({options: IMAGE_OS, description: 'management node OS (default ubuntu-24.04; debian-12 on aws only)'} as const)(),
    'ssh-cidr': Flags.string({
      description: `clouds: the one IPv4 range allowed to reach SSH on the management node, e.g. 203.0.113.7/32 (default ${DEFAULT_SSH_CIDR}, with a warning; the wizard proposes this machine's public address)`,
    }),
    'plan-only': Flags.boolean({default: false, description: 'clouds: render, terraform init and plan, show the plan, and stop: nothing is created in the cloud (the cluster is registered, so --resume can apply that plan, or destroy forget it)'}),
    'ssh-timeout': Flags.integer({min: 1, description: `clouds: seconds to wait for SSH on the new management node (default ${DEFAULT_SSH_TIMEOUT_S})`}),
    'suspend-time': Flags.integer({min: 10, description: 'seconds an idle node runs before it is powered down (default 60 local, 600 clouds)'}),
    'gpu-nodes': Flags.option({
      options: GPU_NODES,
      description:
        "local, on a machine with NVIDIA GPUs: per-gpu (default) makes one node per GPU (local.<type>x1), all one node with all of a type's GPUs (local.<type>x<n>), none no GPU nodes; the wizard asks per GPU type",
    } as const)(),
    monitoring: Flags.boolean({allowNo: true, description: 'Prometheus, node-exporter and the Slurm collector on the management node, all on loopback (default: on; --no-monitoring leaves them out; fixed once the cluster is made)'}),
    resume: Flags.boolean({description: 'continue a create that failed or was interrupted, skipping the steps done', default: false}),
    ...PROVIDER_FLAGS.booleans,
    // Tests only: a stand-in management node (the e2e tests' sshd on loopback). docs/stand-ins.md, src/lib/stand-in.ts.
    'stand-in': Flags.string({hidden: true, description: "a stand-in file (tests): clouds: its managementNode stands in for the machine Terraform made; local: its driver.gpuRoot for this machine's GPUs"}),
  }

  async run() {
    const {resolveCreate} = await import('../lib/tasks/create/resolve-create.js')
    const {readStandInFile} = await import('../lib/stand-in.js')
    const io = this.io()
    const {flags} = this
    const standIn = flags['stand-in'] ? readStandInFile(flags['stand-in']) : undefined
    const request: CreateRequest = {
      provider: flags.provider,
      currentCluster: flags.cluster,
      configFile: flags.config,
      name: flags.name,
      limitsFile: flags.limits,
      region: flags.region,
      zone: flags.zone,
      mgmtShape: flags['mgmt-shape'],
      imageOs: flags['image-os'],
      sshCidr: flags['ssh-cidr'],
      sshTimeoutS: flags['ssh-timeout'],
      suspendTime: flags['suspend-time'],
      monitoring: flags.monitoring,
      gpuNodes: flags['gpu-nodes'],
      providerFlags: providerFlagValues(flags),
      resume: flags.resume,
      planOnly: flags['plan-only'],
      standIn: standIn?.managementNode ?? {},
      ...(standIn?.driver?.gpuRoot ? {gpuRoot: standIn.driver.gpuRoot} : {}),
      ...(standIn?.addressEcho ? {addressEcho: standIn.addressEcho} : {}),
    }
    const plan = await resolveCreate(io, request, {dataDir: this.config.dataDir, packageRoot: this.config.root})
    const {runCreate} = await import('../lib/tasks/create/run-create.js')
    return runCreate(io, plan, this.config.dataDir)
  }
}

/** The values of the providers' own flags, by the names their modules declare. */
function providerFlagValues(flags: Record<string, unknown>): ProviderFlagValues {
  const names = [...Object.keys(PROVIDER_FLAGS.strings), ...Object.keys(PROVIDER_FLAGS.booleans)]
  return Object.fromEntries(names.map((name) => [name, flags[name] as string | boolean | undefined]))
}
