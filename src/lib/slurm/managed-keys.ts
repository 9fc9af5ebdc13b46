// slurm.conf keys that citc writes itself. A user-seeded setting may not set them: changing one by
// hand would break elastic power saving (programs, timeouts) or the cluster's identity.
// Slurm treats keys case-insensitively, and so does every lookup here.

/** Keys that live in the managed block (between STARTNODES and ENDNODES), rewritten by every finish. */
const BLOCK_KEYS = [
  // elastic power saving
  'ResumeProgram',
  'SuspendProgram',
  'ResumeFailProgram',
  'SuspendTime',
  'ResumeTimeout',
  'SuspendTimeout',
  'ResumeRate',
  'SuspendRate',
  'CommunicationParameters',
  'PrivateData',
  'SlurmctldParameters',
  'ReturnToService',
  'TreeWidth',
  // a batch job starts as soon as its nodes are up (a site's own is chained: see render.ts)
  'PrologSlurmctld',
  // the node and partition section
  'GresTypes',
  'NodeName',
  'PartitionName',
  // with joined machines only (CONDITIONAL_BLOCK_KEYS)
  'SuspendExcNodes',
  'SrunPortRange',
] as const

/** Block keys written only with joined machines; without them a line of the admin's stays theirs. */
const CONDITIONAL_BLOCK_KEYS = ['SuspendExcNodes', 'SrunPortRange'] as const

const MANAGED_KEYS = [
  ...BLOCK_KEYS,
  'SuspendExcParts',
  'NodeSet',
  // the cluster's identity and layout, written by the management playbook and the base of slurm.conf
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

const lower = (keys: readonly string[]) => new Set(keys.map((k) => k.toLowerCase()))
const managed = lower(MANAGED_KEYS)
const block = lower(BLOCK_KEYS)
const conditional = lower(CONDITIONAL_BLOCK_KEYS)

export const isManagedKey = (key: string): boolean => managed.has(key.toLowerCase())
export const isBlockKey = (key: string): boolean => block.has(key.toLowerCase())
export const isConditionalBlockKey = (key: string): boolean => conditional.has(key.toLowerCase())
