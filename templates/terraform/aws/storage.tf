# The shared filesystem, mounted at /mnt/shared on every node: EFS with one mount target in the
# cluster's subnet, reachable only by members of the "cluster" security group.

# Root is NOT squashed here yet, unlike on Google and Oracle: EFS has no per-address export options.
# Its only way is a file system policy granting elasticfilesystem:ClientRootAccess to the management
# node's IAM role alone, and a client is recognised as a role only when it mounts with IAM
# authorisation (`mount -t efs -o tls,iam`), which needs Amazon's mount helper (amazon-efs-utils):
# a plain NFS mount is anonymous and would lose root too. Neither image the management node runs
# (Ubuntu 24.04, Debian 12) has amazon-efs-utils in its archive: Amazon has it built from source
# there (its 2.x proxy is Rust).
# Until citc builds and installs it, such a policy would leave the management node unable to create
# the homes, so there is none: any member of the "cluster" group that mounts as root is root here.

resource "aws_efs_file_system" "shared" {
  creation_token = local.name
  encrypted      = true
  tags           = merge(local.tags, { Name = local.name })
}

resource "aws_efs_mount_target" "shared" {
  file_system_id  = aws_efs_file_system.shared.id
  subnet_id       = aws_subnet.cluster.id
  security_groups = [aws_security_group.cluster.id]
}
