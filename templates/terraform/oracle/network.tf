# One VCN with one public subnet. Inbound from outside: SSH to the management node only (network
# security group "ssh", on its VNIC alone). Inside: the subnet's security list allows everything from
# the VCN's own addresses, nothing from elsewhere.

resource "oci_core_vcn" "cluster" {
  compartment_id = var.compartment_ocid
  display_name   = local.name
  cidr_blocks    = [var.vcn_cidr]
  dns_label      = local.vcn_dns_label
  freeform_tags  = local.tags

  lifecycle {
    precondition {
      condition     = can(regex("^[a-z][a-z0-9]{0,14}$", local.vcn_dns_label))
      error_message = "the VCN DNS label \"${local.vcn_dns_label}\" must be a letter then at most 14 letters or digits."
    }
  }
}

resource "oci_core_internet_gateway" "cluster" {
  compartment_id = var.compartment_ocid
  vcn_id         = oci_core_vcn.cluster.id
  display_name   = local.name
  freeform_tags  = local.tags
}

resource "oci_core_route_table" "cluster" {
  compartment_id = var.compartment_ocid
  vcn_id         = oci_core_vcn.cluster.id
  display_name   = local.name
  freeform_tags  = local.tags

  route_rules {
    destination       = "0.0.0.0/0"
    destination_type  = "CIDR_BLOCK"
    network_entity_id = oci_core_internet_gateway.cluster.id
  }
}

resource "oci_core_security_list" "cluster" {
  compartment_id = var.compartment_ocid
  vcn_id         = oci_core_vcn.cluster.id
  display_name   = "${local.name}-internal"
  freeform_tags  = local.tags

  ingress_security_rules {
    description = "everything from inside the VCN"
    protocol    = "all"
    source      = var.vcn_cidr
  }

  egress_security_rules {
    description = "everything outbound"
    protocol    = "all"
    destination = "0.0.0.0/0"
  }
}

resource "oci_core_subnet" "cluster" {
  compartment_id    = var.compartment_ocid
  vcn_id            = oci_core_vcn.cluster.id
  display_name      = local.name
  cidr_block        = cidrsubnet(var.vcn_cidr, 4, 0)
  dns_label         = local.subnet_dns_label
  route_table_id    = oci_core_route_table.cluster.id
  security_list_ids = [oci_core_security_list.cluster.id]
  freeform_tags     = local.tags

  lifecycle {
    precondition {
      condition     = can(regex("^[a-z][a-z0-9]{0,14}$", local.subnet_dns_label))
      error_message = "the subnet DNS label must be a letter then at most 14 letters or digits."
    }
  }
}

resource "oci_core_network_security_group" "ssh" {
  compartment_id = var.compartment_ocid
  vcn_id         = oci_core_vcn.cluster.id
  display_name   = "${local.name}-ssh"
  freeform_tags  = local.tags
}

resource "oci_core_network_security_group_security_rule" "ssh" {
  network_security_group_id = oci_core_network_security_group.ssh.id
  description               = "SSH to the management node"
  direction                 = "INGRESS"
  protocol                  = "6" # TCP
  source_type               = "CIDR_BLOCK"
  source                    = var.ssh_cidr

  tcp_options {
    destination_port_range {
      min = 22
      max = 22
    }
  }
}
