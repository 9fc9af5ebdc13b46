#!/bin/sh
# citc compute node boot: become Slurm node demo-c5-xlarge-0001 and start slurmd (written by citc node resume).
# citc-node: demo-c5-xlarge-0001
set -u
NODE=demo-c5-xlarge-0001
SHARED=/mnt/shared
log() { echo "citc-boot: $*" | tee -a /var/log/citc-boot.log >/dev/console 2>&1 || true; }
log "node $NODE, controller at 10.0.1.2"
hostnamectl set-hostname "$NODE" 2>/dev/null || hostname "$NODE"
mkdir -p /etc/citc && echo "$NODE" > /etc/citc/node-name
# slurm.conf is on the shared filesystem: wait for it (10 min at most, then slurmd says why it fails).
i=0
while [ ! -r "$SHARED/etc/slurm/slurm.conf" ] && [ $i -lt 120 ]; do
  mount "$SHARED" 2>/dev/null || true
  i=$((i + 1)); sleep 5
done
[ -r "$SHARED/etc/slurm/slurm.conf" ] || log "WARNING: $SHARED/etc/slurm/slurm.conf not readable after 10 min"
echo "SLURMD_OPTIONS=\"-N $NODE\"" > /etc/default/slurmd
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
