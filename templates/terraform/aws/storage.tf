# The shared filesystem, mounted at /mnt/shared on every node: EFS with one mount target in the
# cluster's subnet, reachable only by members of the "cluster" security group.

# Root is squashed for every client but the management node. EFS has no per-address export options:
# its way is a file system policy. Clients that mount plain NFS (compute nodes, images being built)
# are anonymous to EFS and get only what the policy grants everyone: mount and write through a mount
# target, not ClientRootAccess, so their root acts as nobody (65534). The management node, which
# creates the homes, mounts with Amazon's mount helper over TLS with its IAM role (`mount -t efs -o
# tls,iam`; the filesystem role builds amazon-efs-utils there, outputs mgmt_shared_fs_*), and the
# policy grants that role ClientRootAccess.

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

data "aws_iam_policy_document" "shared_fs" {
  # Everyone (anonymous NFS clients included) may mount and write through a mount target, as users: no root.
  statement {
    sid       = "NodesWithoutRoot"
    effect    = "Allow"
    actions   = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite"]
    resources = [aws_efs_file_system.shared.arn]
    principals {
      type        = "AWS"
      identifiers = ["*"]
    }
    condition {
      test     = "Bool"
      variable = "elasticfilesystem:AccessedViaMountTarget"
      values   = ["true"]
    }
  }
  # The management node's role, recognised only on its IAM mount (tls,iam), is root.
  statement {
    sid       = "ManagementNodeRoot"
    effect    = "Allow"
    actions   = ["elasticfilesystem:ClientMount", "elasticfilesystem:ClientWrite", "elasticfilesystem:ClientRootAccess"]
    resources = [aws_efs_file_system.shared.arn]
    principals {
      type        = "AWS"
      identifiers = [aws_iam_role.mgmt.arn]
    }
  }
}

resource "aws_efs_file_system_policy" "shared" {
  file_system_id = aws_efs_file_system.shared.id
  policy         = data.aws_iam_policy_document.shared_fs.json
}
