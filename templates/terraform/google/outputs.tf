# What citc reads after apply (kept in cluster.yaml) and what the node drivers need later.

output "cluster_id" {
  value = var.cluster_id
}

output "mgmt_public_ip" {
  description = "The management node's fixed public address (SSH)."
  value       = google_compute_address.mgmt.address
}

output "mgmt_private_ip" {
  value = google_compute_instance.mgmt.network_interface[0].network_ip
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

output "project" {
  value = var.project
}

output "region" {
  value = var.region
}

output "zone" {
  value = var.zone
}

output "network" {
  value = google_compute_network.cluster.self_link
}

output "subnetwork" {
  description = "Compute nodes are launched into this subnetwork (no public address: Cloud NAT)."
  value       = google_compute_subnetwork.cluster.self_link
}

output "compute_network_tag" {
  description = "Network tag compute nodes get (cluster-internal traffic only)."
  value       = local.cluster_tag
}

output "base_image" {
  description = "How the management node's image was found; compute images are built from the same."
  value = {
    self_link = data.google_compute_image.base.self_link
    project   = local.image.project
    family    = local.image.family
    os        = var.image_os
  }
}

output "node_service_account" {
  value = google_service_account.mgmt.email
}

output "shared_fs_host" {
  description = "NFS server of the shared filesystem (the Filestore instance's address)."
  value       = google_filestore_instance.shared.networks[0].ip_addresses[0]
}

output "shared_fs_path" {
  value = "/shared"
}

output "shared_fs_type" {
  description = "Filesystem type for mount(8) and /etc/fstab."
  value       = "nfs"
}

output "shared_fs_mount_options" {
  value = "nfsvers=3,hard,timeo=600,retrans=3,_netdev"
}
