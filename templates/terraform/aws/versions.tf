# citc: AWS infrastructure for one cluster (network, shared filesystem, management node, its identity).
# Compute nodes are not in this state: the node programs on the management node start and stop them.
#
# Credentials are never written here: the AWS provider reads them from the environment citc runs
# Terraform with (AWS_PROFILE, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN, or SSO).

terraform {
  # Terraform >= 1.5 or any OpenTofu release.
  required_version = ">= 1.5.0"

  required_providers {
    aws = {
      source  = "hashicorp/aws"
      version = ">= 5.0, < 7.0"
    }
  }
}

provider "aws" {
  region = var.region
}
