# Variables every build of citc's compute-node image takes. citc writes them to a var file
# (<work dir>/<image>.pkrvars.json on the management node) and runs, there:
#   packer build -color=false -timestamp-ui -only=<provider's source> -var-file=<that file> <this dir>
# Packer 1.6.6 (Debian 12's) must accept every file here: no required_plugins, no error-cleanup-provisioner.
packer {
  required_version = ">= 1.6.6"
}

variable "cluster" {
  type        = string
  description = "The cluster's name (cluster=<id> tag)."
}

variable "version" {
  type        = string
  description = "UTC YYYYMMDDhhmmss, chosen by citc: the image is citc-slurm-compute-<cluster>-v<version>."
}

variable "image_name" {
  type = string
}

variable "arch" {
  type    = string
  default = "x86_64"
}

variable "playbooks_dir" {
  type        = string
  description = "citc's playbooks on the management node (compute.yml)."
}

variable "playbook_vars_file" {
  type        = string
  description = "compute.yml's variables (JSON), the same tree management.yml takes."
}

variable "script" {
  type        = string
  default     = ""
  description = "The cluster's customisation script (CitC's compute_image_extra.sh), run last as root; empty: none."
}

variable "manifest" {
  type        = string
  description = "Where the manifest post-processor writes (citc reads nothing from it it did not choose)."
}

locals {
  # What every build's manifest post-processor records (citc chose each value; it reads none back).
  manifest_data = {
    image   = var.image_name
    version = var.version
    cluster = var.cluster
    arch    = var.arch
  }
}
