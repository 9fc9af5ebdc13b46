// The explicit command map: every command citc registers. Only commands that work are listed.
import Accounts from './commands/accounts/index.js'
import AccountsApply from './commands/accounts/apply.js'
import AddUser from './commands/add-user.js'
import ClusterAdd from './commands/cluster/add.js'
import ClusterList from './commands/cluster/list.js'
import ClusterRemove from './commands/cluster/remove.js'
import Create from './commands/create.js'
import Destroy from './commands/destroy.js'
import Doctor from './commands/doctor.js'
import Finish from './commands/finish.js'
import MetricsCollect from './commands/metrics/collect.js'
import Monitor from './commands/monitor.js'
import NodeAdd from './commands/node/add.js'
import NodeFail from './commands/node/fail.js'
import NodeRemove from './commands/node/remove.js'
import NodeResume from './commands/node/resume.js'
import NodeSuspend from './commands/node/suspend.js'
import NodeSync from './commands/node/sync.js'
import Nodes from './commands/nodes.js'
import RebuildImage from './commands/rebuild-image.js'
import RemoveUser from './commands/remove-user.js'
import Ssh from './commands/ssh.js'
import Status from './commands/status.js'
import Usage from './commands/usage.js'
import Users from './commands/users.js'

export const commands = {
  accounts: Accounts,
  'accounts:apply': AccountsApply,
  'add-user': AddUser,
  'cluster:add': ClusterAdd,
  'cluster:list': ClusterList,
  'cluster:remove': ClusterRemove,
  create: Create,
  destroy: Destroy,
  doctor: Doctor,
  finish: Finish,
  'metrics:collect': MetricsCollect,
  monitor: Monitor,
  'node:add': NodeAdd,
  'node:fail': NodeFail,
  'node:remove': NodeRemove,
  'node:resume': NodeResume,
  'node:suspend': NodeSuspend,
  'node:sync': NodeSync,
  nodes: Nodes,
  'rebuild-image': RebuildImage,
  'remove-user': RemoveUser,
  ssh: Ssh,
  status: Status,
  usage: Usage,
  users: Users,
}
