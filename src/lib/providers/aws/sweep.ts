// AWS leftovers by tag cluster=<id>: instances that are not terminated, images this account owns,
// and their snapshots — through the AWS CLI, with the profile/keys Terraform used.
import {parseToolJson, runTool, wants, type CloudSweeper, type LeftoverResource, type SweepContext} from '../sweep.js'

interface Tag {
  Key?: string
  Value?: string
}
const nameTag = (tags: Tag[] | undefined) => tags?.find((t) => t.Key === 'Name')?.Value

/** The AWS CLI in the cluster's region, with the profile/keys Terraform used, printing JSON. */
export function awsTool(ctx: SweepContext): (args: string[]) => Promise<string> {
  const env = {...ctx.env, AWS_PAGER: ''}
  return (args) => runTool({...ctx, env}, 'aws', [...args, '--region', ctx.region, '--output', 'json'])
}

export function awsSweeper(ctx: SweepContext): CloudSweeper {
  const aws = awsTool(ctx)
  const byTag = `Name=tag:cluster,Values=${ctx.clusterId}`
  return {
    tool: 'aws',
    async list(kinds) {
      const out: LeftoverResource[] = []
      if (wants(kinds, 'instance')) {
        const instances = parseToolJson('aws', await aws(['ec2', 'describe-instances', '--filters', byTag, 'Name=instance-state-name,Values=pending,running,stopping,stopped'])) as {
          Reservations?: Array<{Instances?: Array<{InstanceId: string; Tags?: Tag[]}>}>
        }
        for (const r of instances.Reservations ?? []) for (const i of r.Instances ?? []) out.push({kind: 'instance', id: i.InstanceId, name: nameTag(i.Tags)})
      }
      if (wants(kinds, 'image')) {
        const images = parseToolJson('aws', await aws(['ec2', 'describe-images', '--owners', 'self', '--filters', byTag])) as {Images?: Array<{ImageId: string; Name?: string}>}
        for (const i of images.Images ?? []) out.push({kind: 'image', id: i.ImageId, name: i.Name})
      }
      if (wants(kinds, 'snapshot')) {
        const snapshots = parseToolJson('aws', await aws(['ec2', 'describe-snapshots', '--owner-ids', 'self', '--filters', byTag])) as {
          Snapshots?: Array<{SnapshotId: string; Tags?: Tag[]}>
        }
        for (const s of snapshots.Snapshots ?? []) out.push({kind: 'snapshot', id: s.SnapshotId, name: nameTag(s.Tags)})
      }
      return out
    },
    async delete(r) {
      if (r.kind === 'instance') await aws(['ec2', 'terminate-instances', '--instance-ids', r.id])
      else if (r.kind === 'image') await aws(['ec2', 'deregister-image', '--image-id', r.id])
      else if (r.kind === 'snapshot') await aws(['ec2', 'delete-snapshot', '--snapshot-id', r.id])
      else throw new Error(`citc does not know how to delete an AWS ${r.kind}`)
    },
  }
}
