# The local provider's image: a Debian root filesystem (mmdebstrap) configured by compute.yml through
# a chroot connection, for nodes that run as slurmd processes in their own namespaces on this machine.
# Those two steps make the image's base, cached in <base_dir> (local/base.sh): a build whose base
# exists copies it and runs only the customisation script.
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

variable "base_dir" {
  type        = string
  default     = ""
  description = "local: the image's base (<images>/<cluster>/.bases/<key>), made first when it does not exist."
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
    inline = ["${path.root}/local/base.sh '${var.base_dir}' '${var.output_dir}/rootfs' '${var.suite}' '${var.slurm_version}' '${var.playbooks_dir}' '${var.playbook_vars_file}' '${var.script}'"]
  }

  provisioner "shell-local" {
    inline = ["${path.root}/local/script.sh '${var.output_dir}/rootfs' '${var.script}'"]
  }

  post-processor "manifest" {
    output      = var.manifest
    custom_data = local.manifest_data
  }
}
