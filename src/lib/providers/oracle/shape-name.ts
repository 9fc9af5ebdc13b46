// Oracle's flex shapes as citc writes them (the OCPUs and memory appended to the shape's name), apart
// from index.ts: the node driver (oci-api.ts) needs this and nothing else of the module, and
// importing index.ts would pull its lazily imported parts (sweeper, image builder) into the driver's bundle.

/** "VM.Standard.E4.Flex.2.32" → {shape: "VM.Standard.E4.Flex", ocpus: 2, memoryGb: 32}; fixed shapes as they are. */
export function splitOracleShape(name: string): {shape: string; ocpus?: number; memoryGb?: number} {
  const m = /^(.*\.Flex)\.(\d+)\.(\d+)$/.exec(name)
  if (!m) return {shape: name}
  return {shape: m[1], ocpus: Number(m[2]), memoryGb: Number(m[3])}
}
