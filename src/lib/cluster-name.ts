// A cluster's name, on its own (no zod): the provider modules (below cluster/) check it without loading
// cluster.yaml's schema.

/** A cluster's name, also its id in node names: a letter, then up to 30 of [a-z0-9-] (CitC: "cheerful-macaw"). */
export const CLUSTER_NAME = /^[a-z][a-z0-9-]{0,30}$/
