// `citc finish` and the image its GPU shapes boot: the plan names the shapes whose image has no GPU
// driver and the command that builds one; --yes refuses to bring GPUs onto them (exit 3, before
// anything changed) unless --without-gpu-image; a local cluster (its nodes use this machine's driver)
// and a configuration without GPUs never ask for the images.
import {describe, expect, it} from 'vitest'

import type {CitcError} from '../../../../src/lib/errors.js'
import type {NodeGroup} from '../../../../src/lib/slurm/nodes.js'
import {applyQuestion, gpuImageLines, gpuImageNotice, gpuImageRefusal} from '../../../../src/lib/tasks/finish/gpu-image.js'

const group = (shape: string, gpus = 0, arch: 'x86_64' | 'arm64' = 'x86_64') =>
  ({shape, arch, count: 2, ...(gpus > 0 ? {gpu: {count: gpus, model: 'l4'}} : {})}) as unknown as NodeGroup
const NO_DRIVER = {name: 'citc-slurm-compute-demo-v20261126053000', version: '20261126053000', arch: 'x86_64' as const, gpuDriver: null}

function builder(current: Array<typeof NO_DRIVER | {name: string; version: string; arch: 'x86_64'; gpuDriver?: string | null}>, gpuDriverInImage = true) {
  let made = 0
  return {
    made: () => made,
    make: async () => {
      made++
      return {gpuDriverInImage, currentImages: async () => current}
    },
  }
}

describe('gpuImageNotice', () => {
  it("names the GPU shapes whose architecture's image has no driver, and the command", async () => {
    const b = builder([NO_DRIVER])
    const n = await gpuImageNotice('demo', [group('c5.xlarge'), group('g6.xlarge', 1)], b.make)
    expect(n).toEqual({shapes: ['g6.xlarge'], images: [{name: NO_DRIVER.name, version: '20261126053000', arch: 'x86_64'}], command: 'citc rebuild-image -c demo'})
    expect(gpuImageLines(n!).join('\n')).toBe(
      '! GPU shapes g6.xlarge: the image their nodes boot, v20261126053000 (x86_64), has no GPU driver. They fail to start\n' +
        '  (DOWN, "has no GPU driver") until `citc rebuild-image -c demo` builds one with it, after this configuration is applied.',
    )
  })

  it('asks nothing without GPU shapes; says nothing for an image with the driver, or for local images', async () => {
    const none = builder([NO_DRIVER])
    expect(await gpuImageNotice('demo', [group('c5.xlarge')], none.make)).toBeUndefined()
    expect(none.made()).toBe(0)
    expect(await gpuImageNotice('demo', [group('g6.xlarge', 1)], builder([{...NO_DRIVER, gpuDriver: '580'}]).make)).toBeUndefined()
    expect(await gpuImageNotice('demo', [group('g6.xlarge', 1)], builder([NO_DRIVER], false).make)).toBeUndefined()
  })
})

describe('gpuImageRefusal', () => {
  const notice = {shapes: ['BM.GPU.H100.8'], images: [{name: NO_DRIVER.name, version: '20261126053000', arch: 'x86_64'}], command: 'citc rebuild-image -c demo'}
  const brings = {gpus: [{shape: 'BM.GPU.H100.8 (AD 1)', after: 'gpu:h100:8'}]}

  it('refuses --yes that brings GPUs onto a shape whose image has no driver: exit 3, saying how to go on', () => {
    const e = gpuImageRefusal(notice, brings, {yes: true, withoutGpuImage: false, cluster: 'demo'}) as CitcError
    expect(e.exitCode).toBe(3)
    expect(e.message).toBe('nothing changed: the GPU shapes BM.GPU.H100.8 would boot image v20261126053000 (x86_64), which has no GPU driver, so their nodes could not start')
    expect(e.hint).toContain('citc finish -c demo --without-gpu-image --yes')
    expect(e.hint).toContain('citc rebuild-image -c demo')
  })

  it('goes on with --without-gpu-image, when asked interactively, or when the change brings no GPUs', () => {
    expect(gpuImageRefusal(notice, brings, {yes: true, withoutGpuImage: true, cluster: 'demo'})).toBeUndefined()
    expect(gpuImageRefusal(notice, brings, {yes: false, withoutGpuImage: false, cluster: 'demo'})).toBeUndefined()
    expect(gpuImageRefusal(notice, {gpus: []}, {yes: true, withoutGpuImage: false, cluster: 'demo'})).toBeUndefined()
    expect(gpuImageRefusal(notice, {gpus: [{shape: 'BM.GPU.H100.8 (AD 1)', before: 'gpu:h100:8'}]}, {yes: true, withoutGpuImage: false, cluster: 'demo'})).toBeUndefined()
    expect(gpuImageRefusal(undefined, brings, {yes: true, withoutGpuImage: false, cluster: 'demo'})).toBeUndefined()
  })

  it('the question says what a yes leaves to do', () => {
    expect(applyQuestion('demo', notice)).toBe('Apply this configuration to demo? Its GPU nodes fail to start until `citc rebuild-image -c demo` has run')
    expect(applyQuestion('demo', undefined)).toBe('Apply this configuration to demo?')
  })
})
