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

  # The custom role must exist before the node programs first run. (No depends_on Filestore: its
  # export names this node's address, storage.tf, so it is made after the node; citc runs the
  # playbook that mounts /mnt/shared only once the whole apply is done.)
  depends_on = [google_project_iam_member.node_programs]
}
