# The management node's identity, used by the node programs (`citc node resume|suspend`), with only
# what they need:
#   - launch instances into this cluster's subnet and security group, from images tagged with this
#     cluster, and only when the request tags them cluster=<id> and type=compute;
#   - tag only while launching (so nothing else can be re-tagged into the cluster);
#   - stop and terminate only instances tagged cluster=<id> and type=compute (never the management
#     node, tagged type=management);
#   - describe instances, images, types and subnets (Describe calls cannot be scoped by tag).

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

locals {
  ec2_arn = "arn:${data.aws_partition.current.partition}:ec2:${var.region}"
  account = data.aws_caller_identity.current.account_id
}

data "aws_iam_policy_document" "assume_ec2" {
  statement {
    actions = ["sts:AssumeRole"]
    principals {
      type        = "Service"
      identifiers = ["ec2.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "node_programs" {
  statement {
    sid       = "LaunchTaggedComputeNodes"
    actions   = ["ec2:RunInstances"]
    resources = ["${local.ec2_arn}:${local.account}:instance/*", "${local.ec2_arn}:${local.account}:volume/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/cluster"
      values   = [var.cluster_id]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/type"
      values   = ["compute"]
    }
  }

  statement {
    sid     = "LaunchIntoTheClusterNetwork"
    actions = ["ec2:RunInstances"]
    resources = [
      aws_subnet.cluster.arn,
      aws_security_group.cluster.arn,
      "${local.ec2_arn}:${local.account}:network-interface/*",
    ]
  }

  statement {
    sid       = "LaunchFromTheClusterImages"
    actions   = ["ec2:RunInstances"]
    resources = ["${local.ec2_arn}::image/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/cluster"
      values   = [var.cluster_id]
    }
  }

  statement {
    sid     = "TagOnlyWhileLaunching"
    actions = ["ec2:CreateTags"]
    resources = [
      "${local.ec2_arn}:${local.account}:instance/*",
      "${local.ec2_arn}:${local.account}:volume/*",
      "${local.ec2_arn}:${local.account}:network-interface/*",
    ]
    condition {
      test     = "StringEquals"
      variable = "ec2:CreateAction"
      values   = ["RunInstances"]
    }
  }

  statement {
    sid       = "StopOnlyTheClusterComputeNodes"
    actions   = ["ec2:TerminateInstances", "ec2:StopInstances"]
    resources = ["${local.ec2_arn}:${local.account}:instance/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/cluster"
      values   = [var.cluster_id]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/type"
      values   = ["compute"]
    }
  }

  statement {
    sid = "Describe"
    actions = [
      "ec2:DescribeInstances",
      "ec2:DescribeInstanceStatus",
      "ec2:DescribeInstanceTypes",
      "ec2:DescribeImages",
      "ec2:DescribeSubnets",
      "ec2:DescribeAvailabilityZones",
    ]
    resources = ["*"]
  }
}

resource "aws_iam_role" "mgmt" {
  name               = "${local.name}-mgmt"
  description        = "citc ${var.cluster_id}: the management node's node programs"
  assume_role_policy = data.aws_iam_policy_document.assume_ec2.json
  tags               = local.tags
}

resource "aws_iam_role_policy" "node_programs" {
  name   = "node-programs"
  role   = aws_iam_role.mgmt.id
  policy = data.aws_iam_policy_document.node_programs.json
}

resource "aws_iam_instance_profile" "mgmt" {
  name = "${local.name}-mgmt"
  role = aws_iam_role.mgmt.name
  tags = local.tags
}
