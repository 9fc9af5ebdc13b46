# The local provider's image: a Debian root filesystem (mmdebstrap) configured by compute.yml through
# a chroot connection, for nodes that run as slurmd processes in their own namespaces on this machine.
# citc moves <output_dir> into place once the build succeeded, and removes it when it failed.

variable "output_dir" {
  type        = string
  default     = ""
  description = "local: the image being built (<images>/<cluster>/<image>.partial); its rootfs/ is the node's /."
}

variable "slurm_version" {
  type        = string
  default     = ""
  description = "local: the controller's Slurm package version (dpkg's), so slurmd in the image is exactly it."
}

variable "suite" {
  type    = string
  default = "bookworm"
}

source "null" "local" {
  communicator = "none"
}

build {
  name    = "local"
  sources = ["source.null.local"]

  provisioner "shell-local" {
    inline = ["${path.root}/local/rootfs.sh '${var.output_dir}/rootfs' '${var.suite}' '${var.slurm_version}'"]
  }

  provisioner "shell-local" {
    inline = ["${path.root}/local/playbook.sh '${var.output_dir}/rootfs' '${var.playbooks_dir}' '${var.playbook_vars_file}'"]
  }

  provisioner "shell-local" {
    inline = ["${path.root}/local/script.sh '${var.output_dir}/rootfs' '${var.script}'"]
  }

  post-processor "manifest" {
    output      = var.manifest
    custom_data = local.manifest_data
  }
}
