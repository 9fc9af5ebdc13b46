// Compute-node images on a local cluster: build time (a fresh image, then one where only the
// customisation script changed), image size, and how long a node takes to start from the image
// compared with this machine's own slurmd (what nodes ran before images).
// Needs a local cluster on this machine (citc create --provider local --yes) and root; takes the
// machine lock through bench/locked.ts. Leaves the cluster as it found it (same current image).
// Run: npx tsx bench/locked.ts npx tsx bench/images.ts [cluster] [runs=5]
import {spawnSync} from 'node:child_process'
import {readFileSync, readlinkSync, renameSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

const CLUSTER = process.argv[2] ?? JSON.parse(run('./bin/run.js', ['cluster', 'list', '--json']).stdout).clusters[0].name
const RUNS = Number(process.argv[3] ?? 5)
const IMAGES = `/var/lib/citc/images/${CLUSTER}`
const env = {...process.env, SLURM_CONF: '/etc/slurm/slurm.conf'}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function run(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, {env, encoding: 'utf8', timeout: 1_200_000})
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`)
  return r
}

function rebuild(args: string[]): {seconds: number; name: string; sizeMB: number} {
  const t0 = performance.now()
  const image = JSON.parse(run('./bin/run.js', ['rebuild-image', '-c', CLUSTER, '--yes', '--json', ...args]).stdout).image
  return {seconds: (performance.now() - t0) / 1000, name: image.name, sizeMB: Math.round(image.sizeBytes / 1e6)}
}

const state = (node: string) => /State=(\S+)/.exec(run('scontrol', ['show', 'node', node]).stdout)![1]

async function until(what: string, probe: () => boolean, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

/** The node programs' log (made by the first of them). */
function elasticLog(): string {
  try {
    return readFileSync('/var/log/citc/elastic.log', 'utf8')
  } catch {
    return ''
  }
}

/** One power-up of `node`: seconds from the request to IDLE, and the driver's launch → slurmd up (elastic.log). */
async function startOnce(node: string): Promise<{toIdle: number; launch: number}> {
  await until(`${node} powered down`, () => state(node).includes('POWERED_DOWN'))
  const logBefore = elasticLog().length
  const t0 = performance.now()
  run('scontrol', ['update', `NodeName=${node}`, 'State=POWER_UP'])
  await until(`${node} up`, () => /^IDLE(\+CLOUD)?$/.test(state(node))) // not POWERING_UP any more
  const toIdle = (performance.now() - t0) / 1000
  // slurmd registers a moment before the resume program logs it up.
  await until(`${node} logged up`, () => elasticLog().slice(logBefore).includes(`${node}: slurmd is up`), 10_000)
  const log = elasticLog().slice(logBefore)
  const at = (re: RegExp) => Date.parse(log.split('\n').find((l) => re.test(l))!.split(' ')[0])
  const launch = (at(new RegExp(`${node}: slurmd is up`)) - at(new RegExp(`${node}: started slurmd`))) / 1000
  run('scontrol', ['update', `NodeName=${node}`, 'State=POWER_DOWN_FORCE'])
  return {toIdle, launch}
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (xs: number[]) => `median ${median(xs).toFixed(2)} s (${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)})`

const original = readlinkSync(join(IMAGES, 'current'))
const script = '/tmp/citc-bench-image-script.sh'
writeFileSync(script, '#!/bin/sh\necho "benchmark $(date)" > /etc/citc-bench\n')
try {
  const fresh = rebuild(['--script', 'none', '--keep', '10'])
  console.log(`fresh build: ${fresh.seconds.toFixed(1)} s, image ${fresh.sizeMB} MB (du)`)
  const scripted = rebuild(['--script', script, '--keep', '10'])
  console.log(`rebuild, only the script changed: ${scripted.seconds.toFixed(1)} s, image ${scripted.sizeMB} MB`)
  run('./bin/run.js', ['rebuild-image', '-c', CLUSTER, '--rollback', original.replace(/^.*-v/, ''), '--yes'])

  const node = JSON.parse(run('./bin/run.js', ['nodes', '-c', CLUSTER, '--json']).stdout).nodes.at(-1).name as string
  const fromImage: Array<{toIdle: number; launch: number}> = []
  for (let i = 0; i < RUNS; i++) fromImage.push(await startOnce(node))
  // This machine's own slurmd, as before images: the driver falls back to it when there is no `current`.
  renameSync(join(IMAGES, 'current'), join(IMAGES, 'current.bench-off'))
  const fromHost: Array<{toIdle: number; launch: number}> = []
  try {
    for (let i = 0; i < RUNS; i++) fromHost.push(await startOnce(node))
  } finally {
    renameSync(join(IMAGES, 'current.bench-off'), join(IMAGES, 'current'))
  }
  console.log(`node start, launch → slurmd up (driver):  image ${fmt(fromImage.map((r) => r.launch))}; host slurmd ${fmt(fromHost.map((r) => r.launch))}`)
  console.log(`node start, POWER_UP → IDLE (Slurm):       image ${fmt(fromImage.map((r) => r.toIdle))}; host slurmd ${fmt(fromHost.map((r) => r.toIdle))}`)
  console.log(`overhead of booting the image (medians):   launch ${(median(fromImage.map((r) => r.launch)) - median(fromHost.map((r) => r.launch))).toFixed(2)} s, to IDLE ${(median(fromImage.map((r) => r.toIdle)) - median(fromHost.map((r) => r.toIdle))).toFixed(2)} s`)
} finally {
  console.log(`(cluster ${CLUSTER}; current image back to ${readlinkSync(join(IMAGES, 'current'))})`)
}
