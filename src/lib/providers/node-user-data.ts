// The boot script a cloud compute node gets as user-data (cloud-init runs a user-data that starts with
// #! once, as root, at first boot). The image (playbooks/compute.yml) holds everything else: slurmd,
// munge and its key, nslcd, the shared filesystem's fstab entry, slurm.conf as a link into it. What only
// the launch knows is which Slurm node this machine is: the script names it, waits for the shared
// filesystem (slurm.conf lives there) and starts slurmd as that node — no tag lookup at boot, so the
// node's identity needs no describe permission. Nothing secret: user-data is readable by every process
// on the node through the metadata service.
//
// Pure; the fake clouds in tests read the node name back with nodeFromUserData().

/** Slurm node names citc makes: <cluster>-<shape>-<n>, lower-case letters, digits, '-' and '.'. */
const NODE_NAME = /^[a-z0-9][a-z0-9.-]{0,62}$/

export interface UserDataOptions {
  node: string
  /** Where the shared filesystem is mounted (cluster.json sharedDir). */
  sharedDir: string
  /** The management node's private address (logged only: slurm.conf names the controller). */
  mgmtPrivateIp: string
}

const MARK = '# citc-node: '

export function nodeUserData({node, sharedDir, mgmtPrivateIp}: UserDataOptions): string {
  if (!NODE_NAME.test(node)) throw new Error(`not a node name citc makes: ${JSON.stringify(node)}`)
  if (!/^\/[A-Za-z0-9._/-]*$/.test(sharedDir)) throw new Error(`not a plain absolute path: ${JSON.stringify(sharedDir)}`)
  if (!/^[0-9A-Fa-f.:]+$/.test(mgmtPrivateIp)) throw new Error(`not an IP address: ${JSON.stringify(mgmtPrivateIp)}`)
  return `#!/bin/sh
# citc compute node boot: become Slurm node ${node} and start slurmd (written by citc node resume).
${MARK}${node}
set -u
NODE=${node}
SHARED=${sharedDir}
log() { echo "citc-boot: $*" | tee -a /var/log/citc-boot.log >/dev/console 2>&1 || true; }
log "node $NODE, controller at ${mgmtPrivateIp}"
hostnamectl set-hostname "$NODE" 2>/dev/null || hostname "$NODE"
mkdir -p /etc/citc && echo "$NODE" > /etc/citc/node-name
# slurm.conf is on the shared filesystem: wait for it (10 min at most, then slurmd says why it fails).
i=0
while [ ! -r "$SHARED/etc/slurm/slurm.conf" ] && [ $i -lt 120 ]; do
  mount "$SHARED" 2>/dev/null || true
  i=$((i + 1)); sleep 5
done
[ -r "$SHARED/etc/slurm/slurm.conf" ] || log "WARNING: $SHARED/etc/slurm/slurm.conf not readable after 10 min"
echo "SLURMD_OPTIONS=\\"-N $NODE\\"" > /etc/default/slurmd
systemctl restart munge
systemctl restart nslcd 2>/dev/null || true
systemctl enable slurmd
systemctl restart slurmd
# slurmd gives up within a second when it cannot be this node (no NodeName line for it, no slurm.conf:
# systemd then skips it): say so, and fail the script (cloud-init status shows it), instead of "started".
sleep 3
if systemctl is-active --quiet slurmd; then
  log "slurmd started as $NODE"
else
  log "ERROR: slurmd is not running as $NODE: see systemctl status slurmd and /var/log/slurm/slurmd-$NODE.log"
  exit 1
fi
`
}

/** The node a citc user-data names, or undefined (for the test clouds that boot it as a local node). */
export function nodeFromUserData(userData: string): string | undefined {
  const line = userData.split('\n').find((l) => l.startsWith(MARK))
  const name = line?.slice(MARK.length).trim()
  return name && NODE_NAME.test(name) ? name : undefined
}
