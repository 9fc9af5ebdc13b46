# What citc reads after apply (kept in cluster.yaml) and what the node drivers need later.

output "cluster_id" {
  value = var.cluster_id
}

output "mgmt_public_ip" {
  description = "The management node's fixed public address (SSH)."
  value       = aws_eip.mgmt.public_ip
}

output "mgmt_private_ip" {
  value = aws_instance.mgmt.private_ip
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

output "zone" {
  value = var.zone
}

output "vpc_id" {
  value = aws_vpc.cluster.id
}

output "subnet_id" {
  description = "Compute nodes are launched into this subnet."
  value       = aws_subnet.cluster.id
}

output "compute_security_group_id" {
  description = "Compute nodes get this security group (cluster-internal traffic only)."
  value       = aws_security_group.cluster.id
}

output "base_image" {
  description = "How the management node's image was found; compute images are built from the same."
  value = {
    id           = data.aws_ami.base.id
    owner        = local.image.owner
    name_filter  = local.image.name
    architecture = var.mgmt_arch
    os           = var.image_os
  }
}

output "shared_fs_host" {
  description = "NFS server of the shared filesystem (the EFS mount target's address)."
  value       = aws_efs_mount_target.shared.ip_address
}

output "shared_fs_path" {
  value = "/"
}

output "shared_fs_type" {
  description = "Filesystem type for mount(8) and /etc/fstab."
  value       = "nfs4"
}

output "shared_fs_mount_options" {
  value = "nfsvers=4.1,rsize=1048576,wsize=1048576,hard,timeo=600,retrans=2,noresvport,_netdev"
}

# The management node alone mounts EFS with Amazon's mount helper over TLS with its IAM role: the file
# system policy (storage.tf) lets only that role be root. The filesystem role builds the helper there.
output "mgmt_shared_fs_source" {
  value = "${aws_efs_file_system.shared.id}:/"
}

output "mgmt_shared_fs_type" {
  value = "efs"
}

output "mgmt_shared_fs_mount_options" {
  # mounttargetip: the mount target's address, not the file system's DNS name (which needs the VPC's DNS hostnames).
  value = "tls,iam,mounttargetip=${aws_efs_mount_target.shared.ip_address},_netdev"
}

output "node_role_arn" {
  value = aws_iam_role.mgmt.arn
}
