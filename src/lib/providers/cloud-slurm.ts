// What every cloud's clusters need of Slurm (each cloud module's `slurm` part): nodes are VMs that
// boot in minutes and change address between power cycles, with systemd and cgroups.
import type {SlurmProfile} from '../slurm/profile.js'

export const CLOUD_SLURM: SlurmProfile = {
  user: 'slurm',
  // ResumeRate 20 stays under the slowest cloud API's rate limit (Oracle's, as CitC found).
  power: {suspendTime: 600, resumeTimeout: 600, suspendTimeout: 120, resumeRate: 20, suspendRate: 20},
  nodesRegisterAddress: true,
  plugins: {proctrack: 'proctrack/cgroup', task: 'task/affinity,task/cgroup', jobacctGather: 'jobacct_gather/linux'},
}
