# The management node: slurmctld, LDAP, the node programs. Its first boot (cloud-init) only authorizes
# the admin's key and installs the SSH host key citc generated; citc then configures it over SSH.

data "oci_core_images" "base" {
  compartment_id           = var.compartment_ocid
  operating_system         = local.image.operating_system
  operating_system_version = local.image.operating_system_version
  shape                    = var.mgmt_shape
  state                    = "AVAILABLE"
  sort_by                  = "TIMECREATED"
  sort_order               = "DESC"
}

resource "oci_core_instance" "mgmt" {
  compartment_id      = var.compartment_ocid
  availability_domain = local.availability_domain
  display_name        = "${var.cluster_id}-mgmt"
  shape               = var.mgmt_shape
  freeform_tags       = merge(local.tags, { type = "management" })

  dynamic "shape_config" {
    for_each = local.is_flex ? [1] : []
    content {
      ocpus         = var.mgmt_ocpus
      memory_in_gbs = var.mgmt_memory_gb
    }
  }

  source_details {
    source_type             = "image"
    source_id               = data.oci_core_images.base.images[0].id
    boot_volume_size_in_gbs = var.mgmt_disk_gb
  }

  create_vnic_details {
    subnet_id        = oci_core_subnet.cluster.id
    assign_public_ip = true # an ephemeral public address on OCI survives stops and starts
    hostname_label   = "mgmt"
    nsg_ids          = [oci_core_network_security_group.ssh.id]
    freeform_tags    = local.tags
  }

  metadata = {
    ssh_authorized_keys = trimspace(var.ssh_public_key)
    user_data = base64encode(templatefile("${path.module}/cloud-init/mgmt.yaml.tftpl", {
      hostname              = "mgmt"
      admin_key             = var.ssh_public_key
      host_key              = var.ssh_host_key
      host_key_public       = var.ssh_host_key_public
      disable_gce_host_keys = false
    }))
  }

  lifecycle {
    # A newer image must not replace a running management node.
    ignore_changes = [source_details[0].source_id]
    precondition {
      condition     = length(data.oci_core_images.base.images) > 0
      error_message = "no ${local.image.operating_system} ${local.image.operating_system_version} image for shape ${var.mgmt_shape} in ${var.region}."
    }
  }

  # No depends_on the export: the export names this node's address (storage.tf), so it is made after
  # the node; citc runs the playbook that mounts /mnt/shared only once the whole apply is done. The
  # address is the one OCI gave the node at launch, not a fixed one: the primary VNIC's private_ip is
  # a launch-time detail, and fixing it now would mean a new management node for existing clusters.
}
