// AWS compute images (cloud-image-builder.ts says what is shared): amazon-ebs from the management
// node's AMI (the other architecture: the newest AMI of the same owner and name pattern), in the
// cluster's subnet and security group; listed, counted and deregistered through the AWS CLI here.
import {CitcError} from '../../errors.js'
import type {Arch} from '../../shapes/types.js'
import {archFromTag, cloudImageBuilder, GIB, type CloudImageApi, type CloudImagePaths} from '../cloud-image-builder.js'
import {sweepContextFor} from '../cloud-cluster.js'
import type {ImageBuilderContext, ImageBuilderFactory, ImageRecord} from '../image-types.js'
import {nodeDriverVars} from '../node-driver-vars.js'
import {parseToolJson} from '../sweep.js'
import type {AwsNodeConfig} from './node-config.js'
import {awsTool} from './sweep.js'

/** Build machines: small, one per architecture (Graviton for arm64). */
const INSTANCE_TYPE: Record<Arch, string> = {x86_64: 't3a.medium', arm64: 't4g.medium'}

interface Tag {
  Key?: string
  Value?: string
}
interface AwsImage {
  ImageId: string
  Name?: string
  CreationDate?: string
  Architecture?: string
  Tags?: Tag[]
  BlockDeviceMappings?: Array<{Ebs?: {SnapshotId?: string; VolumeSize?: number}}>
}

const tag = (tags: Tag[] | undefined, key: string) => tags?.find((t) => t.Key === key)?.Value

/** Ubuntu's and Debian's AMI names carry the architecture as amd64/arm64. */
export function otherArchNameFilter(nameFilter: string, arch: Arch): string {
  return arch === 'arm64' ? nameFilter.replace(/amd64/g, 'arm64') : nameFilter.replace(/arm64/g, 'amd64')
}

/** cloud.pkr.hcl's aws_* variables for a build. Pure. */
export function awsPackerVars(d: AwsNodeConfig, arch: Arch) {
  const owner = d.baseImage.owner
  if (!owner) throw new CitcError('remote', "this cluster's Terraform outputs do not say who owns the management node's AMI (base_image.owner)", {hint: 're-run `citc create --resume` to read the outputs again'})
  const sameArch = (d.baseImage.architecture ?? 'x86_64') === arch
  if (!sameArch && !d.baseImage.nameFilter) {
    throw new CitcError('invalidInput', `the management node's AMI is ${d.baseImage.architecture}, and citc does not know how to find its ${arch} counterpart (no base_image.name_filter output)`)
  }
  return {
    aws_region: d.region,
    aws_subnet_id: d.subnetId,
    aws_security_group_id: d.securityGroupId,
    aws_instance_type: INSTANCE_TYPE[arch],
    aws_source_ami_owner: owner,
    // The same AMI as the management node, or the newest of its kind for the other architecture.
    aws_source_ami_id: sameArch ? d.baseImage.id : '*',
    aws_source_ami_name: sameArch ? '*' : otherArchNameFilter(d.baseImage.nameFilter ?? '', arch),
  }
}

export function awsImageApi(ctx: ImageBuilderContext): CloudImageApi {
  const {record} = ctx
  const aws = awsTool(sweepContextFor(record, {logFile: ctx.logFile, signal: ctx.signal}))
  const byCluster = `Name=tag:cluster,Values=${record.name}`
  const describe = async () => (parseToolJson('aws', await aws(['ec2', 'describe-images', '--owners', 'self', '--filters', byCluster])) as {Images?: AwsImage[]}).Images ?? []
  return {
    packerOnly: 'cloud.amazon-ebs.aws',
    vars: (build) => awsPackerVars(nodeDriverVars('aws', record.terraform?.outputs ?? {}, record.name) as AwsNodeConfig, build.arch),
    async images() {
      const out: ImageRecord[] = []
      for (const i of await describe()) {
        const version = tag(i.Tags, 'citc-image-version')
        const arch = archFromTag(tag(i.Tags, 'citc-image-arch') ?? i.Architecture)
        if (!version || !arch) continue // tagged with the cluster, but not an image citc built
        const gib = (i.BlockDeviceMappings ?? []).reduce((n, b) => n + (b.Ebs?.VolumeSize ?? 0), 0)
        out.push({name: i.Name ?? i.ImageId, version, arch, id: i.ImageId, createdAt: i.CreationDate ?? '', ...(gib > 0 ? {sizeBytes: gib * GIB} : {})})
      }
      return out
    },
    async nodes(images) {
      const r = parseToolJson('aws', await aws(['ec2', 'describe-instances', '--filters', byCluster, 'Name=instance-state-name,Values=pending,running,stopping,stopped'])) as {
        Reservations?: Array<{Instances?: Array<{ImageId?: string}>}>
      }
      const nameOf = new Map(images.map((i) => [i.id, i.name]))
      const counts = new Map<string, number>()
      for (const res of r.Reservations ?? [])
        for (const i of res.Instances ?? []) {
          const name = nameOf.get(i.ImageId)
          if (name) counts.set(name, (counts.get(name) ?? 0) + 1)
        }
      return counts
    },
    async delete(image) {
      // Deregistering leaves the AMI's snapshots (and their cost) behind: they go too.
      const snapshots = (await describe()).find((i) => i.ImageId === image.id)?.BlockDeviceMappings?.flatMap((b) => (b.Ebs?.SnapshotId ? [b.Ebs.SnapshotId] : [])) ?? []
      await aws(['ec2', 'deregister-image', '--image-id', image.id ?? image.name])
      for (const s of snapshots) await aws(['ec2', 'delete-snapshot', '--snapshot-id', s])
    },
  }
}

/** The builder with its paths on the management node (tests give a sandbox's). */
export const createAwsImageBuilder = (ctx: ImageBuilderContext, paths?: CloudImagePaths) => cloudImageBuilder(ctx, awsImageApi(ctx), paths)

export const awsImageBuilder: ImageBuilderFactory = (ctx) => createAwsImageBuilder(ctx)
