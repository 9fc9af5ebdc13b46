#!/bin/bash
# Step 1 of a local image's base (base.sh runs it): a minimal Debian root filesystem (mmdebstrap) with Slurm's node
# packages at exactly the controller's version, from this machine's own apt sources (its mirror or
# proxy). Everything compute.yml installs is included here too, so its apt tasks find them present.
#   rootfs.sh ROOTFS SUITE SLURM_VERSION
set -euo pipefail

# Packer hands its children descriptors 3-5 (and whatever its caller leaked). mmdebstrap's pipe to apt
# then gets a two-digit number, which dash cannot parse (`cat >&11`: "Bad fd number"): close them all.
for fd in /proc/self/fd/*; do
  n=${fd##*/}
  if [ "$n" -gt 2 ] && [ "$n" != 255 ]; then eval "exec $n>&-" 2>/dev/null || true; fi
done

rootfs=$1 suite=$2 version=$3
echo "citc-step: the Debian root filesystem (mmdebstrap)"
[ -n "$rootfs" ] || { echo "rootfs.sh: no output directory" >&2; exit 2; }
pin() { if [ -n "$version" ]; then echo "$1=$version"; else echo "$1"; fi; }

sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
  if [ -f "$f" ] && grep -qw -- "$suite" "$f"; then sources+=("$f"); fi
done
[ ${#sources[@]} -gt 0 ] || sources=(http://deb.debian.org/debian)

mkdir -p "$(dirname "$rootfs")"
echo "mmdebstrap $suite → $rootfs (slurmd ${version:-any version}; sources: ${sources[*]})"
# dpkg and its maintainer scripts without their fsyncs (eatmydata, through mmdebstrap's own hook, which
# removes it at the end; not --dpkgopt=force-unsafe-io, which mmdebstrap would leave in the image's
# /etc/dpkg/dpkg.cfg.d): the root filesystem is built in a .partial directory that nothing uses until
# base.sh has synced it once, whole, and renamed it. A crash before that leaves only a .partial, which
# the next build removes. Saves a few seconds of the fresh build (bench/image-base.ts).
eatmydata=()
[ -d /usr/share/mmdebstrap/hooks/eatmydata ] && eatmydata=(--hook-dir=/usr/share/mmdebstrap/hooks/eatmydata)
exec mmdebstrap --mode=root --variant=minbase --format=directory \
  --include="python3,python3-apt,$(pin slurmd),$(pin slurm-client),munge,libnss-ldapd,libpmi2-0" \
  --aptopt='Acquire::Retries "3"' "${eatmydata[@]}" \
  "$suite" "$rootfs" "${sources[@]}"
