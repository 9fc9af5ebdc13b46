// The resume program's GPU check: a node of a GPU shape whose image is recorded without the NVIDIA
// driver fails at once as a config failure (DOWN with a reason that names the command to run), and
// only the other nodes reach the driver — instead of slurmd failing on a missing /dev/nvidia0 and
// Slurm waiting ResumeTimeout.
import {describe, expect, it} from 'vitest'

import type {BootImage, NodeDriver, NodeSpec} from '../../../../src/lib/providers/types.js'
import {refuseWithoutGpuDriver, specFromState} from '../../../../src/lib/tasks/node/node-programs.js'

const NO_DRIVER = {name: 'citc-slurm-compute-demo-v20261126053000', version: '20261126053000', gpuDriver: null}

/** A driver that boots `images[arch]`, counting how often it was asked. */
function driverBooting(images: Record<string, BootImage | undefined>) {
  const asked: string[] = []
  const driver: Pick<NodeDriver, 'bootImage'> = {
    bootImage: (arch) => {
      asked.push(arch)
      return images[arch]
    },
  }
  return {driver, asked}
}

describe('refuseWithoutGpuDriver', () => {
  const gpu = (name: string, arch = 'x86_64'): NodeSpec => ({name, shape: 'g6.xlarge', arch, gpus: 1})
  const cpu = (name: string): NodeSpec => ({name, shape: 'c5.xlarge', arch: 'x86_64'})

  it('fails the GPU nodes of an image without a driver as config failures, and hands the rest to the driver', () => {
    const {driver, asked} = driverBooting({x86_64: NO_DRIVER, arm64: {...NO_DRIVER, name: 'arm', gpuDriver: '580'}})
    const {refused, rest} = refuseWithoutGpuDriver([cpu('demo-c5-0001'), gpu('demo-g6-0001'), gpu('demo-g6-0002'), gpu('demo-g5g-0001', 'arm64')], driver, () => {})
    const reason = 'citc: config: image v20261126053000 has no GPU driver; run citc rebuild-image'
    expect(refused).toEqual(
      ['demo-g6-0001', 'demo-g6-0002'].map((name) => ({name, ok: false, error: reason, failure: {class: 'config', code: 'NoGpuDriver', message: reason}, attempts: 0})),
    )
    expect(rest.map((s) => s.name)).toEqual(['demo-c5-0001', 'demo-g5g-0001'])
    // Once per architecture, not per node.
    expect(asked).toEqual(['x86_64', 'arm64'])
  })

  it('refuses nothing when the driver is recorded, not recorded, or the driver has no image to tell of', () => {
    for (const image of [{...NO_DRIVER, gpuDriver: '535 (Debian 12)'}, {name: 'old', version: '20250101000000'}, undefined]) {
      const {refused, rest} = refuseWithoutGpuDriver([gpu('demo-g6-0001')], driverBooting({x86_64: image}).driver, () => {})
      expect(refused).toEqual([])
      expect(rest).toHaveLength(1)
    }
    // A driver without bootImage (local: its nodes use this machine's driver).
    expect(refuseWithoutGpuDriver([gpu('n1')], {}, () => {}).refused).toEqual([])
  })

  it('an unreadable image record skips the check (logged): the driver reports what is wrong at the start', () => {
    const lines: string[] = []
    const broken = {
      bootImage: () => {
        throw new Error('/etc/citc/images.json is not JSON')
      },
    }
    const {refused, rest} = refuseWithoutGpuDriver([gpu('n1'), gpu('n2')], broken, (m) => lines.push(m))
    expect(refused).toEqual([])
    expect(rest).toHaveLength(2)
    expect(lines).toEqual(["could not read the x86_64 image's record (/etc/citc/images.json is not JSON); starting without the GPU check"])
  })

  it("reads a node's GPUs from its Gres, next to shape, AD and arch from its features", () => {
    const state = (gres?: string) => ({name: 'n', state: ['IDLE'], features: 'shape=g6.xlarge,ad=1,arch=x86_64', gres})
    expect(specFromState(state('gpu:l4:1'))).toEqual({name: 'n', shape: 'g6.xlarge', ad: 1, arch: 'x86_64', gpus: 1})
    expect(specFromState(state('(null)'))).toEqual({name: 'n', shape: 'g6.xlarge', ad: 1, arch: 'x86_64'})
  })
})
