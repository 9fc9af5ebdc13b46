// The explicit command map: every command citc registers. Only commands that work are listed.
import ClusterAdd from './commands/cluster/add.js'
import ClusterList from './commands/cluster/list.js'
import ClusterRemove from './commands/cluster/remove.js'
import Finish from './commands/finish.js'

export const commands = {
  'cluster:add': ClusterAdd,
  'cluster:list': ClusterList,
  'cluster:remove': ClusterRemove,
  finish: Finish,
}
