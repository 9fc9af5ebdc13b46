// A local image's base (the root filesystem before the customisation script): its key changes with
// everything that goes into it (images/inputs.ts baseInputsDigest, then the apt sources) and not with
// the script; the bases pruning keeps are exactly the kept images'; an old base is built again.
import {cpSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, describe, expect, it} from 'vitest'

import {baseInputsDigest, imageInputsDigest} from '../../../../src/lib/images/inputs.js'
import {baseExpired, baseKey, prunableBases} from '../../../../src/lib/providers/local/image-bases.js'

const ROOT = join(import.meta.dirname, '..', '..', '..', '..')
const SOURCES = {'sources.list': 'deb http://deb.debian.org/debian bookworm main\n'}
/** The key the local builder gives a base: the image steps' digest, then the apt sources. */
const keyOf = (i: typeof inputs & {script?: string; sources?: Record<string, string>}) => baseKey(baseInputsDigest(i), i.sources ?? SOURCES)

const temps: string[] = []
afterAll(() => {
  for (const d of temps) rmSync(d, {recursive: true, force: true})
})

/** citc's templates and playbooks copied to a temp dir, to change one file of them. */
function packageCopy(): string {
  const d = mkdtempSync(join(tmpdir(), 'citc-base-key-'))
  temps.push(d)
  cpSync(join(ROOT, 'playbooks'), join(d, 'playbooks'), {recursive: true})
  cpSync(join(ROOT, 'templates', 'packer'), join(d, 'templates', 'packer'), {recursive: true})
  return d
}

const inputs = {
  packageRoot: ROOT,
  slurmVersion: '22.05.8-4+deb12u3',
  arch: 'x86_64',
  playbookVars: {provider: 'local', cluster_name: 'demo', shared_dir: '/mnt/shared', compute_gpu: false} as Record<string, unknown>,
}

describe("an image base's key", () => {
  it('is the same for the same inputs, whatever the order of the variables and sources', () => {
    const k = keyOf(inputs)
    expect(k).toMatch(/^[0-9a-f]{16}$/)
    expect(keyOf({...inputs, playbookVars: {compute_gpu: false, shared_dir: '/mnt/shared', cluster_name: 'demo', provider: 'local'}})).toBe(k)
    expect(keyOf({...inputs, sources: {'sources.list.d/x.list': '', ...SOURCES}})).not.toBe(k) // a new file is a new input
  })

  it('does not change when only the customisation script does (the image digest does)', () => {
    // The base's inputs have no script: the same base serves images with any script.
    const withScript = {...inputs, script: 'apt-get install -y hello\n'}
    expect(keyOf(withScript)).toBe(keyOf(inputs))
    expect(imageInputsDigest(withScript)).not.toBe(imageInputsDigest(inputs))
  })

  it('changes with the Slurm version, the architecture, each playbook variable and the apt sources (mirror, suite)', () => {
    const k = keyOf(inputs)
    const changed = [
      {...inputs, slurmVersion: '22.05.8-4+deb12u4'},
      {...inputs, arch: 'arm64'},
      {...inputs, playbookVars: {...inputs.playbookVars, shared_dir: '/srv/shared'}},
      {...inputs, playbookVars: {...inputs.playbookVars, cluster_name: 'other'}},
      {...inputs, playbookVars: {...inputs.playbookVars, compute_gpu: true}},
      {...inputs, sources: {'sources.list': 'deb http://mirror.example/debian bookworm main\n'}},
      {...inputs, sources: {'sources.list': 'deb http://deb.debian.org/debian trixie main\n'}},
    ]
    const keys = changed.map((c) => keyOf(c))
    for (const key of keys) expect(key).not.toBe(k)
    expect(new Set(keys).size).toBe(keys.length)
  })

  it('changes with the package list (rootfs.sh), the base step (base.sh) and a compute role, not with a management-only role', () => {
    const copy = packageCopy()
    const there = {...inputs, packageRoot: copy}
    const k = keyOf(there)
    expect(k).toBe(keyOf(inputs))
    writeFileSync(join(copy, 'playbooks/roles/slurmdbd/tasks/main.yml'), '# changed\n')
    expect(keyOf(there)).toBe(k)
    const steps = ['templates/packer/local/rootfs.sh', 'templates/packer/local/base.sh', 'playbooks/roles/slurmd/tasks/main.yml', 'playbooks/roles/compute_image/tasks/main.yml']
    let last = k
    for (const f of steps) {
      writeFileSync(join(copy, f), `# changed ${f}\n`)
      const now = keyOf(there)
      expect(now, f).not.toBe(last)
      last = now
    }
  })
})

describe('which bases pruning deletes', () => {
  it('keeps the bases the remaining images record, deletes the others; images without a base keep none', () => {
    const images = [{base: 'aaaa'}, {base: 'aaaa'}, {base: 'bbbb'}, {}]
    expect(prunableBases(['aaaa', 'bbbb', 'cccc'], images)).toEqual(['cccc'])
    expect(prunableBases(['aaaa', 'bbbb'], [{base: 'bbbb'}])).toEqual(['aaaa'])
    expect(prunableBases(['aaaa'], [])).toEqual(['aaaa']) // no image left (the last one removed)
    expect(prunableBases([], images)).toEqual([])
  })
})

describe('when a base is built again', () => {
  const now = new Date('2026-11-26T12:00:00Z')
  it('after a week, or when its record is unreadable', () => {
    expect(baseExpired('2026-11-25T12:00:00Z', now)).toBe(false)
    expect(baseExpired('2026-11-19T12:00:01Z', now)).toBe(false)
    expect(baseExpired('2026-11-19T11:59:59Z', now)).toBe(true)
    expect(baseExpired(undefined, now)).toBe(true)
    expect(baseExpired('not a date', now)).toBe(true)
  })
})
