# The management node's identity, used by the node programs (`citc node resume|suspend|sync`,
# src/lib/providers/oracle/oci-api.ts) and by Packer's oracle-oci image builds
# (templates/packer/cloud.pkr.hcl, use_instance_principals): a dynamic group holding just this
# instance, and a policy limited to the cluster's compartment (where its VCN, subnet and compute nodes
# are). What each statement is for (test/lib/providers/oracle/iam.test.ts checks the driver's needs,
# ORACLE_DRIVER_PERMISSIONS in oci-api.ts, and Packer's against these statements):
#   manage instance-family          driver: ListInstances, LaunchInstance, TerminateInstance, reading
#                                   the compute image; Packer: launch, GetVnic of the build machine,
#                                   CreateImage, terminate, tag the image.
#   use volume-family               the boot volume a launch creates (and terminate deletes:
#                                   preserveBootVolume=false).
#   use virtual-network-family      the VNIC a launch places in the cluster's subnet, and its address.
# No app-catalog-listing: both launch from images (the platform base image, the cluster's own compute
# images), never from Marketplace listings — and listings are granted in the tenancy, not here.
#
# OCI policies can only be conditioned on defined tags (which need a tenancy-wide namespace), not on
# freeform tags: within the compartment, the node driver checks the cluster tag itself before
# terminating anything (it terminates by id, from its own listing filtered by cluster=<id> and
# type=compute). For a tighter fence, give each cluster its own compartment.
#
# Dynamic groups live in the tenancy: creating them needs tenancy-level rights.

resource "oci_identity_dynamic_group" "mgmt" {
  compartment_id = var.tenancy_ocid
  name           = "${local.name}-mgmt"
  description    = "citc ${var.cluster_id}: the management node"
  matching_rule  = "ALL {instance.id = '${oci_core_instance.mgmt.id}'}"
  freeform_tags  = local.tags
}

resource "oci_identity_policy" "node_programs" {
  compartment_id = var.compartment_ocid
  name           = "${local.name}-node-programs"
  description    = "citc ${var.cluster_id}: start and stop compute nodes, build compute images"
  freeform_tags  = local.tags
  statements = [
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to manage instance-family in compartment id ${var.compartment_ocid}",
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to use volume-family in compartment id ${var.compartment_ocid}",
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to use virtual-network-family in compartment id ${var.compartment_ocid}",
  ]
}
