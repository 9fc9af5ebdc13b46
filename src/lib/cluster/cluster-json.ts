// Where the management node's contract is (management-contract.ts describes it): apart from its schema,
// so the node programs name the file without loading zod (tasks/node/node-programs.ts).
export const CLUSTER_JSON = '/etc/citc/cluster.json'
