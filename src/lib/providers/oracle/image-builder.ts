// Oracle Cloud compute images (cloud-image-builder.ts says what is shared): oracle-oci from the
// management node's image OCID, in the cluster's subnet and availability domain, Packer acting as the
// management node's instance principal; listed, counted and deleted through the OCI CLI here.
// Packer 1.6.6 cannot size a flexible shape (no shape_config), so builds use a fixed x86 shape and
// only the management node's own architecture.
import {CitcError} from '../../errors.js'
import type {Arch} from '../../shapes/types.js'
import {archFromTag, cloudImageBuilder, type CloudImageApi, type CloudImagePaths} from '../cloud-image-builder.js'
import {cloudOf, sweepContextFor} from '../cloud-cluster.js'
import type {ImageBuilderContext, ImageBuilderFactory, ImageRecord} from '../image-types.js'
import {nodeDriverVars} from '../node-driver-vars.js'
import {parseToolJson} from '../sweep.js'
import type {OracleNodeConfig} from './node-config.js'
import {ociTool, oracleToolContext} from './sweep.js'

/** A fixed (not flexible) x86 shape Packer 1.6.6 can launch. */
export const ORACLE_BUILD_SHAPE = 'VM.Standard2.1'

const GONE = new Set(['TERMINATED', 'TERMINATING', 'DELETED', 'DELETING'])

interface SearchItem {
  identifier: string
  'display-name'?: string
  'time-created'?: string
  'lifecycle-state'?: string
  'compartment-id'?: string
  'freeform-tags'?: Record<string, string>
}

/** cloud.pkr.hcl's oracle_* variables for a build. Pure. */
export function oraclePackerVars(d: OracleNodeConfig, arch: Arch) {
  if (arch !== 'x86_64') {
    throw new CitcError('usage', `citc cannot build ${arch} images on Oracle Cloud yet: Packer 1.6.6 cannot launch the flexible Ampere shapes (no shape_config)`, {
      hint: 'build x86_64 images (--arch x86_64), or run a newer Packer with the oracle plugin on the management node',
    })
  }
  return {
    oracle_compartment_ocid: d.compartmentId,
    oracle_availability_domain: d.availabilityDomain,
    oracle_subnet_ocid: d.subnetId,
    oracle_base_image_ocid: d.baseImage.id,
    oracle_shape: ORACLE_BUILD_SHAPE,
  }
}

export function oracleImageApi(ctx: ImageBuilderContext): CloudImageApi {
  const {record} = ctx
  const cloud = cloudOf(record).cloud
  const tc = oracleToolContext(sweepContextFor(record, {logFile: ctx.logFile, signal: ctx.signal}), cloud)
  const oci = ociTool(tc)
  const cluster = record.name.replace(/'/g, '')
  // The compartment chosen at create (the root one, the tenancy, when none was).
  const compartment = tc.compartment ?? String(record.terraform?.outputs?.compartment_id ?? '')
  const inCompartment = (c: string | undefined) => !compartment || !c || c === compartment
  return {
    packerOnly: 'cloud.oracle-oci.oracle',
    // Packer 1.6.6 launches only fixed shapes, and Oracle's arm64 shapes (Ampere A1) are all flexible.
    arches: ['x86_64'],
    vars: (build) => oraclePackerVars(nodeDriverVars('oracle', record.terraform?.outputs ?? {}, record.name) as OracleNodeConfig, build.arch),
    async images() {
      const query = `query image resources where (freeformTags.key = 'cluster' && freeformTags.value = '${cluster}')`
      const r = parseToolJson('oci', await oci(['search', 'resource', 'structured-search', '--query-text', query])) as {data?: {items?: SearchItem[]}}
      const out: ImageRecord[] = []
      for (const i of r.data?.items ?? []) {
        if (GONE.has(i['lifecycle-state'] ?? '') || !inCompartment(i['compartment-id'])) continue
        const version = i['freeform-tags']?.['citc-image-version']
        const arch = archFromTag(i['freeform-tags']?.['citc-image-arch'])
        if (!version || !arch) continue
        out.push({name: i['display-name'] ?? i.identifier, version, arch, id: i.identifier, createdAt: i['time-created'] ?? ''})
      }
      return out
    },
    async nodes(images) {
      const r = parseToolJson('oci', await oci(['compute', 'instance', 'list', '--compartment-id', compartment, '--all'])) as {
        data?: Array<{'image-id'?: string; 'lifecycle-state'?: string; 'freeform-tags'?: Record<string, string>}>
      }
      const nameOf = new Map(images.map((i) => [i.id, i.name]))
      const counts = new Map<string, number>()
      for (const i of r.data ?? []) {
        if (GONE.has(i['lifecycle-state'] ?? '') || i['freeform-tags']?.cluster !== record.name) continue
        const name = nameOf.get(i['image-id'])
        if (name) counts.set(name, (counts.get(name) ?? 0) + 1)
      }
      return counts
    },
    async delete(image) {
      await oci(['compute', 'image', 'delete', '--image-id', image.id ?? image.name, '--force'])
    },
  }
}

export const createOracleImageBuilder = (ctx: ImageBuilderContext, paths?: CloudImagePaths) => cloudImageBuilder(ctx, oracleImageApi(ctx), paths)

export const oracleImageBuilder: ImageBuilderFactory = (ctx) => createOracleImageBuilder(ctx)
