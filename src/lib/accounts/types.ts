// The accounting model shared by accounts.yaml (what the user wants) and sacctmgr (what slurmdbd has):
// one shape for both sides, so that planning is a plain comparison.
//
// Values are kept as Slurm reads them back (checked against slurmdbd 22.05): memory in MB, MaxWall in
// whole minutes, QOS names sorted. A limit that is not set is absent (never 0, never -1).

/** TRES name → amount, e.g. {cpu: 6000, mem: 100000, "gres/gpu": 60}. Memory (mem) in MB. */
export type TresAmounts = Readonly<Record<string, number>>

export interface AccountLimits {
  /** Minutes of each TRES the account (with its children) may use in total: Slurm's GrpTRESMins. */
  grpTRESMins?: TresAmounts
  /** TRES the account's running jobs may hold at once: GrpTRES. */
  grpTRES?: TresAmounts
  maxJobs?: number
  maxSubmitJobs?: number
  /** Whole minutes (Slurm stores MaxWall in minutes). */
  maxWall?: number
  /** Slurm's Fairshare: a share, or "parent" (the account competes as part of its parent). 1 is Slurm's default. */
  fairshare?: number | 'parent'
  /** The account's own QOS list (sorted); absent: inherited from the parent. */
  qos?: readonly string[]
}

/** One account as accounts.yaml declares it. */
export interface AccountSpec {
  name: string
  /** "root" or another declared account. */
  parent: string
  /** Absent: not managed (Slurm's default is the account name). */
  description?: string
  /** Absent: not managed (Slurm's default is the parent's name, or the account's own under root). */
  organisation?: string
  limits: AccountLimits
  /** Login names, in the order written, without duplicates. */
  users: readonly string[]
  /** "accounts.yaml:3:3", for later messages. */
  where: string
}

/** accounts.yaml after validation. */
export interface AccountsFile {
  /** Parents before children; otherwise in the order written. */
  accounts: readonly AccountSpec[]
  /** Default accounts the file sets explicitly (users.<name>.defaultAccount). */
  defaultAccounts: Readonly<Record<string, string>>
}

/** One account as slurmdbd has it (its own limits, without what it inherits). */
export interface AccountState {
  name: string
  /** Empty for root. */
  parent: string
  description: string
  organisation: string
  limits: AccountLimits
  /** Users with an association in this account (any partition), sorted. */
  users: readonly string[]
}

/** What `sacctmgr show assoc/account/user` report, typed. */
export interface AccountingState {
  /** Every account, root included, sorted by name. */
  accounts: readonly AccountState[]
  /** Each user's default account in this cluster ("" when Slurm has none, e.g. after its association was deleted). */
  defaultAccounts: Readonly<Record<string, string>>
  /**
   * Description and organisation of every account record slurmdbd lists, with or without an
   * association in this cluster: records are shared by all clusters of a slurmdbd and outlive a
   * `delete account`, and `add account` keeps an existing record's text (checked on 22.05).
   */
  accountTexts: Readonly<Record<string, {description: string; organisation: string}>>
}

/** The account every Slurm cluster has; never created, changed or removed by citc. */
export const ROOT_ACCOUNT = 'root'
