#!/bin/sh
# Step 2 of a local image's base (base.sh runs it): compute.yml inside the root filesystem, through citc's chroot
# connection (playbooks/connection_plugins/citc_chroot.py: ansible-core alone has none).
#   playbook.sh ROOTFS PLAYBOOKS_DIR VARS_JSON
set -eu
rootfs=$1 playbooks=$2 vars=$3
echo "citc-step: compute.yml"
export ANSIBLE_CONFIG="$playbooks/ansible.cfg"
exec ansible-playbook -i "$rootfs," -c citc_chroot -e "@$vars" -e citc_image_build=true "$playbooks/compute.yml"
