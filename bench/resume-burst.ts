// Resume burst: how close the AWS node driver runs to the cloud's rate limit when Slurm asks for many
// nodes at once, and whether every node gets an outcome. 1,000 nodes go to awsDriver(…).resume in one
// call, against the fake EC2 (test/doubles/cloud-api/ec2.ts, a TEST DOUBLE: there is no EC2 here) metering
// RunInstances like EC2's bucket as issue #11 gives it (5 requests/s, burst 20), on the real clock —
// so the driver's token bucket, drain-on-throttle and retries meet a real rate limit. Needs no cluster
// and no root; the fake listens on 127.0.0.1 and is closed at the end. Takes about 200 s.
// Run: npx tsx bench/resume-burst.ts [nodes=1000] [cloud req/s=5]
// A cloud rate below the driver's own 5/s (e.g. 4: other callers share the account's bucket) shows
// how drain-on-throttle and the retries cope when the driver's bucket is the more generous one.
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {awsDriver} from '../src/lib/providers/aws/driver.js'
import {realContext} from '../src/lib/providers/types.js'
import {startFakeEc2} from '../test/doubles/cloud-api/ec2.js'

const NODES = Number(process.argv[2] ?? 1000)
const RATE = {perSecond: Number(process.argv[3] ?? 5), burst: 20}
/** Longer than the ideal (NODES - burst) / rate, so the deadline is not what ends the run. */
const BUDGET_MS = Math.max(120_000, ((NODES - RATE.burst) / RATE.perSecond) * 1000 * 2)

// Only the fake IMDS may give credentials: none from this machine's environment or files.
const work = mkdtempSync(join(tmpdir(), 'citc-resume-burst-'))
for (const k of Object.keys(process.env)) if (k.startsWith('AWS_')) delete process.env[k]
process.env.AWS_SHARED_CREDENTIALS_FILE = join(work, 'no-credentials')
process.env.AWS_CONFIG_FILE = join(work, 'no-config')

const imagesJson = join(work, 'images.json')
writeFileSync(imagesJson, JSON.stringify({version: 1, current: {x86_64: {name: 'citc-bench-x86_64-v1', version: '1', id: 'ami-0bench00000000001'}}, inputs: {}}))

const fake = await startFakeEc2({rateLimit: RATE})
// The SDK reads its metadata service's address from here only (src/lib/stand-in.ts).
process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = fake.metadataUrl
try {
  const driver = awsDriver({
    cluster: 'bench',
    sharedDir: '/mnt/shared',
    confPath: '/etc/slurm/slurm.conf',
    section: {
      region: 'eu-west-2',
      zone: 'eu-west-2a',
      mgmtPrivateIp: '10.0.0.10',
      sharedFs: {host: '10.0.0.20', path: '/', type: 'nfs4', mountOptions: 'nfsvers=4.1'},
      vpcId: 'vpc-0bench',
      subnetId: 'subnet-0bench',
      securityGroupId: 'sg-0bench',
      nodeRoleArn: 'arn:aws:iam::123456789012:role/citc-bench-mgmt',
      baseImage: {id: 'ami-0base', os: 'ubuntu-24.04'},
    },
    standIn: {endpoints: {api: fake.url, metadata: fake.metadataUrl}, imagesJson},
  })
  const nodes = Array.from({length: NODES}, (_, n) => ({name: `bench-c5-${String(n + 1).padStart(4, '0')}`, shape: 'c5.xlarge', arch: 'x86_64'}))
  let retries = 0
  const ctx = realContext((m) => {
    if (/attempt \d+; again in/.test(m)) retries++
  }, BUDGET_MS)

  const t0 = performance.now()
  const outcomes = await driver.resume(nodes, ctx)
  const seconds = (performance.now() - t0) / 1000

  const byName = new Map(outcomes.map((o) => [o.name, o]))
  const lost = nodes.filter((n) => {
    const o = byName.get(n.name)
    return !o || (!o.ok && !o.error)
  }).length
  const failed = outcomes.filter((o) => !o.ok).length
  const runs = fake.requests.filter((r) => r.op === 'RunInstances')
  const accepted = fake.launches()
  const throttled = runs.filter((r) => r.status === 503).length
  const achieved = accepted / seconds
  const reasons = new Map<string, number>()
  for (const o of outcomes) if (!o.ok) reasons.set(o.error ?? '?', (reasons.get(o.error ?? '?') ?? 0) + 1)

  console.log(`wall ${seconds.toFixed(1)} s; RunInstances sent ${runs.length}, accepted ${accepted}, throttled (503) ${throttled}; driver retries ${retries}`)
  console.log(`ideal wall at ${RATE.perSecond}/s after a burst of ${RATE.burst}: ${((accepted - RATE.burst) / RATE.perSecond).toFixed(1)} s`)
  for (const [reason, n] of reasons) console.log(`failed ${n}: ${reason}`)
  if (fake.hookErrors.length > 0) console.log(`fake hook errors: ${fake.hookErrors.length}`)
  console.log(
    `resume-burst: ${NODES} nodes, ${RATE.perSecond} req/s allowed, ${achieved.toFixed(2)} req/s achieved (${((achieved / RATE.perSecond) * 100).toFixed(1)} % of allowed), lost ${lost}, failed ${failed}`,
  )
} finally {
  await fake.close()
  rmSync(work, {recursive: true, force: true})
}
