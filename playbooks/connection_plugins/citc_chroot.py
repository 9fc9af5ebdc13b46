# citc's chroot connection: run a play inside a root filesystem on this machine (a local compute
# image being built). Debian's ansible-core has no chroot connection (community.general's comes only
# with the full `ansible` package, ~500 MB), so citc ships this one next to its playbooks.
#
#   ansible-playbook -i /path/to/rootfs, -c citc_chroot compute.yml
#
# Files are written and read by `cat` *inside* the chroot, so a symbolic link in the image can never
# redirect a write (or a read) to this machine's own files.
from __future__ import annotations

DOCUMENTATION = """
name: citc_chroot
short_description: Run tasks in a directory with chroot (citc's local image builds)
description:
  - The inventory host is the root filesystem's absolute path; commands run as root through chroot.
author: citc
options: {}
"""

import os
import shlex
import subprocess

from ansible.errors import AnsibleError
from ansible.module_utils.common.text.converters import to_bytes
from ansible.plugins.connection import ConnectionBase

CHROOT = "/usr/sbin/chroot"


class Connection(ConnectionBase):
    transport = "citc_chroot"
    has_pipelining = False
    default_user = "root"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.root = self._play_context.remote_addr
        if not self.root or not os.path.isabs(self.root):
            raise AnsibleError(f"citc_chroot: the host must be a root filesystem's absolute path, not {self.root!r}")
        if not os.path.isfile(os.path.join(self.root, "bin", "sh")) and not os.path.islink(os.path.join(self.root, "bin", "sh")):
            raise AnsibleError(f"citc_chroot: {self.root} has no /bin/sh: not a root filesystem")

    def _connect(self):
        self._connected = True
        return self

    def _run(self, cmd, stdin=None):
        argv = [CHROOT, self.root, "/bin/sh", "-c", cmd]
        proc = subprocess.Popen(argv, stdin=stdin if stdin is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/")
        out, err = proc.communicate()
        return proc.returncode, out, err

    def exec_command(self, cmd, in_data=None, sudoable=False):
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        if in_data is not None:
            raise AnsibleError("citc_chroot does not pipeline")
        return self._run(cmd)

    def put_file(self, in_path, out_path):
        super().put_file(in_path, out_path)
        with open(to_bytes(in_path, errors="surrogate_or_strict"), "rb") as src:
            rc, _, err = self._run(f"cat > {shlex.quote(out_path)}", stdin=src)
        if rc != 0:
            raise AnsibleError(f"citc_chroot: could not write {out_path}: {err.decode(errors='replace').strip()}")

    def fetch_file(self, in_path, out_path):
        super().fetch_file(in_path, out_path)
        rc, out, err = self._run(f"cat {shlex.quote(in_path)}")
        if rc != 0:
            raise AnsibleError(f"citc_chroot: could not read {in_path}: {err.decode(errors='replace').strip()}")
        with open(to_bytes(out_path, errors="surrogate_or_strict"), "wb") as dst:
            dst.write(out)

    def close(self):
        self._connected = False
