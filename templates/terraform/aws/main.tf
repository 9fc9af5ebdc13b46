# Names, tags and the image choice shared by every file of this module.

locals {
  # Every resource that can carry tags carries these; the node programs and `citc destroy`'s sweep
  # find the cluster's resources by them.
  tags = {
    cluster = var.cluster_id
  }

  name = "citc-${var.cluster_id}"

  # Base images, looked up by owner and name (newest first). The same filters are an output, for
  # building compute images later.
  image_arch = var.mgmt_arch == "arm64" ? "arm64" : "amd64"
  images = {
    "ubuntu-24.04" = {
      owner = "099720109477" # Canonical
      name  = "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-${local.image_arch}-server-*"
      user  = "ubuntu"
    }
    "debian-12" = {
      owner = "136693071363" # Debian
      name  = "debian-12-${local.image_arch}-*"
      user  = "admin"
    }
  }
  image = local.images[var.image_os]
}
