#!/bin/bash
# Packer step 1 of a local image: its root filesystem, a copy of its base — the Debian root filesystem
# (rootfs.sh) with compute.yml run in it (playbook.sh), everything before the customisation script.
# citc keys the base by what goes into it (src/lib/images/inputs.ts baseInputsDigest), so a build that
# changes only the script copies it (a few seconds) instead of making it again (half a minute).
# A base is made in BASE.partial and renamed once whole: an interrupted build never leaves a base that
# a later build would copy (citc removes the .partial).
#   base.sh BASE ROOTFS SUITE SLURM_VERSION PLAYBOOKS_DIR VARS_JSON SCRIPT   (SCRIPT empty: none)
set -euo pipefail
base=$1 rootfs=$2 suite=$3 version=$4 playbooks=$5 vars=$6 script=${7:-}
here=$(dirname "$0")
[ -n "$base" ] && [ -n "$rootfs" ] || { echo "base.sh: no base or output directory" >&2; exit 2; }

if [ -d "$base" ]; then
  echo "citc-step: the base root filesystem (reused: $base)"
else
  partial="$base.partial"
  rm -rf --one-file-system "$partial"
  "$here/rootfs.sh" "$partial/rootfs" "$suite" "$version"
  "$here/playbook.sh" "$partial/rootfs" "$playbooks" "$vars"
  echo "citc-step: keep the base for later builds"
  printf '{"builtAt": "%s", "suite": "%s", "slurmVersion": "%s"}\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$suite" "$version" >"$partial/base.json"
  # rootfs.sh let dpkg skip its fsyncs: the whole file system is synced once (syncfs) before the base
  # becomes one that later builds copy, so a power cut never leaves a base with empty files.
  sync --file-system "$partial/base.json"
  mv -T "$partial" "$base"
  echo "citc-step: the base root filesystem (built: $base)"
fi

mkdir -p "$(dirname "$rootfs")"
if [ -z "$script" ]; then
  # Nothing writes into the image after this step but image.json below, written to a new file and
  # renamed (a new inode), and nodes only read it (an overlay's lower layer): the image can share the
  # base's files (hard links, under a second) instead of copying them.
  echo "citc-step: the image's root filesystem (the base's files, linked)"
  cp -al "$base/rootfs" "$rootfs"
else
  # The customisation script may change a file in place (>>, chmod): it gets files of its own.
  echo "citc-step: the image's root filesystem (a copy of the base)"
  cp -a --reflink=auto "$base/rootfs" "$rootfs"
fi

# The image's own name and version in /etc/citc/image.json (the compute_image role wrote the base's
# build's), in the role's format (to_nice_json), so an image is the same whichever build made its base.
python3 - "$rootfs/etc/citc/image.json" "$vars" <<'PY'
import json, sys
path, vars_file = sys.argv[1], sys.argv[2]
with open(vars_file) as f:
    image = json.load(f)["citc_image"]
with open(path) as f:
    record = json.load(f)
record.update(image)
with open(path + ".tmp", "w") as f:
    f.write(json.dumps(record, indent=4, sort_keys=True, separators=(",", ": ")) + "\n")
PY
# A new file renamed over the old one: with linked files, writing into it would change the base's.
mv "$rootfs/etc/citc/image.json.tmp" "$rootfs/etc/citc/image.json"
echo "the image is $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["name"])' "$rootfs/etc/citc/image.json")"
