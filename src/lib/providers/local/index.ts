// The local provider: this machine is the management node, and compute nodes are slurmd processes
// the node driver starts here (driver.ts). No cloud part: no Terraform, credentials or sweeper.
import type {ProviderModule} from '../module.js'
import {localNodeConfig, type LocalNodeConfig} from './node-config.js'

export const localModule: ProviderModule<'local', LocalNodeConfig> = {
  name: 'local',
  title: 'this machine, no cloud account',
  shapes: async () => {
    const {localCatalogue} = await import('./shapes.js')
    return (opts = {}) => localCatalogue(opts.host, opts.gpuRoot)
  },
  availabilityDomains: false,
  nodeConfig: localNodeConfig,
  managementNode: 'this-machine',
  slurm: {
    user: 'root',
    // Nodes reach the controller on loopback, whatever the machine's name resolves to.
    controllerAddr: '127.0.0.1',
    // Nodes are processes that start in about a second: short timeouts make failures show at once, and
    // a short SuspendTime makes idle nodes visibly power down.
    power: {suspendTime: 60, resumeTimeout: 60, suspendTimeout: 30, resumeRate: 0, suspendRate: 0},
    // A node's address is always this machine's loopback.
    nodesRegisterAddress: false,
    // Without systemd or cgroups in the nodes' namespaces, processes are tracked the simple way.
    plugins: {proctrack: 'proctrack/linuxproc', task: 'task/none', jobacctGather: 'jobacct_gather/none'},
    // Every node is a slurmd on this machine with its own port. The catalogue has three CPU shapes, each a
    // range of 9,999 ports from here (below 47,000), then GPU shapes with a port per GPU at most
    // (slurm/nodes.ts shapePortOffsets).
    sharedNodeAddress: {addr: '127.0.0.1', firstPort: 17_001},
  },
  doctorTools: [
    {
      name: 'ansible-playbook',
      purpose: 'create and destroy with --provider local',
      required: true,
      version: {args: ['--version'], pick: /ansible-playbook \[core ([^\]]+)\]/},
      install: 'apt-get install ansible-core (citc create --provider local installs it too)',
    },
  ],
  flags: {
    force: {kind: 'boolean', description: 'take over this machine even though a Slurm controller citc did not make is running'},
  },
  nodeDriver: async () => (await import('./driver.js')).localNodeDriver,
  async imageBuilder() {
    const {localImageBuilder} = await import('./image-builder.js')
    return localImageBuilder
  },
}
