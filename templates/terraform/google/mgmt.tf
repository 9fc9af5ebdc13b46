# The management node: slurmctld, LDAP, the node programs. Its first boot (cloud-init) only authorizes
# the admin's key and installs the SSH host key citc generated; citc then configures it over SSH.

data "google_compute_image" "base" {
  project = local.image.project
  family  = local.image.family
}

resource "google_compute_address" "mgmt" {
  name   = "${local.name}-mgmt"
  region = var.region
  labels = local.labels
}

# The management node's private address, reserved: Filestore's export options name it (storage.tf) as
# the one client whose root is not squashed. Reserving the address an existing management node already
# has (host 2 of the subnet, what Google gives the first instance) keeps that node as it is.
resource "google_compute_address" "mgmt_internal" {
  name         = "${local.name}-mgmt-internal"
  region       = var.region
  subnetwork   = google_compute_subnetwork.cluster.id
  address_type = "INTERNAL"
  address      = local.mgmt_private_ip
  labels       = local.labels
}

resource "google_compute_instance" "mgmt" {
  name         = "${var.cluster_id}-mgmt"
  zone         = var.zone
  machine_type = var.mgmt_shape
  tags         = [local.mgmt_tag, local.cluster_tag]
  labels       = merge(local.labels, { type = "management" })

  boot_disk {
    initialize_params {
      image  = data.google_compute_image.base.self_link
      size   = var.mgmt_disk_gb
      type   = "pd-balanced"
      labels = local.labels
    }
  }

  network_interface {
    subnetwork = google_compute_subnetwork.cluster.id
    network_ip = google_compute_address.mgmt_internal.address
    access_config {
      nat_ip = google_compute_address.mgmt.address
    }
  }

  metadata = {
    user-data = templatefile("${path.module}/cloud-init/mgmt.yaml.tftpl", {
      hostname              = "mgmt"
      admin_key             = var.ssh_public_key
      host_key              = var.ssh_host_key
      host_key_public       = var.ssh_host_key_public
      disable_gce_host_keys = true
    })
    # Keys come from cloud-init only: no project-wide keys, no OS Login accounts.
    block-project-ssh-keys = "TRUE"
    enable-oslogin         = "FALSE"
  }

  service_account {
    email  = google_service_account.mgmt.email
    scopes = ["cloud-platform"]
  }

  allow_stopping_for_update = true

  lifecycle {
    # A newer image in the family must not replace a running management node.
    ignore_changes = [boot_disk[0].initialize_params[0].image]
  }

  # Filestore must exist before the playbook mounts /mnt/shared; the custom role before the node
  # programs first run.
  depends_on = [google_filestore_instance.shared, google_project_iam_member.node_programs]
}
