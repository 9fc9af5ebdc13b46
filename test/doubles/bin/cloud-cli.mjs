#!/usr/bin/env node
// TEST DOUBLE of the clouds' APIs — not AWS, Google Cloud or Oracle Cloud. These machines have no
// cloud to talk to, so tests put test/doubles/bin first on PATH: `aws`, `gcloud` and `oci` there are
// two-line wrappers that run this file, which answers the few commands citc's destroy sweep runs
// (src/lib/providers/{aws,google,oracle}/sweep.ts) with the JSON shapes the real CLIs print.
//
// The "cloud" is a JSON file, $CLOUD_DOUBLE_STATE:
//   {"resources": [{"provider": "aws", "kind": "instance", "id": "i-0abc", "name": "demo-node-1",
//                   "cluster": "demo", "zone": "us-east-1a"}, ...]}
// provider: aws | google | oracle; kind: instance | image | snapshot (aws). Deleting removes the entry.
// Optional, for the image builders (src/lib/providers/<cloud>/image-builder.ts): "tags" (the resource's
// tags / labels / freeform tags; "cluster" is then read from them), "created" (ISO time), "sizeGb",
// "arch", "snapshots" (an AMI's snapshot ids) and, on instances, "image" (the image id it runs).
//
// Environment:
//   CLOUD_DOUBLE_STATE=FILE   the resources (missing file: none)
//   CLOUD_DOUBLE_LOG=FILE     append "<tool> <args…>" per call
//   CLOUD_DOUBLE_LOG_ENV="A B"  and after it "env A=<value|unset> B=…" (what credentials it was given)
//   CLOUD_DOUBLE_FAIL=list|delete[:ID]  fail listing, or deleting (one resource, or every one)
import {appendFileSync, existsSync, readFileSync, writeFileSync} from 'node:fs'

const [tool, ...args] = process.argv.slice(2)
const provider = {aws: 'aws', gcloud: 'google', oci: 'oracle'}[tool]
const stateFile = process.env.CLOUD_DOUBLE_STATE
if (process.env.CLOUD_DOUBLE_LOG) {
  appendFileSync(process.env.CLOUD_DOUBLE_LOG, `${tool} ${args.join(' ')}\n`)
  const names = (process.env.CLOUD_DOUBLE_LOG_ENV ?? '').split(/\s+/).filter(Boolean)
  if (names.length > 0) appendFileSync(process.env.CLOUD_DOUBLE_LOG, `env ${names.map((n) => `${n}=${process.env[n] ?? '<unset>'}`).join(' ')}\n`)
}

const load = () => (stateFile && existsSync(stateFile) ? JSON.parse(readFileSync(stateFile, 'utf8')) : {resources: []})
const save = (s) => stateFile && writeFileSync(stateFile, JSON.stringify(s, null, 2))
const arg = (name) => {
  const i = args.indexOf(name)
  if (i >= 0) return args[i + 1]
  const eq = args.find((a) => a.startsWith(`${name}=`))
  return eq?.slice(name.length + 1)
}
const has = (...words) => words.every((w, i) => args[i] === w)
const fail = process.env.CLOUD_DOUBLE_FAIL ?? ''
const die = (message, code = 255) => {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}
const errorText = {
  aws: 'An error occurred (UnauthorizedOperation) when calling the API: You are not authorized to perform this operation.',
  google: 'ERROR: (gcloud) Some requests did not succeed: - Required permission denied',
  oracle: 'ServiceError: {"code": "NotAuthorizedOrNotFound", "message": "Authorization failed or requested resource not found.", "status": 404}',
}[provider]

const clusterOf = (r) => r.tags?.cluster ?? r.cluster
const tagsOf = (r) => r.tags ?? {cluster: r.cluster}
function listing(kind, cluster) {
  if (fail === 'list') die(errorText)
  return load().resources.filter((r) => r.provider === provider && r.kind === kind && clusterOf(r) === cluster)
}
function remove(kind, id) {
  if (fail === 'delete' || fail === `delete:${id}`) die(errorText)
  const s = load()
  const before = s.resources.length
  s.resources = s.resources.filter((r) => !(r.provider === provider && r.kind === kind && r.id === id))
  if (s.resources.length === before) die(`${tool}: ${kind} ${id} not found`)
  save(s)
}
const print = (v) => process.stdout.write(`${JSON.stringify(v, null, 2)}\n`)

if (tool === 'aws') {
  if (args.includes('--version')) {
    print('aws-cli/2.0.0-double')
    process.exit(0)
  }
  const cluster = /Name=tag:cluster,Values=([^ ]+)/.exec(args.join(' '))?.[1]
  const tags = (r) => [...Object.entries(tagsOf(r)).filter(([k]) => k !== 'Name').map(([Key, Value]) => ({Key, Value})), ...(r.name ? [{Key: 'Name', Value: r.name}] : [])]
  if (has('ec2', 'describe-instances')) print({Reservations: listing('instance', cluster).map((r) => ({Instances: [{InstanceId: r.id, ImageId: r.image, Tags: tags(r), State: {Name: 'running'}}]}))})
  else if (has('ec2', 'describe-images')) {
    print({
      Images: listing('image', cluster).map((r) => ({
        ImageId: r.id,
        Name: r.name,
        Tags: tags(r),
        ...(r.created ? {CreationDate: r.created} : {}),
        ...(r.arch ? {Architecture: r.arch} : {}),
        BlockDeviceMappings: (r.snapshots ?? []).map((id) => ({DeviceName: '/dev/sda1', Ebs: {SnapshotId: id, VolumeSize: r.sizeGb ?? 8}})),
      })),
    })
  }
  else if (has('ec2', 'describe-snapshots')) print({Snapshots: listing('snapshot', cluster).map((r) => ({SnapshotId: r.id, Tags: tags(r)}))})
  else if (has('ec2', 'terminate-instances')) {
    remove('instance', arg('--instance-ids'))
    print({TerminatingInstances: [{InstanceId: arg('--instance-ids'), CurrentState: {Name: 'shutting-down'}}]})
  } else if (has('ec2', 'deregister-image')) remove('image', arg('--image-id'))
  else if (has('ec2', 'delete-snapshot')) remove('snapshot', arg('--snapshot-id'))
  else die(`aws (test double): unknown command ${args.join(' ')}`, 2)
} else if (tool === 'gcloud') {
  const cluster = /labels\.cluster=([^ ]+)/.exec(args.join(' '))?.[1]
  if (has('compute', 'instances', 'list')) {
    print(listing('instance', cluster).map((r) => ({name: r.id, zone: `https://www.googleapis.com/compute/v1/projects/${arg('--project')}/zones/${r.zone}`, labels: tagsOf(r)})))
  } else if (has('compute', 'images', 'list')) {
    const project = arg('--project')
    print(
      listing('image', cluster).map((r) => ({
        name: r.id,
        selfLink: `https://www.googleapis.com/compute/v1/projects/${project}/global/images/${r.id}`,
        labels: tagsOf(r),
        ...(r.created ? {creationTimestamp: r.created} : {}),
        ...(r.sizeGb ? {diskSizeGb: String(r.sizeGb)} : {}),
        status: 'READY',
      })),
    )
  }
  else if (has('compute', 'instances', 'delete')) remove('instance', args[3])
  else if (has('compute', 'images', 'delete')) remove('image', args[3])
  else die(`gcloud (test double): unknown command ${args.join(' ')}`, 2)
} else if (tool === 'oci') {
  if (has('search', 'resource', 'structured-search')) {
    const cluster = /freeformTags\.value = '([^']+)'/.exec(arg('--query-text') ?? '')?.[1]
    const items = [...listing('instance', cluster), ...listing('image', cluster)].map((r) => ({
      identifier: r.id,
      'resource-type': r.kind === 'instance' ? 'Instance' : 'Image',
      'display-name': r.name ?? r.id,
      'lifecycle-state': r.kind === 'instance' ? 'RUNNING' : 'AVAILABLE',
      'freeform-tags': tagsOf(r),
      ...(r.created ? {'time-created': r.created} : {}),
    }))
    print({data: {items}})
  } else if (has('compute', 'instance', 'list')) {
    // Every instance of the compartment (the double has one), as the real CLI lists them.
    if (fail === 'list') die(errorText)
    const instances = load().resources.filter((r) => r.provider === 'oracle' && r.kind === 'instance')
    print({data: instances.map((r) => ({id: r.id, 'display-name': r.name ?? r.id, 'image-id': r.image, 'lifecycle-state': 'RUNNING', 'freeform-tags': tagsOf(r)}))})
  } else if (has('compute', 'instance', 'terminate')) remove('instance', arg('--instance-id'))
  else if (has('compute', 'image', 'delete')) remove('image', arg('--image-id'))
  else die(`oci (test double): unknown command ${args.join(' ')}`, 2)
} else {
  die(`cloud-cli.mjs: called as ${tool}`, 2)
}
