// The local provider's image build for real (root): Debian's Packer runs templates/packer/local.pkr.hcl,
// mmdebstrap makes the base and compute.yml configures it, the customisation script runs in a copy.
// A second build with only the script changed copies the base: Packer's output (the lines citc's steps
// print) shows no mmdebstrap. A build with no script links the base's files instead of copying them. The two images are the same in what matters: the same packages at the
// same versions, the same files with the same modes, owners, sizes and links (the script's own file
// apart), the same /etc/citc/image.json but for the name and version. Removing the images removes the
// base. Each run builds one base (~30-60 s): no test fixture makes this root filesystem (the machines'
// fixture, test/helpers/machines.ts, is another one: a machine's Debian, not a compute image).
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {buildImage} from '../../../../src/lib/images/build.js'
import {baseInputsDigest} from '../../../../src/lib/images/inputs.js'
import {gpuImageVars} from '../../../../src/lib/images/gpu.js'
import {localImages, type LocalImageRecord} from '../../../../src/lib/providers/local/image-builder.js'
import {localTransport} from '../../../../src/lib/transport/local.js'

const ROOT = join(import.meta.dirname, '..', '..', '..', '..')
const work = mkdtempSync('/var/tmp/citc-image-base-')
afterAll(() => {
  spawnSync('rm', ['-rf', '--one-file-system', work])
})

// Packer runs mmdebstrap and then ansible-playbook (compute.yml) in the base step: all three must be here.
beforeAll(() => {
  for (const [tool, args] of [['packer', ['version']], ['mmdebstrap', ['--version']], ['ansible-playbook', ['--version']]] as const) {
    const r = spawnSync(tool, [...args], {encoding: 'utf8'})
    if (r.status !== 0) throw new Error(`image-base test: ${tool} does not run here (${r.error?.message ?? r.stderr.trim()}); apt-get install packer mmdebstrap ansible-core`)
  }
})

function hostSlurmVersion(): string {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'slurmctld'], {encoding: 'utf8'})
  if (r.status !== 0 || !r.stdout.trim()) throw new Error(`image-base test: this machine has no slurmctld package (dpkg-query: ${r.stderr.trim()}); install slurmctld first`)
  return r.stdout.trim()
}

/** What matters in a root filesystem: every path with its type, mode, owner, group, links, size (files) and link target. */
function listing(rootfs: string, skip: string[]): string[] {
  const r = spawnSync('find', [rootfs, '-mindepth', '1', '-printf', '%P\t%y\t%m\t%U\t%G\t%n\t%l\t%s\n'], {encoding: 'utf8', maxBuffer: 256 * 1024 * 1024})
  if (r.status !== 0) throw new Error(`find ${rootfs}: ${r.stderr}`)
  return r.stdout
    .split('\n')
    .filter((l) => l && !skip.includes(l.split('\t')[0]))
    .map((l) => (l.split('\t')[1] === 'f' ? l : l.replace(/\t\d+$/, ''))) // a directory's size is how it grew, not what it holds
    .sort()
}

/** The installed packages and versions, from dpkg's own database. */
function packages(rootfs: string): string[] {
  return readFileSync(join(rootfs, 'var/lib/dpkg/status'), 'utf8')
    .split('\n\n')
    .filter((s) => /^Status: install ok installed$/m.test(s))
    .map((s) => `${/^Package: (.+)$/m.exec(s)![1]} ${/^Version: (.+)$/m.exec(s)![1]}`)
    .sort()
}

describe('local image base', () => {
  const imagesDir = join(work, 'images')
  const runDir = join(work, 'run')
  mkdirSync(runDir, {recursive: true})
  const images = localImages('imgbase', async () => ({sharedDir: '/mnt/shared'}), {imagesDir, runDir})
  const slurmVersion = hostSlurmVersion()

  async function build(version: string, script?: string): Promise<{record: LocalImageRecord; lines: string[]}> {
    const file = script === undefined ? undefined : join(work, `script-${version}.sh`)
    if (file) writeFileSync(file, script!, {mode: 0o700})
    const lines: string[] = []
    // What inputsStep gives a build: compute.yml's variables and the digest of what goes into the base.
    const playbookVars = {...(await images.playbookVars()), ...gpuImageVars([])}
    const record = await buildImage(images, {
      cluster: 'imgbase',
      arch: 'x86_64',
      inputs: `test-${version}`,
      slurmVersion,
      playbookVars,
      baseInputs: baseInputsDigest({packageRoot: ROOT, slurmVersion, arch: 'x86_64', playbookVars}),
      scriptOnManagement: file,
      management: localTransport(),
      signal: AbortSignal.timeout(900_000),
      now: new Date(`2026-01-0${version}T00:00:00Z`),
      onLine: (l) => lines.push(l),
    })
    return {record, lines}
  }

  it('a second build with only the script changed reuses the base; both images are the same but for the script', async () => {
    const a = await build('1', '#!/bin/sh\necho one > /etc/citc-test-script\n')
    expect(a.lines.some((l) => l.includes('citc-step: the Debian root filesystem (mmdebstrap)')), a.lines.slice(-20).join('\n')).toBe(true)
    expect(a.lines.some((l) => l.includes('citc-step: the base root filesystem (built:'))).toBe(true)
    expect(a.record.base).toMatch(/^[0-9a-f]{16}$/)
    const base = join(imagesDir, '.bases', a.record.base!)
    expect(readdirSync(join(imagesDir, '.bases'))).toEqual([a.record.base])

    const b = await build('2', '#!/bin/sh\necho two > /etc/citc-test-script\n')
    const joined = b.lines.join('\n')
    expect(joined).toContain(`citc-step: the base root filesystem (reused: ${base})`)
    expect(joined).not.toContain('mmdebstrap')
    expect(joined).not.toContain('compute.yml')
    expect(b.record.base).toBe(a.record.base)

    const rootA = join(imagesDir, a.record.name, 'rootfs')
    const rootB = join(imagesDir, b.record.name, 'rootfs')
    expect(readFileSync(join(rootA, 'etc/citc-test-script'), 'utf8')).toBe('one\n')
    expect(readFileSync(join(rootB, 'etc/citc-test-script'), 'utf8')).toBe('two\n')
    expect(packages(rootB)).toEqual(packages(rootA))
    expect(packages(rootA)).toEqual(expect.arrayContaining([`slurmd ${slurmVersion}`, `slurm-client ${slurmVersion}`]))
    // Built without dpkg's fsyncs (rootfs.sh: eatmydata), the image keeps nothing of it: no eatmydata,
    // dpkg not diverted, no unsafe-io setting for dpkg on the node.
    expect(packages(rootA).filter((p) => /eatmydata/.test(p))).toEqual([])
    expect(existsSync(join(rootA, 'usr/bin/eatmydata'))).toBe(false)
    const diversions = join(rootA, 'var/lib/dpkg/diversions')
    expect(existsSync(diversions) ? readFileSync(diversions, 'utf8') : '').not.toMatch(/\/usr\/bin\/dpkg\n/)
    expect(spawnSync('grep', ['-rl', 'unsafe-io', join(rootA, 'etc/dpkg')]).stdout.toString()).toBe('')
    expect(listing(rootB, [])).toEqual(listing(rootA, []))
    // The base itself is the images without the script's file (nothing else of the script's stays).
    expect(listing(base + '/rootfs', [])).toEqual(listing(rootA, ['etc/citc-test-script']))

    // compute_image's record: the base's build wrote it (to_nice_json); base.sh writes each image's name in the same format.
    expect(readFileSync(join(rootA, 'etc/citc/image.json'), 'utf8')).toBe(readFileSync(join(base, 'rootfs/etc/citc/image.json'), 'utf8'))
    const jsonA = JSON.parse(readFileSync(join(rootA, 'etc/citc/image.json'), 'utf8'))
    const jsonB = JSON.parse(readFileSync(join(rootB, 'etc/citc/image.json'), 'utf8'))
    expect(jsonB).toEqual({...jsonA, name: b.record.name, version: b.record.version})
    expect(jsonA).toMatchObject({name: a.record.name, version: a.record.version, cluster: 'imgbase', arch: 'x86_64'})

    // No script: the image links the base's files (nothing writes into them); its image.json is its own file.
    const c = await build('3')
    expect(c.lines.join('\n')).toContain('the base root filesystem (reused')
    const rootC = join(imagesDir, c.record.name, 'rootfs')
    expect(statSync(join(rootC, 'usr/sbin/slurmd')).ino).toBe(statSync(join(base, 'rootfs/usr/sbin/slurmd')).ino)
    expect(statSync(join(rootC, 'etc/citc/image.json')).ino).not.toBe(statSync(join(base, 'rootfs/etc/citc/image.json')).ino)
    expect(JSON.parse(readFileSync(join(rootC, 'etc/citc/image.json'), 'utf8'))).toEqual({...jsonA, name: c.record.name, version: c.record.version})
    expect(JSON.parse(readFileSync(join(base, 'rootfs/etc/citc/image.json'), 'utf8'))).toEqual(jsonA)
    expect(packages(rootC)).toEqual(packages(rootA))

    // Pruning: the base goes with the last image that records it.
    await images.remove(a.record)
    await images.remove(b.record)
    expect(readdirSync(join(imagesDir, '.bases'))).toEqual([a.record.base])
    await images.remove(c.record)
    expect(readdirSync(join(imagesDir, '.bases'))).toEqual([])
  }, 1_200_000)
})
