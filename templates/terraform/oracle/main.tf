# Names, tags, the availability domain and the image shared by every file of this module.

locals {
  # Every resource that takes tags carries these; the node programs and `citc destroy`'s sweep find
  # the cluster's resources by them. (Freeform tags cannot scope IAM policies: see iam.tf.)
  tags = {
    cluster = var.cluster_id
  }

  name = "citc-${var.cluster_id}"

  # DNS labels: a letter, then letters and digits, at most 15 characters. Host names resolve as
  # <host>.<subnet_dns_label>.<vcn_dns_label>.oraclevcn.com inside the VCN.
  vcn_dns_label    = substr(replace(var.cluster_id, "-", ""), 0, 15)
  subnet_dns_label = "cluster"
  dns_domain       = "${local.subnet_dns_label}.${local.vcn_dns_label}.oraclevcn.com"

  availability_domain = try(data.oci_identity_availability_domains.all.availability_domains[var.availability_domain - 1].name, null)

  is_flex = endswith(var.mgmt_shape, ".Flex")

  images = {
    "ubuntu-24.04" = {
      operating_system         = "Canonical Ubuntu"
      operating_system_version = "24.04"
      user                     = "ubuntu"
    }
  }
  image = local.images[var.image_os]
}

data "oci_identity_availability_domains" "all" {
  compartment_id = var.tenancy_ocid
}
