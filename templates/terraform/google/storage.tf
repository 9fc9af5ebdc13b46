# The shared filesystem, mounted at /mnt/shared on every node: a Filestore instance in the cluster's
# zone, exported only to the cluster's subnet.
#
# Root is squashed for every client but the management node: /mnt/shared holds every user's home and
# the cluster's shared configuration, and root on a compute node (or anyone who gets it there) must
# not read or write all of it. The management node keeps root (NO_ROOT_SQUASH): it creates the homes
# and the shared layout as root. Filestore refuses overlapping ranges, within one export option and
# across them, so "the subnet but the management node" is written out as the blocks that make up the
# subnet without that one address (local.squashed_ranges: one block per prefix length below the
# subnet's, at most 32 blocks, within Filestore's limit of 64 ranges per share).

locals {
  # The address Google gave the management node: an ephemeral internal address stays with the
  # instance until it is deleted. (Not a fixed one: the provider replaces an instance whose
  # network_ip changes, which would make a new management node for an existing cluster.)
  mgmt_private_ip = google_compute_instance.mgmt.network_interface[0].network_ip

  subnet_prefix  = tonumber(element(split("/", var.subnet_cidr), 1))
  mgmt_ip_octets = [for o in split(".", local.mgmt_private_ip) : tonumber(o)]
  # Its host number in the subnet: the address as a number, less the subnet's (aligned) base.
  mgmt_host_number = (
    element(local.mgmt_ip_octets, 0) * 16777216 + element(local.mgmt_ip_octets, 1) * 65536 +
    element(local.mgmt_ip_octets, 2) * 256 + element(local.mgmt_ip_octets, 3)
  ) % pow(2, 32 - local.subnet_prefix)

  # For each prefix length p below the subnet's: the /p block next to the one holding the management
  # node (same leading p-1 bits, the p-th bit flipped). Together they are the subnet less that address.
  # The last one is a single address, written as an address (Filestore's two documented forms).
  squashed_ranges = [
    for p in range(local.subnet_prefix + 1, 33) : trimsuffix(cidrsubnet(
      var.subnet_cidr,
      p - local.subnet_prefix,
      floor(local.mgmt_host_number / pow(2, 32 - p)) + 1 - 2 * (floor(local.mgmt_host_number / pow(2, 32 - p)) % 2),
    ), "/32")
  ]
}

resource "google_filestore_instance" "shared" {
  name     = local.name
  location = var.zone
  tier     = var.filestore_tier
  labels   = local.labels

  file_shares {
    name        = "shared"
    capacity_gb = var.filestore_capacity_gb

    # The management node only: root stays root (it makes the homes).
    nfs_export_options {
      ip_ranges   = [local.mgmt_private_ip]
      access_mode = "READ_WRITE"
      squash_mode = "NO_ROOT_SQUASH"
    }

    # Every other address of the subnet (compute nodes): root becomes nobody (65534).
    nfs_export_options {
      ip_ranges   = local.squashed_ranges
      access_mode = "READ_WRITE"
      squash_mode = "ROOT_SQUASH"
      anon_uid    = 65534
      anon_gid    = 65534
    }
  }

  networks {
    network = google_compute_network.cluster.name
    modes   = ["MODE_IPV4"]
  }
}
