// limits.yaml with the local GPU shapes of a 4 × H100 + 1 × L4 machine (the real local catalogue, its GPUs
// given): a GPU belongs to one node, so a shape may not have more nodes than its devices allow, two shapes
// may not use the same device, and the GPUs of such a shape are not the user's to override.
import {describe, expect, it} from 'vitest'

import {parseLimits} from '../../../src/lib/config/limits.js'
import {InvalidInputError} from '../../../src/lib/errors.js'
import type {LocalGpu} from '../../../src/lib/providers/local/gpus.js'
import {localCatalogue} from '../../../src/lib/providers/local/shapes.js'

const gpu = (type: string, minor: number): LocalGpu => ({modelName: `NVIDIA ${type.toUpperCase()}`, type, minor, device: `/dev/nvidia${minor}`, bus: `0000:${minor}:00.0`})
const catalogue = localCatalogue({cpus: 64, cores: 32, memoryMiB: 256 * 1024, gpus: [gpu('h100', 0), gpu('h100', 1), gpu('l4', 2), gpu('h100', 3), gpu('h100', 4)]})
const lines = (...l: string[]) => l.join('\n') + '\n'
const parse = (text: string) => parseLimits(text, {file: 'limits.yaml', provider: 'local', catalogue, suggest: () => []})

function problems(text: string): string[] {
  try {
    parse(text)
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).hint).toMatch(/nothing was changed/)
    return (error as InvalidInputError).problems.map((p) => `${p.where} ${p.path ?? ''}: ${p.message}`)
  }
  throw new Error('expected an InvalidInputError')
}

describe('local GPU shapes in limits.yaml', () => {
  it('accepts one node per GPU, all GPUs in one node, and two types side by side', () => {
    expect(parse(lines('local.small: 4', 'local.h100x1: 4', 'local.l4x1: 1')).entries.map((e) => [e.shape, e.count])).toEqual([
      ['local.small', 4],
      ['local.h100x1', 4],
      ['local.l4x1', 1],
    ])
    expect(parse(lines('shapes:', '  local.h100x4: {count: 1, partitions: [gpu]}')).entries[0]).toMatchObject({shape: 'local.h100x4', count: 1})
  })

  it('refuses more nodes than the GPUs allow, at the count', () => {
    expect(problems(lines('local.small: 2', 'local.h100x1: 5'))).toEqual([
      'limits.yaml:2:1 local.h100x1: this machine has 4 h100 GPU(s): at most 4 node(s) of local.h100x1 (1 GPU(s) each); lower the count to 4',
    ])
    expect(problems(lines('shapes:', '  local.h100x4:', '    count: 2'))).toEqual([
      'limits.yaml:3:5 shapes["local.h100x4"].count: this machine has 4 h100 GPU(s): at most 1 node(s) of local.h100x4 (4 GPU(s) each); lower the count to 1',
    ])
  })

  it('refuses two shapes that would use the same GPU, naming both and the GPUs', () => {
    expect(problems(lines('local.h100x1: 4', 'local.l4x1: 1', 'local.h100x4: 1'))).toEqual([
      'limits.yaml:3:1 local.h100x4: local.h100x4 and local.h100x1 (limits.yaml:1:1) would both use /dev/nvidia0, /dev/nvidia1, /dev/nvidia3, /dev/nvidia4: ' +
        'this machine has 4 h100 GPU(s), and a GPU belongs to one node; keep one of the two shapes',
    ])
    // Even one node of each: both start with the first H100.
    expect(problems(lines('shapes:', '  local.h100x1: 1', '  local.h100x4: 1'))[0]).toMatch(
      /^limits\.yaml:3:3 shapes\["local\.h100x4"\]: local\.h100x4 and local\.h100x1 \(limits\.yaml:2:3\) would both use \/dev\/nvidia0: this machine has 4 h100 GPU\(s\)/,
    )
  })

  it('refuses a gpu: override on a shape whose GPUs are this machine\'s', () => {
    expect(problems(lines('shapes:', '  local.h100x1:', '    count: 1', '    gpu: {count: 2, model: h100}'))).toEqual([
      'limits.yaml:4:5 shapes["local.h100x1"].gpu: local.h100x1\'s GPUs are this machine\'s own (1 h100, from /dev/nvidia0, /dev/nvidia1, /dev/nvidia3, /dev/nvidia4); remove gpu: — pick another local.h100x… shape to change the GPUs per node',
    ])
    // A CPU shape may still be given GPUs by hand (as before: the user's own gres).
    expect(parse(lines('shapes:', '  local.large:', '    count: 1', '    gpu: {count: 1, model: t4}')).entries[0].gpu).toEqual({count: 1, model: 't4'})
  })

  it('reports every problem at once, in file order', () => {
    expect(problems(lines('local.h100x1: 9', 'local.h100x4: 2', 'local.l4x1: 1')).map((p) => p.split(' ')[0])).toEqual(['limits.yaml:1:1', 'limits.yaml:2:1'])
  })
})
