# Names, labels and the image choice shared by every file of this module.

locals {
  # Every resource that takes labels carries these; the node programs and `citc destroy`'s sweep
  # find the cluster's resources by them. Networks, firewalls, routers and IAM objects take no labels:
  # their names start with citc-<cluster_id>.
  labels = {
    cluster = var.cluster_id
  }

  name = "citc-${var.cluster_id}"

  # Network tags: firewall rules select instances by them.
  mgmt_tag    = "${local.name}-mgmt"
  cluster_tag = local.name

  image_arch = var.mgmt_arch == "arm64" ? "arm64" : "amd64"
  images = {
    "ubuntu-24.04" = {
      project = "ubuntu-os-cloud"
      family  = "ubuntu-2404-lts-${local.image_arch}"
      user    = "ubuntu"
    }
  }
  image = local.images[var.image_os]

  # Service account IDs: 6 to 30 characters, ending in a letter or digit.
  service_account_id = replace(substr("${local.name}-mgmt", 0, 30), "/-+$/", "")
}
