# One VPC with one public subnet. Inbound from outside: SSH to the management node only (security
# group "ssh"). Inside: the "cluster" group lets its members (management node, compute nodes, the EFS
# mount target) reach each other on every port.

resource "aws_vpc" "cluster" {
  cidr_block           = var.vpc_cidr
  enable_dns_support   = true
  enable_dns_hostnames = true
  tags                 = merge(local.tags, { Name = local.name })
}

resource "aws_subnet" "cluster" {
  vpc_id            = aws_vpc.cluster.id
  availability_zone = var.zone
  cidr_block        = cidrsubnet(var.vpc_cidr, 4, 0)
  # Instances get a public address only when they ask for one (the management node does; the node
  # driver decides for compute nodes, which need one for outbound traffic: there is no NAT gateway).
  map_public_ip_on_launch = false
  tags                    = merge(local.tags, { Name = local.name })

  lifecycle {
    precondition {
      condition     = startswith(var.zone, var.region)
      error_message = "zone ${var.zone} is not in region ${var.region}."
    }
  }
}

resource "aws_internet_gateway" "cluster" {
  vpc_id = aws_vpc.cluster.id
  tags   = merge(local.tags, { Name = local.name })
}

resource "aws_route_table" "cluster" {
  vpc_id = aws_vpc.cluster.id
  route {
    cidr_block = "0.0.0.0/0"
    gateway_id = aws_internet_gateway.cluster.id
  }
  tags = merge(local.tags, { Name = local.name })
}

resource "aws_route_table_association" "cluster" {
  subnet_id      = aws_subnet.cluster.id
  route_table_id = aws_route_table.cluster.id
}

resource "aws_security_group" "cluster" {
  name        = "${local.name}-cluster"
  description = "citc ${var.cluster_id}: all traffic between members of the cluster"
  vpc_id      = aws_vpc.cluster.id

  ingress {
    description = "everything from the cluster's own members"
    protocol    = "-1"
    from_port   = 0
    to_port     = 0
    self        = true
  }

  egress {
    description = "everything outbound"
    protocol    = "-1"
    from_port   = 0
    to_port     = 0
    cidr_blocks = ["0.0.0.0/0"]
  }

  tags = merge(local.tags, { Name = "${local.name}-cluster" })
}

resource "aws_security_group" "ssh" {
  name        = "${local.name}-ssh"
  description = "citc ${var.cluster_id}: SSH to the management node"
  vpc_id      = aws_vpc.cluster.id

  ingress {
    description = "SSH"
    protocol    = "tcp"
    from_port   = 22
    to_port     = 22
    cidr_blocks = [var.ssh_cidr]
  }

  tags = merge(local.tags, { Name = "${local.name}-ssh" })
}
