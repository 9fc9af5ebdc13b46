# What citc reads after apply (kept in cluster.yaml) and what the node drivers need later.

output "cluster_id" {
  value = var.cluster_id
}

output "mgmt_public_ip" {
  description = "The management node's public address (SSH)."
  value       = oci_core_instance.mgmt.public_ip
}

output "mgmt_private_ip" {
  value = oci_core_instance.mgmt.private_ip
}

output "mgmt_user" {
  description = "The image's default user, authorized with the admin's key."
  value       = local.image.user
}

output "mgmt_hostname" {
  value = "mgmt"
}

output "mgmt_shape" {
  value = var.mgmt_shape
}

output "region" {
  value = var.region
}

output "compartment_id" {
  value = var.compartment_ocid
}

output "availability_domain" {
  description = "Name of the availability domain (the number is ad_number)."
  value       = local.availability_domain
}

output "ad_number" {
  value = var.availability_domain
}

output "vcn_id" {
  value = oci_core_vcn.cluster.id
}

output "subnet_id" {
  description = "Compute nodes are launched into this subnet (the security list lets in VCN traffic only)."
  value       = oci_core_subnet.cluster.id
}

output "dns_domain" {
  description = "Host names in the subnet resolve as <hostname_label>.<dns_domain>."
  value       = local.dns_domain
}

output "base_image" {
  description = "How the management node's image was found; compute images are built from the same."
  value = {
    id                       = data.oci_core_images.base.images[0].id
    operating_system         = local.image.operating_system
    operating_system_version = local.image.operating_system_version
    os                       = var.image_os
  }
}

output "shared_fs_host" {
  description = "NFS server of the shared filesystem (the mount target's address)."
  value       = data.oci_core_private_ip.shared.ip_address
}

output "shared_fs_path" {
  value = oci_file_storage_export.shared.path
}

output "shared_fs_type" {
  description = "Filesystem type for mount(8) and /etc/fstab."
  value       = "nfs"
}

output "shared_fs_mount_options" {
  value = "nfsvers=3,hard,timeo=600,retrans=3,_netdev"
}
