# The management node's identity, used by the node programs (`citc node resume|suspend`), with only
# what they need: a custom role (create and delete instances and their disks, set their metadata,
# labels and tags, use the cluster's subnet, read images and zones; and build the compute images with
# Packer, which citc runs on the management node), granted on the project under a
# condition: instances and disks only when their name starts with "<cluster_id>-" (compute nodes are
# named <cluster_id>-<shape>-NNNN), never the management node itself.

# A deleted custom role keeps its ID for up to 44 days: a random suffix lets a cluster of the same
# name be created again at once.
resource "random_id" "role" {
  byte_length = 3
}

resource "google_project_iam_custom_role" "node_programs" {
  project     = var.project
  role_id     = "citc_${replace(var.cluster_id, "-", "_")}_${random_id.role.hex}"
  title       = "citc ${var.cluster_id} node programs"
  description = "Start and stop the compute nodes of citc cluster ${var.cluster_id}"
  # Exactly what the node driver's calls need (src/lib/providers/google/compute-api.ts,
  # GOOGLE_NODE_PERMISSIONS) and what Packer's googlecompute build of the compute images needs
  # (image-builder.ts, GOOGLE_IMAGE_BUILD_PERMISSIONS); a test checks the list equals their union.
  # Not granted: compute.zoneOperations.list (only bulkInsert's per-node errors need it: the driver
  # makes one instances.insert per node), iam.serviceAccounts.actAs (compute nodes and the build
  # machine get no service account), compute.images.delete (citc deletes images with the admin's gcloud).
  permissions = [
    # node driver: instances.insert (and what its fields need), list, get, delete, zoneOperations.wait
    "compute.instances.create",
    "compute.instances.delete",
    "compute.instances.get",
    "compute.instances.list",
    "compute.instances.setLabels",
    "compute.instances.setMetadata",
    "compute.instances.setTags",
    "compute.disks.create",
    "compute.subnetworks.use",
    "compute.images.useReadOnly",
    "compute.zoneOperations.get",
    # Packer: the source image, zone and machine type looked up; the build machine's boot disk kept
    # after the machine is deleted, made into the image (a global operation), labelled, its deprecation
    # status set, then deleted
    "compute.images.get",
    "compute.images.getFromFamily",
    "compute.zones.get",
    "compute.machineTypes.get",
    "compute.disks.useReadOnly",
    "compute.disks.delete",
    "compute.images.create",
    "compute.images.setLabels",
    "compute.images.deprecate",
    "compute.globalOperations.get",
  ]
}

resource "google_service_account" "mgmt" {
  account_id   = local.service_account_id
  display_name = "citc ${var.cluster_id} management node"
  description  = "The node programs of citc cluster ${var.cluster_id}"
}

# IAM conditions have no regular expressions: the fence is the name prefix "<cluster_id>-". citc refuses
# to create a cluster whose name is another's (same project) followed by "-…" (create-cloud-input.ts
# nameClash), as the two would reach each other's nodes.
resource "google_project_iam_member" "node_programs" {
  project = var.project
  role    = google_project_iam_custom_role.node_programs.id
  member  = "serviceAccount:${google_service_account.mgmt.email}"

  condition {
    title       = "citc ${var.cluster_id} compute nodes only"
    description = "Instances and disks named ${var.cluster_id}-*, except the management node"
    expression = join(" || ", [
      "!(resource.type in ['compute.googleapis.com/Instance', 'compute.googleapis.com/Disk'])",
      "((resource.name.extract('/instances/{name}').startsWith('${var.cluster_id}-') || resource.name.extract('/disks/{name}').startsWith('${var.cluster_id}-')) && !resource.name.endsWith('/${var.cluster_id}-mgmt'))",
    ])
  }
}
