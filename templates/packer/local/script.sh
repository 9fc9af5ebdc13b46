#!/bin/sh
# Packer step 2 of a local image: the cluster's customisation script (`citc rebuild-image --script`),
# last, as root inside the image. It runs in its own mount and PID namespaces with /proc, /dev and this
# machine's DNS, so apt works in it and nothing it starts outlives it; services are not started
# (policy-rc.d). Its output goes to the build log; its failure fails the build.
#   script.sh ROOTFS SCRIPT   (SCRIPT empty: nothing to do)
set -eu
rootfs=$1 script=$2
echo "citc-step: the customisation script"
if [ -z "$script" ]; then
  echo "no customisation script"
  exit 0
fi
inside=/tmp/citc-compute-image-extra
install -m 0700 "$script" "$rootfs$inside"
printf '#!/bin/sh\nexit 101\n' > "$rootfs/usr/sbin/policy-rc.d"
chmod 0755 "$rootfs/usr/sbin/policy-rc.d"
status=0
unshare --mount --pid --fork --kill-child --propagation private -- /bin/sh -eu -c '
  r=$1
  mount -t proc proc "$r/proc"
  mount --rbind /dev "$r/dev"
  [ -e "$r/etc/resolv.conf" ] || : > "$r/etc/resolv.conf"
  mount --bind /etc/resolv.conf "$r/etc/resolv.conf"
  exec chroot "$r" "$2"
' citc-image-script "$rootfs" "$inside" || status=$?
rm -f "$rootfs$inside" "$rootfs/usr/sbin/policy-rc.d"
# What apt downloaded for the script (lists alone are ~150 MB) is not part of a node.
rm -rf "$rootfs/var/cache/apt/archives/"*.deb "$rootfs/var/lib/apt/lists/"*_* 2>/dev/null || true
if [ "$status" -ne 0 ]; then
  echo "the customisation script failed (exit $status)" >&2
  exit "$status"
fi
echo "the customisation script succeeded"
