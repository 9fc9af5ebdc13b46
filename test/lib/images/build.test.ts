// One image build through a provider's builder, with the management node in memory: what Packer is
// given (its argv, the var file, compute.yml's variables), the step a failure names with its last
// lines, and that a failed or interrupted build is discarded and its files removed.
import {describe, expect, it} from 'vitest'

import {BuildProgress, buildImage} from '../../../src/lib/images/build.js'
import type {ImageBuilder, ImageRecord} from '../../../src/lib/providers/image-types.js'
import {MemoryTransport} from '../../doubles/memory-transport.js'

function fakeBuilder() {
  const seen: {collected: string[]; discarded: string[]; imageJson?: Record<string, unknown>} = {collected: [], discarded: []}
  const builder: ImageBuilder = {
    packerOnly: 'local.null.local',
    gpuDriverInImage: false,
    workDir: '/var/lib/citc/images/demo/.builds',
    packageRoot: async () => '/opt/citc',
    playbookVars: async () => ({provider: 'local', cluster_name: 'demo', shared_dir: '/mnt/shared'}),
    vars: async ({name, slurmVersion}) => ({output_dir: `/var/lib/citc/images/demo/${name}.partial`, slurm_version: slurmVersion}),
    collect: async ({name, version, arch, inputs, imageJson}) => {
      seen.collected.push(name)
      if (imageJson) seen.imageJson = imageJson
      return {name, version, arch, inputs, createdAt: '2026-11-23T13:45:02.000Z'} satisfies ImageRecord
    },
    discard: async ({name}) => {
      seen.discarded.push(name)
    },
    list: async () => [],
    currentImages: async () => [],
    use: async () => undefined,
    remove: async () => undefined,
  }
  return {builder, seen}
}

const NOW = new Date('2026-11-23T13:45:02.123Z')
const opts = (management: MemoryTransport, extra = {}) => ({
  cluster: 'demo',
  arch: 'x86_64' as const,
  inputs: 'abc123',
  slurmVersion: '22.05.8-4+deb12u3',
  playbookVars: {provider: 'local', cluster_name: 'demo', shared_dir: '/mnt/shared'},
  management,
  signal: new AbortController().signal,
  now: NOW,
  ...extra,
})

describe('buildImage', () => {
  it('names the image from the UTC time, gives Packer a var file and compute.yml its variables, and collects the result', async () => {
    const node = new MemoryTransport()
    let varFile = ''
    let playbookVars = ''
    node.on(['packer', 'build'], (argv, o) => {
      varFile = node.text(argv.find((a) => a.startsWith('-var-file='))!.slice('-var-file='.length))!
      const vars = JSON.parse(varFile)
      playbookVars = node.text(vars.playbook_vars_file)!
      o.onOutput?.('2026-11-23T13:45:03Z:     local.null.local: citc-step: compute.yml\n', 'stdout')
      return {exitCode: 0}
    })
    node.on(['rm', '-f'])
    const lines: string[] = []
    const {builder, seen} = fakeBuilder()
    const image = await buildImage(builder, opts(node, {scriptOnManagement: '/var/lib/citc/images/demo/.builds/compute-image-extra.sh', onLine: (l: string) => lines.push(l)}))

    expect(image).toMatchObject({name: 'citc-slurm-compute-demo-v20261123134502', version: '20261123134502', arch: 'x86_64', inputs: 'abc123'})
    const packer = node.commands().find((c) => c[0] === 'packer')!
    expect(packer).toEqual([
      'packer', 'build', '-color=false', '-timestamp-ui', '-only=local.null.local',
      '-var-file=/var/lib/citc/images/demo/.builds/citc-slurm-compute-demo-v20261123134502.pkrvars.json', '/opt/citc/templates/packer',
    ])
    expect(JSON.parse(varFile)).toEqual({
      cluster: 'demo',
      version: '20261123134502',
      image_name: 'citc-slurm-compute-demo-v20261123134502',
      arch: 'x86_64',
      playbooks_dir: '/opt/citc/playbooks',
      playbook_vars_file: '/var/lib/citc/images/demo/.builds/citc-slurm-compute-demo-v20261123134502.playbook-vars.json',
      script: '/var/lib/citc/images/demo/.builds/compute-image-extra.sh',
      manifest: '/var/lib/citc/images/demo/.builds/citc-slurm-compute-demo-v20261123134502.manifest.json',
      output_dir: '/var/lib/citc/images/demo/citc-slurm-compute-demo-v20261123134502.partial',
      slurm_version: '22.05.8-4+deb12u3',
    })
    expect(JSON.parse(playbookVars)).toEqual({
      provider: 'local',
      cluster_name: 'demo',
      shared_dir: '/mnt/shared',
      slurm_version: '22.05.8-4+deb12u3',
      citc_image: {name: 'citc-slurm-compute-demo-v20261123134502', version: '20261123134502', cluster: 'demo', arch: 'x86_64'},
    })
    expect(lines).toContain('citc-step: compute.yml')
    expect(seen).toEqual({collected: ['citc-slurm-compute-demo-v20261123134502'], discarded: []})
    // The var files do not outlive the build (0600 while they exist).
    expect(node.commands().at(-1)!.slice(0, 2)).toEqual(['rm', '-f'])
    expect(node.calls.filter((c) => c.op === 'writeFile').map((c) => c.mode)).toEqual([0o600, 0o600])
  })

  it("hands the image's own record, printed by the template's last step, to the builder", async () => {
    const node = new MemoryTransport()
    node.on(['packer', 'build'], (_argv, o) => {
      o.onOutput?.('2026-11-23T13:45:03Z:     cloud.amazon-ebs.aws: citc-image-json: {"name": "n", "gpu_driver": "580"}\n', 'stdout')
      return {exitCode: 0}
    })
    node.on(['rm', '-f'])
    const {builder, seen} = fakeBuilder()
    await buildImage(builder, opts(node))
    expect(seen.imageJson).toEqual({name: 'n', gpu_driver: '580'})
  })

  it('a failed build names its step and last lines (exit 4), and is discarded', async () => {
    const node = new MemoryTransport()
    node.on(['packer', 'build'], (_argv, o) => {
      o.onOutput?.(
        [
          '2026-11-23T13:45:03Z: ==> local.null.local: Running local shell script: /tmp/packer-shell1',
          '2026-11-23T13:45:03Z:     local.null.local: citc-step: compute.yml',
          '2026-11-23T13:45:04Z:     local.null.local: TASK [slurmd : Install slurmd and Slurm\'s clients] ****',
          '2026-11-23T13:45:05Z:     local.null.local: fatal: [/r]: FAILED! => {"msg": "no package slurmd=99"}',
          "2026-11-23T13:45:05Z: Build 'local.null.local' errored after 2 seconds: Erroneous exit code 2",
        ].join('\n'),
        'stdout',
      )
      return {exitCode: 1}
    })
    node.on(['rm', '-f'])
    const {builder, seen} = fakeBuilder()
    const error = (await buildImage(builder, opts(node)).then(
      () => undefined,
      (e: unknown) => e,
    )) as {kind: string; message: string; exitCode: number}
    expect(error.exitCode).toBe(4)
    expect(error.message).toMatch(/^image citc-slurm-compute-demo-v20261123134502 failed at compute\.yml \(task slurmd : Install slurmd and Slurm's clients\):/)
    expect(error.message).toContain('fatal: [/r]: FAILED! => {"msg": "no package slurmd=99"}')
    // Packer's own summary says less than the step's output: left out of the message (it is in the log).
    expect(error.message).not.toContain("Build 'local.null.local' errored")
    expect(seen).toEqual({collected: [], discarded: ['citc-slurm-compute-demo-v20261123134502']})
    expect(node.commands().at(-1)!.slice(0, 2)).toEqual(['rm', '-f'])
  })

  it('an interrupted build is discarded too', async () => {
    const node = new MemoryTransport()
    const ac = new AbortController()
    node.on(['packer', 'build'], async () => {
      ac.abort()
      throw Object.assign(new Error('cancelled'), {kind: 'cancelled'})
    })
    node.on(['rm', '-f'])
    const {builder, seen} = fakeBuilder()
    await expect(buildImage(builder, opts(node, {signal: ac.signal}))).rejects.toThrow(/cancelled/)
    expect(seen.discarded).toEqual(['citc-slurm-compute-demo-v20261123134502'])
  })
})

describe('BuildProgress', () => {
  it('follows citc-step markers, then Ansible tasks within them', () => {
    const p = new BuildProgress()
    expect(p.where()).toBe('starting Packer')
    p.push('2026-11-23T13:45:03Z:     local.null.local: citc-step: the Debian root filesystem (mmdebstrap)')
    expect(p.where()).toBe('the Debian root filesystem (mmdebstrap)')
    p.push('2026-11-23T13:45:03Z:     local.null.local: citc-step: compute.yml')
    p.push('2026-11-23T13:45:03Z:     local.null.local: TASK [nss : Write nslcd.conf] ***')
    expect(p.where()).toBe('compute.yml (task nss : Write nslcd.conf)')
    p.push('citc-step: the customisation script')
    expect(p.where()).toBe('the customisation script')
    expect(p.lastLines(1)).toEqual(['citc-step: the customisation script'])
  })
})
