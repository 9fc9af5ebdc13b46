# The shared filesystem, mounted at /mnt/shared on every node: a Filestore instance in the cluster's
# zone, exported only to the cluster's subnet.

resource "google_filestore_instance" "shared" {
  name     = local.name
  location = var.zone
  tier     = var.filestore_tier
  labels   = local.labels

  file_shares {
    name        = "shared"
    capacity_gb = var.filestore_capacity_gb

    nfs_export_options {
      ip_ranges   = [var.subnet_cidr]
      access_mode = "READ_WRITE"
      squash_mode = "NO_ROOT_SQUASH"
    }
  }

  networks {
    network = google_compute_network.cluster.name
    modes   = ["MODE_IPV4"]
  }
}
