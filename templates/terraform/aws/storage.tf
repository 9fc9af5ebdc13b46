# The shared filesystem, mounted at /mnt/shared on every node: EFS with one mount target in the
# cluster's subnet, reachable only by members of the "cluster" security group.

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
