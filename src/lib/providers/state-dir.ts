// The node programs' own state on a management node (role common makes it: owner the Slurm user, 0700):
// what they keep between runs — Oracle's session token (oracle/session-cache.ts), cluster.json as checked
// (tasks/node/checked-once.ts). A stand-in's driver.stateDir stands in for it (src/lib/stand-in.ts).
export const NODE_PROGRAMS_STATE_DIR = '/var/lib/citc/node-programs'
