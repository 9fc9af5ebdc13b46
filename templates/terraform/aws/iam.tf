# The management node's identity, used by the node programs (`citc node resume|suspend`) and by Packer
# when it builds a compute image there (templates/packer/cloud.pkr.hcl), with only what they need:
#   - launch compute nodes into this cluster's subnet and security group, from images tagged with this
#     cluster, and only when the request tags the instance cluster=<id>, type=compute (and its volume
#     cluster=<id>); compute nodes get no instance profile (they call no AWS API), so no iam:PassRole;
#   - tag instances, volumes and network interfaces only while launching (so nothing else can be
#     re-tagged into the cluster);
#   - terminate only instances tagged cluster=<id> and type=compute (never the management node,
#     tagged type=management);
#   - the image build: launch one machine tagged type=image-build from the base image's owner (Canonical
#     or Debian) with Packer's temporary key pair (packer_*), stop it, make an image and its snapshots
#     of it, tag those with the cluster, terminate it; on a failed build Packer deregisters the image
#     and deletes its snapshots (only ones already tagged with the cluster: an untagged leftover of a
#     build that failed while tagging stays for the admin);
#   - describe instances, images, subnets, security groups, volumes and regions (Describe calls
#     cannot be scoped by tag).
# test/lib/providers/aws/driver.test.ts checks this policy against the EC2 calls the node driver makes,
# and that nothing else is here but what the image build needs (that test lists it).

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
    resources = ["${local.ec2_arn}:${local.account}:instance/*"]
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
    sid       = "LaunchTheImageBuildMachine"
    actions   = ["ec2:RunInstances"]
    resources = ["${local.ec2_arn}:${local.account}:instance/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/cluster"
      values   = [var.cluster_id]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/type"
      values   = ["image-build"]
    }
  }

  # The node driver tags a node's volume like the node; Packer's run_volume_tags carry the cluster only.
  statement {
    sid       = "LaunchTaggedVolumes"
    actions   = ["ec2:RunInstances"]
    resources = ["${local.ec2_arn}:${local.account}:volume/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/cluster"
      values   = [var.cluster_id]
    }
  }

  statement {
    sid     = "LaunchIntoTheClusterNetwork"
    actions = ["ec2:RunInstances"]
    resources = [
      aws_subnet.cluster.arn,
      aws_security_group.cluster.arn,
      "${local.ec2_arn}:${local.account}:network-interface/*",
      # Packer's temporary key pair (compute nodes are launched with none).
      "${local.ec2_arn}:${local.account}:key-pair/packer_*",
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

  # The image build boots the management node's OS image (or its other-architecture sibling), which
  # Canonical or Debian own: only their images, not any public one.
  statement {
    sid       = "BuildImagesFromTheBaseImagesOwner"
    actions   = ["ec2:RunInstances"]
    resources = ["${local.ec2_arn}::image/*"]
    condition {
      test     = "StringEquals"
      variable = "ec2:Owner"
      values   = [local.image.owner]
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

  # Packer (1.6.6, Debian 12's) tags the new image and its snapshots after CreateImage, not in it: the
  # tags must name this cluster (what citc's image list, the launch statement above and destroy's
  # sweep look for).
  statement {
    sid     = "TagTheClusterImages"
    actions = ["ec2:CreateTags"]
    resources = [
      "${local.ec2_arn}::image/*",
      "${local.ec2_arn}::snapshot/*",
    ]
    condition {
      test     = "StringEquals"
      variable = "aws:RequestTag/cluster"
      values   = [var.cluster_id]
    }
  }

  statement {
    sid       = "TerminateOnlyTheClusterComputeNodes"
    actions   = ["ec2:TerminateInstances"]
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
    sid       = "StopImageAndTerminateTheImageBuildMachine"
    actions   = ["ec2:StopInstances", "ec2:CreateImage", "ec2:TerminateInstances"]
    resources = ["${local.ec2_arn}:${local.account}:instance/*"]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/cluster"
      values   = [var.cluster_id]
    }
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/type"
      values   = ["image-build"]
    }
  }

  # The image and snapshots CreateImage makes (new: they have no tags yet to scope by).
  statement {
    sid     = "MakeImages"
    actions = ["ec2:CreateImage"]
    resources = [
      "${local.ec2_arn}::image/*",
      "${local.ec2_arn}::snapshot/*",
    ]
  }

  statement {
    sid       = "PackersTemporaryKeyPair"
    actions   = ["ec2:CreateKeyPair", "ec2:DeleteKeyPair"]
    resources = ["${local.ec2_arn}:${local.account}:key-pair/packer_*"]
  }

  statement {
    sid     = "RemoveTheClusterImages"
    actions = ["ec2:DeregisterImage", "ec2:DeleteSnapshot"]
    resources = [
      "${local.ec2_arn}::image/*",
      "${local.ec2_arn}::snapshot/*",
    ]
    condition {
      test     = "StringEquals"
      variable = "aws:ResourceTag/cluster"
      values   = [var.cluster_id]
    }
  }

  statement {
    sid = "Describe"
    actions = [
      "ec2:DescribeInstances",
      "ec2:DescribeImages",
      "ec2:DescribeSubnets",
      "ec2:DescribeSecurityGroups",
      "ec2:DescribeVolumes",
      "ec2:DescribeRegions",
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
