# The shared filesystem, mounted at /mnt/shared on every node: OCI File Storage, a mount target in
# the cluster's subnet (reachable from inside the VCN only) and an export limited to the VCN, root
# squashed for all but the management node.

resource "oci_file_storage_file_system" "shared" {
  compartment_id      = var.compartment_ocid
  availability_domain = local.availability_domain
  display_name        = local.name
  freeform_tags       = local.tags

  lifecycle {
    precondition {
      condition     = local.availability_domain != null
      error_message = "region ${var.region} has no availability domain ${var.availability_domain}."
    }
  }
}

resource "oci_file_storage_mount_target" "shared" {
  compartment_id      = var.compartment_ocid
  availability_domain = local.availability_domain
  subnet_id           = oci_core_subnet.cluster.id
  display_name        = local.name
  hostname_label      = "fss"
  freeform_tags       = local.tags
}

resource "oci_file_storage_export" "shared" {
  export_set_id  = oci_file_storage_mount_target.shared.export_set_id
  file_system_id = oci_file_storage_file_system.shared.id
  path           = "/shared"

  # Root is squashed for every client but the management node: /mnt/shared holds every user's home
  # and the cluster's shared configuration, and root on a compute node (or anyone who gets it there)
  # must not read or write all of it. OCI applies to each NFS request the first of these options
  # whose source matches the client's address, so the management node's own address comes first
  # (root stays root: it creates the homes and the shared layout), then the rest of the VCN (root
  # becomes nobody, 65534). A client matching neither does not see the export at all.
  export_options {
    source          = "${oci_core_instance.mgmt.private_ip}/32"
    access          = "READ_WRITE"
    identity_squash = "NONE"
  }

  export_options {
    source          = var.vcn_cidr
    access          = "READ_WRITE"
    identity_squash = "ROOT"
    anonymous_uid   = 65534
    anonymous_gid   = 65534
  }
}

data "oci_core_private_ip" "shared" {
  private_ip_id = oci_file_storage_mount_target.shared.private_ip_ids[0]
}
