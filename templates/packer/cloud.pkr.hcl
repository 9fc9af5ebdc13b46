# The clouds' compute-node images: one build "cloud" with one source per cloud, run by citc on the
# management node (as CitC did: it holds the munge key, the playbooks and a route into the cluster's
# private network):
#   packer build -only=cloud.amazon-ebs.aws|cloud.googlecompute.google|cloud.oracle-oci.oracle -var-file=… <this dir>
# The temporary build machine boots the management node's own OS image (so the distribution's Slurm is
# the controller's version), in the cluster's subnet, reached on its private address; the finished
# image carries cluster=<id>, citc-image-version=<version> and its architecture, which is how citc's
# list, the node drivers and `citc destroy`'s sweep find it.
#
# Every variable here has a default, so the local build of the same directory (-only=local.null.local)
# never needs them; citc's builders (src/lib/providers/<cloud>/image-builder.ts) give them all.
# Packer 1.6.6 (Debian 12's) must accept this file: no required_plugins, no error-cleanup-provisioner,
# and no shape_config (so no Oracle flexible shapes: see oracle_shape).

# ---- on the management node ---------------------------------------------------------------------

variable "munge_key_file" {
  type        = string
  default     = "/etc/munge/munge.key"
  description = "clouds: the cluster's munge key on the management node, baked into the image."
}

variable "host_keys_dir" {
  type        = string
  default     = "/etc/citc/compute-host-keys"
  description = "clouds: the compute nodes' SSH host keys (ssh_host_*_key and .pub), the same in every image."
}

variable "ssh_username" {
  type        = string
  default     = "ubuntu"
  description = "clouds: the base image's login user (ubuntu, or admin on Debian's AMIs)."
}

# ---- aws ------------------------------------------------------------------------------------------

variable "aws_region" {
  type    = string
  default = ""
}

variable "aws_subnet_id" {
  type    = string
  default = ""
}

variable "aws_security_group_id" {
  type        = string
  default     = ""
  description = "The cluster's security group (traffic from the management node lets Packer's SSH in)."
}

variable "aws_instance_type" {
  type    = string
  default = "t3a.medium"
}

variable "aws_source_ami_owner" {
  type    = string
  default = ""
}

# The base AMI: the management node's own (aws_source_ami_id) when the architectures match, else the
# newest of the same owner and name pattern for var.arch. DescribeImages filters take "*" for "any".
variable "aws_source_ami_id" {
  type    = string
  default = "*"
}

variable "aws_source_ami_name" {
  type    = string
  default = "*"
}

variable "aws_volume_size" {
  type    = number
  default = 20
}

# ---- google ---------------------------------------------------------------------------------------

variable "google_project" {
  type    = string
  default = ""
}

variable "google_zone" {
  type    = string
  default = ""
}

variable "google_subnetwork" {
  type    = string
  default = ""
}

variable "google_network_tag" {
  type        = string
  default     = ""
  description = "The compute nodes' network tag (the cluster's firewall rules)."
}

variable "google_machine_type" {
  type    = string
  default = "e2-standard-2"
}

variable "google_source_image" {
  type        = string
  default     = ""
  description = "The management node's image by name (same architecture); empty: google_source_image_family."
}

variable "google_source_image_family" {
  type    = string
  default = ""
}

variable "google_source_image_project" {
  type    = string
  default = ""
}

variable "google_image_family" {
  type        = string
  default     = ""
  description = "citc-slurm-compute-<cluster>-<arch>: one family per cluster and architecture."
}

variable "google_disk_size" {
  type    = number
  default = 20
}

# ---- oracle ---------------------------------------------------------------------------------------

variable "oracle_compartment_ocid" {
  type    = string
  default = ""
}

variable "oracle_availability_domain" {
  type    = string
  default = ""
}

variable "oracle_subnet_ocid" {
  type    = string
  default = ""
}

variable "oracle_base_image_ocid" {
  type    = string
  default = ""
}

variable "oracle_shape" {
  type        = string
  default     = "VM.Standard2.1"
  description = "A fixed shape: Packer 1.6.6 has no shape_config, so flexible shapes cannot be launched by it."
}

variable "oracle_region" {
  type        = string
  default     = ""
  description = "Only with an API key (oracle_key_file); the management node's instance principal knows its region."
}

variable "oracle_tenancy_ocid" {
  type    = string
  default = ""
}

variable "oracle_user_ocid" {
  type    = string
  default = ""
}

variable "oracle_fingerprint" {
  type    = string
  default = ""
}

variable "oracle_key_file" {
  type        = string
  default     = ""
  description = "An API signing key (PKCS#1 PEM: Packer 1.6.6 refuses PKCS#8); empty: the management node's instance principal."
}

# ---- the image ------------------------------------------------------------------------------------

locals {
  # Tags on the image (and its snapshots), the build machine and its disks: the cluster's tag is what
  # every lister and destroy's sweep filter on. Google labels take no ":" or upper case, hence the
  # plain key names on every cloud.
  image_tags = {
    cluster              = var.cluster
    "citc-image-version" = var.version
    "citc-image-arch"    = var.arch
    Name                 = var.image_name
  }
  google_labels = {
    cluster              = var.cluster
    "citc-image-version" = var.version
    "citc-image-arch"    = replace(var.arch, "_", "-")
  }
  staging = "/tmp/citc-image"
}

source "amazon-ebs" "aws" {
  region        = var.aws_region
  instance_type = var.aws_instance_type
  ami_name      = var.image_name
  source_ami_filter {
    owners = [var.aws_source_ami_owner]
    filters = {
      "image-id"            = var.aws_source_ami_id
      name                  = var.aws_source_ami_name
      architecture          = var.arch
      "virtualization-type" = "hvm"
    }
    most_recent = true
  }
  subnet_id                   = var.aws_subnet_id
  security_group_id           = var.aws_security_group_id
  associate_public_ip_address = false
  ssh_interface               = "private_ip"
  ssh_username                = var.ssh_username
  launch_block_device_mappings {
    device_name           = "/dev/sda1"
    volume_size           = var.aws_volume_size
    volume_type           = "gp3"
    iops                  = 3000
    throughput            = 125
    delete_on_termination = true
  }
  tags            = local.image_tags
  snapshot_tags   = local.image_tags
  run_tags        = merge(local.image_tags, { type = "image-build", Name = "${var.image_name}-build" })
  run_volume_tags = local.image_tags
}

source "googlecompute" "google" {
  project_id              = var.google_project
  zone                    = var.google_zone
  subnetwork              = var.google_subnetwork
  tags                    = [var.google_network_tag]
  machine_type            = var.google_machine_type
  source_image            = var.google_source_image
  source_image_family     = var.google_source_image_family
  source_image_project_id = [var.google_source_image_project]
  disk_size               = var.google_disk_size
  image_name              = var.image_name
  image_family            = var.google_image_family
  image_labels            = local.google_labels
  labels                  = local.google_labels
  image_description       = "citc compute node image ${var.version} of cluster ${var.cluster} (${var.arch})"
  # The management node's service account may create only instances and disks named <cluster>-…
  # (templates/terraform/google/iam.tf), and the build machine needs no identity of its own.
  instance_name                   = "${var.cluster}-image-${var.version}"
  disable_default_service_account = true
  use_internal_ip                 = true
  omit_external_ip                = true
  ssh_username                    = var.ssh_username
}

source "oracle-oci" "oracle" {
  compartment_ocid        = var.oracle_compartment_ocid
  availability_domain     = var.oracle_availability_domain
  subnet_ocid             = var.oracle_subnet_ocid
  base_image_ocid         = var.oracle_base_image_ocid
  shape                   = var.oracle_shape
  image_name              = var.image_name
  instance_name           = "${var.image_name}-build"
  use_private_ip          = true
  ssh_username            = var.ssh_username
  tags                    = local.image_tags
  instance_tags           = merge(local.image_tags, { type = "image-build" })
  use_instance_principals = var.oracle_key_file == ""
  region                  = var.oracle_region
  tenancy_ocid            = var.oracle_tenancy_ocid
  user_ocid               = var.oracle_user_ocid
  fingerprint             = var.oracle_fingerprint
  key_file                = var.oracle_key_file
}

build {
  name = "cloud"
  sources = [
    "source.amazon-ebs.aws",
    "source.googlecompute.google",
    "source.oracle-oci.oracle",
  ]

  # cloud-init of the build machine must finish first (it holds apt's lock); compute.yml then needs python3.
  provisioner "shell" {
    execute_command = "sudo -n sh -eu '{{.Path}}'"
    inline = [
      "if command -v cloud-init >/dev/null 2>&1; then cloud-init status --wait >/dev/null || true; fi",
      "command -v python3 >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3)",
      # The host keys' directory too: a file provisioner uploading a directory's contents ("dir/")
      # needs its destination to exist.
      "install -d -m 0700 -o ${var.ssh_username} ${local.staging} ${local.staging}/host-keys",
    ]
  }

  # Decision: the munge key is baked into the image, as CitC did. The image is private to the cluster's
  # account/project/compartment and tagged with it; delivering the key at boot through user-data or
  # instance metadata would expose it to every job on the node, since any process can read the
  # metadata service. compute.yml's munge_key role installs it from the staging dir (munge_key_src).
  provisioner "file" {
    source      = var.munge_key_file
    destination = "${local.staging}/munge.key"
  }

  # The same host keys on every compute node (as CitC): users' known_hosts survive nodes coming and
  # going and images being rebuilt. compute.yml's ssh_host_keys role installs them (compute_host_keys_dir).
  provisioner "file" {
    source      = "${var.host_keys_dir}/"
    destination = "${local.staging}/host-keys"
  }

  # The compute playbook, run from the management node over Packer's own SSH connection to the build
  # machine. use_proxy = false: Packer's SSH proxy offers ssh-rsa host keys, which OpenSSH >= 8.8
  # refuses (hashicorp/packer-plugin-ansible#69). The munge key and the host keys uploaded above are
  # installed by its roles (munge_key, ssh_host_keys: copies on the build machine), so a --check run
  # with the same variables reports nothing to change.
  #
  # ANSIBLE_HOST_KEY_CHECKING=False: the build machine is a fresh temporary VM reached on its private
  # address inside the cluster's network, whose host key nobody can know in advance (the cloud makes it
  # at first boot). Packer's own SSH communicator, which ran the steps above on the same machine, does
  # not pin it either, and Packer 1.6.6 has no setting that hands its communicator's key to Ansible: a
  # known_hosts check here would add nothing but a refusal of every build.
  provisioner "ansible" {
    playbook_file = "${var.playbooks_dir}/compute.yml"
    use_proxy     = false
    user          = var.ssh_username
    extra_arguments = [
      "--become",
      "-e", "@${var.playbook_vars_file}",
      "-e", "citc_image_build=true",
      "-e", "citc_image_name=${var.image_name}",
      "-e", "citc_image_version=${var.version}",
      "-e", "munge_key_src=${local.staging}/munge.key",
      "-e", "compute_host_keys_dir=${local.staging}/host-keys",
    ]
    ansible_env_vars = ["ANSIBLE_HOST_KEY_CHECKING=False", "ANSIBLE_CONFIG=${var.playbooks_dir}/ansible.cfg"]
  }

  # The image's record, printed for citc (src/lib/images/build.ts reads the `citc-image-json: {…}` line):
  # whether it carries the GPU driver, as compute.yml's compute_image role found it installed.
  provisioner "shell" {
    inline = ["printf 'citc-image-json: '; tr -d '\\n' < /etc/citc/image.json; echo"]
  }

  # The staged secrets go once the roles installed them: the image keeps only the installed copies.
  provisioner "shell" {
    execute_command = "sudo -n sh -eu '{{.Path}}'"
    inline          = ["rm -rf ${local.staging}"]
  }

  # The cluster's customisation (CitC's compute_image_extra.sh), last, as root; its failure fails the build.
  provisioner "shell" {
    execute_command = "sudo -n sh -c 'if [ -s \"$1\" ]; then exec sh -eu \"$1\"; fi' citc-script '{{.Path}}'"
    script          = var.script == "" ? "/dev/null" : var.script
  }

  post-processor "manifest" {
    output      = var.manifest
    custom_data = local.manifest_data
  }
}
