# One VPC network with one subnet. Inbound from outside: SSH to the management node only (firewall
# rule "ssh", selected by its network tag). Inside: everything between addresses of the subnet.
# Compute nodes have no public address: Cloud NAT gives them outbound access.

resource "google_compute_network" "cluster" {
  name                    = local.name
  description             = "citc cluster ${var.cluster_id}"
  auto_create_subnetworks = false
}

resource "google_compute_subnetwork" "cluster" {
  name                     = local.name
  region                   = var.region
  network                  = google_compute_network.cluster.id
  ip_cidr_range            = var.subnet_cidr
  private_ip_google_access = true

  lifecycle {
    precondition {
      condition     = startswith(var.zone, "${var.region}-")
      error_message = "zone ${var.zone} is not in region ${var.region}."
    }
  }
}

resource "google_compute_firewall" "ssh" {
  name          = "${local.name}-ssh"
  description   = "citc ${var.cluster_id}: SSH to the management node"
  network       = google_compute_network.cluster.id
  direction     = "INGRESS"
  source_ranges = [var.ssh_cidr]
  target_tags   = [local.mgmt_tag]

  allow {
    protocol = "tcp"
    ports    = ["22"]
  }
}

resource "google_compute_firewall" "internal" {
  name          = "${local.name}-internal"
  description   = "citc ${var.cluster_id}: all traffic inside the cluster's subnet"
  network       = google_compute_network.cluster.id
  direction     = "INGRESS"
  source_ranges = [var.subnet_cidr]

  allow {
    protocol = "all"
  }
}

resource "google_compute_router" "cluster" {
  name    = local.name
  region  = var.region
  network = google_compute_network.cluster.id
}

resource "google_compute_router_nat" "cluster" {
  name                               = local.name
  router                             = google_compute_router.cluster.name
  region                             = var.region
  nat_ip_allocate_option             = "AUTO_ONLY"
  source_subnetwork_ip_ranges_to_nat = "ALL_SUBNETWORKS_ALL_IP_RANGES"
}
