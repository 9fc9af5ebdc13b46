# Inputs. citc writes the values in citc.auto.tfvars.json (mode 0600: it holds the host's private key).

variable "cluster_id" {
  description = "The cluster's name; every resource is tagged (freeform) cluster = <cluster_id>."
  type        = string
  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,30}$", var.cluster_id))
    error_message = "cluster_id must start with a lower-case letter and have at most 31 of a-z, 0-9 and \"-\"."
  }
}

variable "tenancy_ocid" {
  description = "OCID of the tenancy (the dynamic group of the management node is created there)."
  type        = string
  validation {
    condition     = can(regex("^ocid1\\.tenancy\\.", var.tenancy_ocid))
    error_message = "tenancy_ocid must be a tenancy OCID (ocid1.tenancy.oc1..)."
  }
}

variable "compartment_ocid" {
  description = "OCID of the compartment that holds the cluster (the tenancy OCID for the root compartment)."
  type        = string
  validation {
    condition     = can(regex("^ocid1\\.(compartment|tenancy)\\.", var.compartment_ocid))
    error_message = "compartment_ocid must be a compartment OCID (ocid1.compartment.oc1..)."
  }
}

variable "config_file_profile" {
  description = "Profile of ~/.oci/config holding the API key; null when the key is given by the three variables below."
  type        = string
  default     = null
}

variable "user_ocid" {
  description = "OCID of the API user (null: from config_file_profile)."
  type        = string
  default     = null
  validation {
    condition     = var.user_ocid == null || can(regex("^ocid1\\.user\\.", var.user_ocid))
    error_message = "user_ocid must be a user OCID (ocid1.user.oc1..)."
  }
}

variable "fingerprint" {
  description = "Fingerprint of the API signing key (null: from config_file_profile)."
  type        = string
  default     = null
  validation {
    condition     = var.fingerprint == null || can(regex("^([0-9a-f]{2}:){15}[0-9a-f]{2}$", var.fingerprint))
    error_message = "fingerprint must look like 12:34:56:78:90:ab:cd:ef:12:34:56:78:90:ab:cd:ef."
  }
}

variable "private_key_path" {
  description = "Path of the API signing private key (null: from config_file_profile)."
  type        = string
  default     = null
}

variable "region" {
  description = "OCI region identifier, e.g. uk-london-1."
  type        = string
  validation {
    condition     = can(regex("^[a-z]+-[a-z]+-[0-9]+$", var.region))
    error_message = "region must be a region identifier such as uk-london-1."
  }
}

variable "availability_domain" {
  description = "Number (1 to 3) of the availability domain of the management node, the mount target and the compute nodes."
  type        = number
  default     = 1
  validation {
    condition     = contains([1, 2, 3], var.availability_domain)
    error_message = "availability_domain must be 1, 2 or 3."
  }
}

variable "mgmt_shape" {
  description = "Shape of the management node, without a flexible shape's size (see mgmt_ocpus, mgmt_memory_gb)."
  type        = string
  default     = "VM.Standard.E4.Flex"
  validation {
    condition     = can(regex("^(VM|BM)\\.[A-Za-z0-9.]+$", var.mgmt_shape))
    error_message = "mgmt_shape must be an OCI shape name such as VM.Standard.E4.Flex."
  }
}

variable "mgmt_ocpus" {
  description = "OCPUs of a flexible mgmt_shape (ignored for fixed shapes)."
  type        = number
  default     = 1
  validation {
    condition     = var.mgmt_ocpus >= 1 && floor(var.mgmt_ocpus) == var.mgmt_ocpus
    error_message = "mgmt_ocpus must be a whole number, at least 1."
  }
}

variable "mgmt_memory_gb" {
  description = "Memory in GB of a flexible mgmt_shape (ignored for fixed shapes)."
  type        = number
  default     = 16
  validation {
    condition     = var.mgmt_memory_gb >= 1 && floor(var.mgmt_memory_gb) == var.mgmt_memory_gb
    error_message = "mgmt_memory_gb must be a whole number, at least 1."
  }
}

variable "mgmt_disk_gb" {
  description = "Size of the management node's boot volume in GB."
  type        = number
  default     = 50
  validation {
    condition     = var.mgmt_disk_gb >= 50 && var.mgmt_disk_gb <= 32768
    error_message = "mgmt_disk_gb must be between 50 and 32768."
  }
}

variable "image_os" {
  description = "Operating system of the management node. Only ubuntu-24.04: OCI offers no Debian platform image."
  type        = string
  default     = "ubuntu-24.04"
  validation {
    condition     = contains(["ubuntu-24.04"], var.image_os)
    error_message = "image_os must be ubuntu-24.04 on Oracle Cloud (there is no Debian platform image)."
  }
}

variable "ssh_public_key" {
  description = "The admin's SSH public key (OpenSSH one-line format), authorized for the image's default user."
  type        = string
  validation {
    condition     = can(regex("^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(256|384|521)|sk-ssh-ed25519@openssh.com) [A-Za-z0-9+/=]+", var.ssh_public_key))
    error_message = "ssh_public_key must be one OpenSSH public key line (ssh-ed25519 AAAA...)."
  }
}

variable "ssh_host_key" {
  description = "The management node's ed25519 SSH host private key generated by citc (OpenSSH format)."
  type        = string
  sensitive   = true
  validation {
    condition     = can(regex("-----BEGIN OPENSSH PRIVATE KEY-----", var.ssh_host_key))
    error_message = "ssh_host_key must be an OpenSSH private key."
  }
}

variable "ssh_host_key_public" {
  description = "The public part of ssh_host_key (ssh-ed25519 AAAA...): citc pins it before the first connection."
  type        = string
  validation {
    condition     = can(regex("^ssh-ed25519 [A-Za-z0-9+/=]+", var.ssh_host_key_public))
    error_message = "ssh_host_key_public must be an ssh-ed25519 public key line."
  }
}

variable "ssh_cidr" {
  description = "Addresses allowed to reach the management node's SSH port (the only port open to the outside)."
  type        = string
  default     = "0.0.0.0/0"
  validation {
    condition     = can(cidrhost(var.ssh_cidr, 0))
    error_message = "ssh_cidr must be an IPv4 CIDR block such as 203.0.113.0/24 or 0.0.0.0/0."
  }
}

variable "vcn_cidr" {
  description = "Address range of the cluster's VCN; the subnet is its first /20."
  type        = string
  default     = "10.0.0.0/16"
  validation {
    condition     = can(cidrsubnet(var.vcn_cidr, 4, 0))
    error_message = "vcn_cidr must be an IPv4 CIDR block of /24 or larger, such as 10.0.0.0/16."
  }
}
