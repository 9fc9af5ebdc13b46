# The management node: slurmctld, LDAP, the node programs. Its first boot (cloud-init) only authorizes
# the admin's key and installs the SSH host key citc generated; citc then configures it over SSH.

data "aws_ami" "base" {
  most_recent = true
  owners      = [local.image.owner]

  filter {
    name   = "name"
    values = [local.image.name]
  }
  filter {
    name   = "architecture"
    values = [var.mgmt_arch]
  }
  filter {
    name   = "virtualization-type"
    values = ["hvm"]
  }
}

resource "aws_instance" "mgmt" {
  ami                         = data.aws_ami.base.id
  instance_type               = var.mgmt_shape
  subnet_id                   = aws_subnet.cluster.id
  vpc_security_group_ids      = [aws_security_group.cluster.id, aws_security_group.ssh.id]
  associate_public_ip_address = true
  iam_instance_profile        = aws_iam_instance_profile.mgmt.name

  user_data = templatefile("${path.module}/cloud-init/mgmt.yaml.tftpl", {
    hostname              = "mgmt"
    admin_key             = var.ssh_public_key
    host_key              = var.ssh_host_key
    host_key_public       = var.ssh_host_key_public
    disable_gce_host_keys = false
  })

  # Instance metadata only with a session token (IMDSv2), one hop: containers cannot reach it.
  metadata_options {
    http_endpoint               = "enabled"
    http_tokens                 = "required"
    http_put_response_hop_limit = 1
  }

  root_block_device {
    volume_size = var.mgmt_disk_gb
    volume_type = "gp3"
    encrypted   = true
  }

  tags        = merge(local.tags, { Name = "${var.cluster_id}-mgmt", type = "management" })
  volume_tags = merge(local.tags, { Name = "${var.cluster_id}-mgmt" })

  lifecycle {
    # A newer image must not replace a running management node.
    ignore_changes = [ami]
  }

  # The EFS mount target must exist before the playbook mounts /mnt/shared.
  depends_on = [aws_efs_mount_target.shared, aws_route_table_association.cluster]
}

# A fixed public address: it survives stops and starts, so the address citc keeps stays right.
resource "aws_eip" "mgmt" {
  domain     = "vpc"
  instance   = aws_instance.mgmt.id
  tags       = merge(local.tags, { Name = "${var.cluster_id}-mgmt" })
  depends_on = [aws_internet_gateway.cluster]
}
