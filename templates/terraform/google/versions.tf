# citc: Google Cloud infrastructure for one cluster (network, Filestore, management node, its identity).
# Compute nodes are not in this state: the node programs on the management node start and stop them.
#
# Credentials: Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, or the file written by
# `gcloud auth application-default login`), or the key file named in credentials_file.
# The project needs the Compute Engine and Filestore APIs enabled (compute.googleapis.com,
# file.googleapis.com); citc does not enable or disable APIs.

terraform {
  # Terraform >= 1.5 or any OpenTofu release.
  required_version = ">= 1.5.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 5.0, < 8.0"
    }
    random = {
      source  = "hashicorp/random"
      version = ">= 3.5, < 4.0"
    }
  }
}

provider "google" {
  project     = var.project
  region      = var.region
  zone        = var.zone
  credentials = var.credentials_file
}
