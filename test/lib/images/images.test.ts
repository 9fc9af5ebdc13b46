// Image names and versions, the inputs digest create compares, which images --keep deletes, which one
// --rollback picks, the --list table, and the --script checks.
import {cpSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {imageInputsDigest, computeRoles} from '../../../src/lib/images/inputs.js'
import {imageName, imageVersion, versionDate} from '../../../src/lib/images/naming.js'
import type {ImageInfo} from '../../../src/lib/providers/image-types.js'
import {readScriptFlag} from '../../../src/lib/tasks/rebuild-image/image-script.js'
import {prunable, spared} from '../../../src/lib/tasks/rebuild-image/image-steps.js'
import {imagesTable, rollbackTarget} from '../../../src/lib/tasks/rebuild-image/rebuild-image.js'

const ROOT = join(import.meta.dirname, '..', '..', '..')

const temps: string[] = []
/** A temp dir removed after the file's tests. */
function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix))
  temps.push(d)
  return d
}
afterAll(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

const image = (version: string, extra: Partial<ImageInfo> = {}): ImageInfo => ({
  name: imageName('demo', version),
  version,
  createdAt: '2026-11-23T13:45:02.000Z',
  arch: 'x86_64',
  current: false,
  nodes: 0,
  ...extra,
})

describe('names and versions', () => {
  it('a version is the UTC time to the second; the name is CitC’s', () => {
    expect(imageVersion(new Date('2026-01-02T03:04:05.999Z'))).toBe('20260102030405')
    expect(imageName('lab', '20260102030405')).toBe('citc-slurm-compute-lab-v20260102030405')
    expect(versionDate('20260102030405')).toBe('2026-01-02 03:04:05 UTC')
  })
})

describe('what goes into an image', () => {
  const base = {packageRoot: ROOT, slurmVersion: '22.05.8-4+deb12u3', arch: 'x86_64', playbookVars: {provider: 'local', cluster_name: 'demo', shared_dir: '/mnt/shared'}}

  it('compute.yml names its roles', () => {
    const roles = computeRoles(`- hosts: all\n  roles:\n    - slurmd\n    - role: nvidia_gpu\n      when: x\n`)
    expect(roles).toEqual(['slurmd', 'nvidia_gpu'])
  })

  it('the same inputs give the same digest; a script, the Slurm version, a variable or a compute role’s file change it', () => {
    const d = imageInputsDigest(base)
    expect(imageInputsDigest({...base, playbookVars: {shared_dir: '/mnt/shared', cluster_name: 'demo', provider: 'local'}})).toBe(d)
    expect(imageInputsDigest({...base, script: 'apt-get install -y hello\n'})).not.toBe(d)
    expect(imageInputsDigest({...base, slurmVersion: '22.05.9'})).not.toBe(d)
    expect(imageInputsDigest({...base, playbookVars: {...base.playbookVars, shared_dir: '/srv'}})).not.toBe(d)

    const copy = tempDir('citc-inputs-')
    cpSync(join(ROOT, 'playbooks'), join(copy, 'playbooks'), {recursive: true})
    cpSync(join(ROOT, 'templates', 'packer'), join(copy, 'templates', 'packer'), {recursive: true})
    const there = {...base, packageRoot: copy}
    const before = imageInputsDigest(there)
    expect(before).toBe(d)
    // A management-only role does not go into images; a compute role does.
    writeFileSync(join(copy, 'playbooks/roles/slurmdbd/tasks/main.yml'), '# changed\n')
    expect(imageInputsDigest(there)).toBe(before)
    writeFileSync(join(copy, 'playbooks/roles/slurmd/tasks/main.yml'), '# changed\n')
    expect(imageInputsDigest(there)).not.toBe(before)
  })
})

describe('--keep', () => {
  it('deletes the oldest beyond N per architecture, never the current one nor one a node runs', () => {
    const images = [
      image('20260105000000'),
      image('20260104000000', {current: true}),
      image('20260103000000'),
      image('20260102000000', {nodes: 2}),
      image('20260101000000'),
      image('20260101000000', {arch: 'arm64', name: 'arm'}),
    ]
    expect(prunable(images, 2).map((i) => i.version)).toEqual(['20260103000000', '20260101000000'])
    expect(prunable(images, 5)).toEqual([])
    // The current image stays even when older than N others.
    expect(prunable([image('3'), image('2'), image('1', {current: true})], 1).map((i) => i.version)).toEqual(['2'])
  })

  it('names what it keeps beyond N and why, instead of keeping it silently', () => {
    const images = [image('4', {name: 'v4'}), image('3', {name: 'v3', nodes: 2}), image('2', {name: 'v2', current: true}), image('1', {name: 'v1', nodes: 1})]
    expect(spared(images, 1)).toEqual([
      {name: 'v3', nodes: 2, current: false},
      {name: 'v2', nodes: 0, current: true},
      {name: 'v1', nodes: 1, current: false},
    ])
    expect(spared(images, 4)).toEqual([])
  })
})

describe('--rollback', () => {
  const images = [image('20260103000000', {current: true}), image('20260102000000'), image('20260101000000'), image('20260104000000', {arch: 'arm64'})]

  it('goes back to the image before the current one, or to the version named', () => {
    expect(rollbackTarget(images, 'x86_64').version).toBe('20260102000000')
    expect(rollbackTarget(images, 'x86_64', '20260101000000').version).toBe('20260101000000')
  })

  it('refuses what it cannot do, saying why', () => {
    expect(() => rollbackTarget(images, 'x86_64', '2026')).toThrow(/14 digits/)
    expect(() => rollbackTarget(images, 'x86_64', '20250101000000')).toThrow(/no x86_64 image has version 20250101000000/)
    expect(() => rollbackTarget(images, 'x86_64', '20260103000000')).toThrow(/current already/)
    expect(() => rollbackTarget([image('20260101000000', {current: true})], 'x86_64')).toThrow(/no x86_64 image older than the current one/)
  })
})

describe('--list', () => {
  it('shows version, date, size, architecture, GPU driver, nodes, and which is current', () => {
    const text = imagesTable('demo', [
      image('20260104000000', {current: true, sizeBytes: 231_000_000, nodes: 2, gpuDriver: '580'}),
      image('20260103000000', {gpuDriver: '535 (Debian 12)'}),
      image('20260102000000', {gpuDriver: null}),
    ])
    expect(text.split('\n')).toEqual([
      '   VERSION         BUILT                    SIZE    ARCH    GPU DRIVER       NODES  NAME',
      '*  20260104000000  2026-01-04 00:00:00 UTC  231 MB  x86_64  580              2      citc-slurm-compute-demo-v20260104000000',
      '   20260103000000  2026-01-03 00:00:00 UTC  ?       x86_64  535 (Debian 12)  0      citc-slurm-compute-demo-v20260103000000',
      '   20260102000000  2026-01-02 00:00:00 UTC  ?       x86_64  none             0      citc-slurm-compute-demo-v20260102000000',
      '',
      '* current: new nodes start from it',
    ])
    expect(imagesTable('demo', [])).toMatch(/no compute-node image yet: `citc rebuild-image -c demo` builds one/)
  })

  it('says when an image was built before citc recorded its driver', () => {
    const text = imagesTable('demo', [image('20260102000000', {current: true})])
    expect(text.split('\n')[1]).toMatch(/x86_64  \?           0/)
    expect(text).toMatch(/GPU DRIVER \?: built before citc recorded the driver/)
  })
})

describe('--script', () => {
  it('reads a script, takes `none` as removing it, and refuses what cannot be one (located at the flag)', () => {
    const dir = tempDir('citc-script-')
    writeFileSync(join(dir, 'ok.sh'), '#!/bin/sh\napt-get install -y hello\n')
    writeFileSync(join(dir, 'empty.sh'), '  \n')
    expect(readScriptFlag(join(dir, 'ok.sh'))).toMatch(/hello/)
    expect(readScriptFlag('none')).toBeNull()
    expect(() => readScriptFlag(join(dir, 'missing.sh'))).toThrow(/--script .*missing\.sh: no such file/)
    expect(() => readScriptFlag(join(dir, 'empty.sh'))).toThrow(/the file is empty/)
    expect(() => readScriptFlag(dir)).toThrow(/cannot read it/)
  })
})

describe('--arch', () => {
  it('local builds only this machine’s architecture; the default is the only one a builder builds', async () => {
    const {archFor} = await import('../../../src/lib/tasks/rebuild-image/rebuild-image.js')
    const local = {provider: 'local'} as Parameters<typeof archFor>[0]
    expect(archFor(local, undefined, ['arm64'])).toBe('arm64')
    expect(() => archFor(local, 'x86_64', ['arm64'])).toThrow(/--arch x86_64: citc cannot build x86_64 images on local \(it builds arm64\)/)
    expect(() => archFor(local, 'sparc', ['x86_64'])).toThrow(/expected x86_64 or arm64/)
  })
})
