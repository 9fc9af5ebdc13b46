# citc: Oracle Cloud infrastructure for one cluster (network, File Storage, management node, its
# identity). Compute nodes are not in this state: the node programs on the management node start and
# stop them.
#
# Credentials: an API signing key, either from a profile of ~/.oci/config (config_file_profile) or
# given one by one (user_ocid, fingerprint, private_key_path). citc never writes the key itself here.

terraform {
  # Terraform >= 1.5 or any OpenTofu release.
  required_version = ">= 1.5.0"

  required_providers {
    oci = {
      source  = "oracle/oci"
      version = ">= 5.0, < 8.0"
    }
  }
}

provider "oci" {
  region              = var.region
  tenancy_ocid        = var.tenancy_ocid
  user_ocid           = var.user_ocid
  fingerprint         = var.fingerprint
  private_key_path    = var.private_key_path
  config_file_profile = var.config_file_profile
}
