// Local image builds with and without the cached base, before and after, in one run (the machine is
// noisy and shared), with no cluster: each build is citc's own buildImage (images/build.ts) and local
// image builder — Packer, mmdebstrap, compute.yml, the customisation script — into a temp directory,
// as `citc rebuild-image` runs them on a local cluster's management node (without the command's own
// start, lock and pruning: bench/images.ts times whole commands on a live cluster).
// "before" is another citc's build (a built checkout, e.g. main's: every build runs mmdebstrap);
// "after" is this one's: a fresh build (its base removed first) and one where only the script changed.
// Root; this machine needs packer, mmdebstrap, ansible-core and the slurmctld package (its version is
// the image's). Touches nothing of a cluster's (its own temp dir under /var/tmp, removed at the end).
// Run: npx tsx bench/image-base.ts --before DIR [--builds N=2] [--steps]
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {join, resolve} from 'node:path'
import {performance} from 'node:perf_hooks'

const argv = process.argv.slice(2)
const option = (name: string) => {
  const i = argv.indexOf(name)
  return i === -1 ? undefined : argv[i + 1]
}
const BEFORE = option('--before')
const BUILDS = Number(option('--builds') ?? 2)
/** --steps: print each build's steps (its citc-step lines) with the second each began, to see where a build's time goes. */
const STEPS = argv.includes('--steps')
if (!BEFORE) throw new Error('image-base bench: give --before DIR, a built checkout of the citc to compare with (npm run build there)')

const version = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'slurmctld'], {encoding: 'utf8'}).stdout.trim()
if (!version) throw new Error('image-base bench: no slurmctld package on this machine (the image takes its Slurm version)')

interface Citc {
  build(version: number, script: string | undefined): Promise<number>
  images: string
}

/** The citc built in `dir` (its dist/), building into `images`. */
async function citcIn(dir: string, images: string): Promise<Citc> {
  const lib = (p: string) => import(join(resolve(dir), 'dist/lib', p))
  const {buildImage} = await lib('images/build.js')
  const {localImages} = await lib('providers/local/image-builder.js')
  const {localTransport} = await lib('transport/local.js')
  const {gpuImageVars} = await lib('images/gpu.js')
  const inputs = await lib('images/inputs.js')
  const {PACKAGE_ROOT} = await lib('package-root.js')
  const builder = localImages('bench', async () => ({sharedDir: '/mnt/shared'}), {imagesDir: images, runDir: join(images, '.run')})
  const playbookVars = {...(await builder.playbookVars()), ...gpuImageVars([])}
  // As inputsStep gives it; an older citc has no baseInputsDigest (and no base).
  const baseInputs = inputs.baseInputsDigest?.({packageRoot: PACKAGE_ROOT, slurmVersion: version, arch: 'x86_64', playbookVars})
  return {
    images,
    async build(n, script) {
      let file: string | undefined
      if (script !== undefined) writeFileSync((file = join(images, `..`, `script-${n}-${Math.random().toString(36).slice(2)}.sh`)), script, {mode: 0o700})
      const t0 = performance.now()
      const lines: string[] = []
      try {
        await buildImage(builder, {
          cluster: 'bench',
          arch: 'x86_64',
          inputs: `bench-${n}`,
          baseInputs,
          slurmVersion: version,
          playbookVars,
          scriptOnManagement: file,
          management: localTransport(),
          signal: AbortSignal.timeout(1_800_000),
          now: new Date(Date.UTC(2026, 0, 1, 0, 0, n)),
          onLine: (l: string) => {
            lines.push(l)
            if (STEPS && l.includes('citc-step:')) console.log(`  ${dir === '.' ? 'after' : 'before'} build ${n} +${((performance.now() - t0) / 1000).toFixed(1)} s ${l.slice(l.indexOf('citc-step:') + 11)}`)
          },
        })
      } catch (error) {
        throw new Error(`${dir}: build ${n} failed: ${(error as Error).message}\n${lines.slice(-30).join('\n')}`)
      }
      return (performance.now() - t0) / 1000
    },
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const fmt = (xs: number[]) => `median ${median(xs).toFixed(1)} s [${xs.map((x) => x.toFixed(1)).join(', ')}]`

const work = mkdtempSync('/var/tmp/citc-bench-image-base-')
try {
  const before = await citcIn(BEFORE, join(work, 'before'))
  const after = await citcIn('.', join(work, 'after'))
  const t = {beforeFresh: [] as number[], beforeScript: [] as number[], afterFresh: [] as number[], afterScript: [] as number[]}
  let n = 0
  const script = () => `#!/bin/sh\necho "benchmark ${++n}" > /etc/citc-bench\n`
  for (let round = 0; round < BUILDS; round++) {
    // A before that keeps bases too (a citc since the bases came) builds fresh only without its own.
    rmSync(join(before.images, '.bases'), {recursive: true, force: true})
    t.beforeFresh.push(await before.build(++n, undefined))
    // A fresh build: no base to copy (mmdebstrap and compute.yml run, then the image links the base).
    rmSync(join(after.images, '.bases'), {recursive: true, force: true})
    t.afterFresh.push(await after.build(++n, undefined))
    t.beforeScript.push(await before.build(++n, script()))
    t.afterScript.push(await after.build(++n, script()))
    console.log(`round ${round + 1}: before fresh ${t.beforeFresh.at(-1)!.toFixed(1)} s, after fresh ${t.afterFresh.at(-1)!.toFixed(1)} s, before script-only ${t.beforeScript.at(-1)!.toFixed(1)} s, after script-only ${t.afterScript.at(-1)!.toFixed(1)} s`)
  }
  console.log(`fresh build (no script):           before ${fmt(t.beforeFresh)}  after ${fmt(t.afterFresh)}  after/before ${(median(t.afterFresh) / median(t.beforeFresh)).toFixed(2)}`)
  console.log(`rebuild, only the script changed:  before ${fmt(t.beforeScript)}  after ${fmt(t.afterScript)}  after/before ${(median(t.afterScript) / median(t.beforeScript)).toFixed(2)}`)
  console.log(`(before: ${resolve(BEFORE)}; after: this checkout; Slurm ${version}; load average now ${spawnSync('cat', ['/proc/loadavg'], {encoding: 'utf8'}).stdout.trim()})`)
} finally {
  spawnSync('rm', ['-rf', '--one-file-system', work])
}
