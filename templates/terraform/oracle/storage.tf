# The shared filesystem, mounted at /mnt/shared on every node: OCI File Storage, a mount target in
# the cluster's subnet (reachable from inside the VCN only) and an export limited to the VCN.

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

  export_options {
    source          = var.vcn_cidr
    access          = "READ_WRITE"
    identity_squash = "NONE"
  }
}

data "oci_core_private_ip" "shared" {
  private_ip_id = oci_file_storage_mount_target.shared.private_ip_ids[0]
}
