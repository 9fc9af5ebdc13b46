// `citc accounts`: read slurmdbd's accounts, slurmctld's count of what each has used, and the jobs now;
// print the tree (report.ts) or its JSON document. Reads only: no lock.
import {join} from 'node:path'

import {readManagementContract} from '../../cluster/management-contract.js'
import {clusterRegistry} from '../../cluster/registry.js'
import type {Io} from '../../io.js'
import {connectCluster} from '../../cluster/management-node.js'
import {withLog} from '../../transport/logged.js'
import {accountsDocument, accountsTree, type AccountsDocument} from '../../accounts/report.js'
import {AccountsStore} from '../../accounts/slurmdbd.js'
import {logStamp} from '../workflow.js'

export async function runShowAccounts(io: Io, input: {cluster?: string}, dataDir: string, now: () => Date = () => new Date()): Promise<AccountsDocument> {
  const registry = clusterRegistry(dataDir)
  const name = registry.resolveName(input.cluster)
  const record = registry.get(name)
  const logFile = join(registry.paths(name).logsDir, `accounts-${logStamp()}.log`)
  const transport = withLog(await connectCluster(record), logFile)
  try {
    const contract = await readManagementContract(transport)
    const store = await AccountsStore.open(transport, contract.confPath)
    // slurmdbd holds the tree; slurmctld the use and the jobs: without it, the tree is still shown.
    const fromController = async <T>(what: string, read: () => Promise<T[]>): Promise<T[]> =>
      read().catch((error: Error) => {
        io.note(`note: ${what} not shown: ${error.message.split('\n')[0]}`)
        return []
      })
    const [state, usage, jobs] = await Promise.all([store.state(), fromController('limit use', () => store.usage()), fromController('jobs', () => store.jobs())])
    const doc = accountsDocument(state, usage, jobs, {cluster: name, now: now()})
    io.log(accountsTree(doc))
    const gaps = store.enforcementGaps()
    if (gaps.length > 0) io.note(`warning: ${contract.confPath} lacks ${gaps.join('; ')}: accounts' limits are not enforced`)
    return doc
  } finally {
    await transport.close()
  }
}
