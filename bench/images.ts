// Compute-node images on a local cluster: build time (a fresh image, then one where only the
// customisation script changed), image size, and how long a node takes to start from the image
// compared with this machine's own slurmd (what nodes ran before images).
// Builds, before and after, in one run (the machine is noisy and shared): "after" is this citc — its
// fresh build without a base (the cluster's bases removed first: mmdebstrap and compute.yml run) and its
// script-only rebuild (the base copied); "before" is another citc's (--before DIR: a built checkout, e.g.
// main's), whose every build runs mmdebstrap. The builds alternate, `builds` rounds of them.
// Needs a local cluster on this machine (citc create --provider local --yes) and root; takes the
// machine lock through bench/locked.ts. Leaves the cluster as it found it (same current image, no script; the images built stay: prune them with a rebuild).
// Run: npx tsx bench/locked.ts npx tsx bench/images.ts [cluster] [runs=5] [--before DIR] [--builds N=2] [--no-starts]
import {spawnSync} from 'node:child_process'
import {readFileSync, readlinkSync, renameSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

const argv = process.argv.slice(2)
function option(name: string): string | undefined {
  const i = argv.indexOf(name)
  if (i === -1) return undefined
  const [, value] = argv.splice(i, 2)
  return value
}
const BEFORE = option('--before')
const BUILDS = Number(option('--builds') ?? 2)
const STARTS = !argv.includes('--no-starts')
const positional = argv.filter((a) => !a.startsWith('--'))
const CLUSTER = positional[0] ?? JSON.parse(run('./bin/run.js', ['cluster', 'list', '--json']).stdout).clusters[0].name
const RUNS = Number(positional[1] ?? 5)
const IMAGES = `/var/lib/citc/images/${CLUSTER}`
const env = {...process.env, SLURM_CONF: '/etc/slurm/slurm.conf'}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

function run(cmd: string, args: string[]) {
  const r = spawnSync(cmd, args, {env, encoding: 'utf8', timeout: 1_200_000})
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`)
  return r
}

/** One `rebuild-image` by the citc in `dir` (this one: '.'): its seconds, image and size. */
function rebuild(dir: string, args: string[]): {seconds: number; name: string; sizeMB: number} {
  const t0 = performance.now()
  const image = JSON.parse(run(join(dir, 'bin/run.js'), ['rebuild-image', '-c', CLUSTER, '--yes', '--json', ...args]).stdout).image
  return {seconds: (performance.now() - t0) / 1000, name: image.name, sizeMB: Math.round(image.sizeBytes / 1e6)}
}

let scripts = 0
/** A customisation script unlike every earlier one (so each build is a script change). */
function newScript(): string {
  const file = `/tmp/citc-bench-image-script-${++scripts}.sh`
  writeFileSync(file, `#!/bin/sh\necho "benchmark ${scripts} $(date)" > /etc/citc-bench\n`)
  return file
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
// Every build keeps all the images there are (the cluster's before the bench, and each built since), so the
// original one is still there to roll back to at the end: --keep counts those, plus this run's builds.
const KEEP = String(JSON.parse(run('./bin/run.js', ['rebuild-image', '-c', CLUSTER, '--list', '--json']).stdout).images.length + 4 * BUILDS + 2)
const fmtRun = (xs: number[]) => `${fmt(xs)} [${xs.map((x) => x.toFixed(1)).join(', ')}]`
try {
  const after = {fresh: [] as number[], script: [] as number[]}
  const before = {fresh: [] as number[], script: [] as number[]}
  let size = 0
  for (let round = 0; round < BUILDS; round++) {
    if (BEFORE) before.fresh.push(rebuild(BEFORE, ['--script', 'none', '--keep', KEEP]).seconds)
    // A fresh build: no base to copy (mmdebstrap and compute.yml run, then the copy).
    rmSync(join(IMAGES, '.bases'), {recursive: true, force: true})
    const fresh = rebuild('.', ['--script', 'none', '--keep', KEEP])
    after.fresh.push(fresh.seconds)
    size = fresh.sizeMB
    if (BEFORE) before.script.push(rebuild(BEFORE, ['--script', newScript(), '--keep', KEEP]).seconds)
    after.script.push(rebuild('.', ['--script', newScript(), '--keep', KEEP]).seconds)
  }
  console.log(`image ${size} MB (du)`)
  console.log(`fresh build (no base):              after  ${fmtRun(after.fresh)}`)
  console.log(`rebuild, only the script changed:   after  ${fmtRun(after.script)}`)
  if (BEFORE) {
    console.log(`fresh build:                        before ${fmtRun(before.fresh)}   after/before ${(median(after.fresh) / median(before.fresh)).toFixed(2)}`)
    console.log(`rebuild, only the script changed:   before ${fmtRun(before.script)}   after/before ${(median(after.script) / median(before.script)).toFixed(2)}`)
  }
  // The cluster's stored script is the last build's: none again (a build from the base), then its image back.
  rebuild('.', ['--script', 'none', '--keep', KEEP])
  run('./bin/run.js', ['rebuild-image', '-c', CLUSTER, '--rollback', original.replace(/^.*-v/, ''), '--yes'])

  if (STARTS) {
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
  }
} finally {
  console.log(`(cluster ${CLUSTER}; current image back to ${readlinkSync(join(IMAGES, 'current'))}; seconds are whole \`citc rebuild-image\` runs)`)
}
