# The management node's identity, used by the node programs (`citc node resume|suspend`): a dynamic
# group holding just this instance, and a policy limited to the cluster's compartment that lets it
# launch and terminate instances, attach their boot volumes, place their VNICs in the subnet and read
# images. OCI policies can only be conditioned on defined tags (which need a tenancy-wide namespace),
# not on freeform tags: within the compartment, the node driver (not built yet) has to check the
# cluster tag itself before terminating anything. For a tighter fence, give each cluster its own compartment.
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
  description    = "citc ${var.cluster_id}: start and stop compute nodes"
  freeform_tags  = local.tags
  statements = [
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to manage instance-family in compartment id ${var.compartment_ocid}",
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to use volume-family in compartment id ${var.compartment_ocid}",
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to use virtual-network-family in compartment id ${var.compartment_ocid}",
    "Allow dynamic-group ${oci_identity_dynamic_group.mgmt.name} to read app-catalog-listing in compartment id ${var.compartment_ocid}",
  ]
}
