// slurm.conf keys that citc writes itself. A user-seeded setting may not set them: changing one by
// hand would break elastic power saving (programs, timeouts) or the cluster's identity.
// Slurm treats keys case-insensitively, and so does every lookup here.

export const MANAGED_KEYS = [
  // elastic power saving
  'ResumeProgram',
  'SuspendProgram',
  'ResumeFailProgram',
  'SuspendTime',
  'ResumeTimeout',
  'SuspendTimeout',
  'ResumeRate',
  'SuspendRate',
  'SuspendExcNodes',
  'SuspendExcParts',
  'CommunicationParameters',
  'PrivateData',
  'SlurmctldParameters',
  'ReturnToService',
  'TreeWidth',
  // the node and partition section
  'NodeName',
  'NodeSet',
  'PartitionName',
  'GresTypes',
  // the cluster's identity and layout, written by the management playbook
  'ClusterName',
  'SlurmctldHost',
  'ControlMachine',
  'SlurmUser',
  'AuthType',
  'StateSaveLocation',
  'SlurmctldPort',
  'SlurmdPort',
  'Include',
] as const

const lower = new Set(MANAGED_KEYS.map((k) => k.toLowerCase()))

export const isManagedKey = (key: string): boolean => lower.has(key.toLowerCase())
