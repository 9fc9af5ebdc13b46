import {describe, expect, it} from 'vitest'

import {editDistance} from '../../../src/lib/edit-distance.js'
import {catalogueFor} from '../../../src/lib/providers/catalogues.js'
import {suggestShapes} from '../../../src/lib/shapes/suggest.js'

describe('editDistance', () => {
  it('counts insertions, deletions, substitutions and adjacent swaps', () => {
    expect(editDistance('c5.xlarge', 'c5.xlarge')).toBe(0)
    expect(editDistance('c5.xlarg', 'c5.xlarge')).toBe(1)
    expect(editDistance('n1-standrad-2', 'n1-standard-2')).toBe(1)
    expect(editDistance('kitten', 'sitting')).toBe(3)
    expect(editDistance('', 'abc')).toBe(3)
    expect(editDistance('abc', '')).toBe(3)
  })
})

describe('suggestShapes', () => {
  const aws = catalogueFor('aws')
  const google = catalogueFor('google')
  const oracle = catalogueFor('oracle')

  it('catches size typos', () => {
    expect(suggestShapes(aws, 'c5.xlarg')[0]).toBe('c5.xlarge')
    expect(suggestShapes(aws, 'm5.2xlarg')[0]).toBe('m5.2xlarge')
    expect(suggestShapes(google, 'e2-mirco')).toEqual(['e2-micro'])
  })

  it('catches family typos', () => {
    expect(suggestShapes(google, 'n1-standrad-2')[0]).toBe('n1-standard-2')
    expect(suggestShapes(aws, 'c5n.xlarge')[0]).toBe('c5.xlarge')
    expect(suggestShapes(aws, 'g4d.xlarge')).toContain('g4dn.xlarge')
  })

  it('catches the wrong case first', () => {
    expect(suggestShapes(aws, 'T3a.Medium')[0]).toBe('t3a.medium')
    expect(suggestShapes(google, 'N2-Standard-4')[0]).toBe('n2-standard-4')
    expect(suggestShapes(oracle, 'vm.standard2.1')[0]).toBe('VM.Standard2.1')
  })

  it('points Oracle flex names, bare or out of limits, to the pattern of their family', () => {
    expect(suggestShapes(oracle, 'VM.Standard.E4.Flex')[0]).toBe('VM.Standard.E4.Flex.<ocpus>.<gb>')
    expect(suggestShapes(oracle, 'VM.Standard.E4.Flex.65.100')[0]).toBe('VM.Standard.E4.Flex.<ocpus>.<gb>')
    expect(suggestShapes(oracle, 'VM.Standard.E4.Flx.4.64')[0]).toBe('VM.Standard.E4.Flex.<ocpus>.<gb>')
    expect(suggestShapes(oracle, 'VM.Standard.A1.Flex.4')[0]).toBe('VM.Standard.A1.Flex.<ocpus>.<gb>')
  })

  it('returns at most max names, none for far-off names', () => {
    expect(suggestShapes(aws, 'c5.xlarg')).toHaveLength(3)
    expect(suggestShapes(aws, 'c5.xlarg', 1)).toEqual(['c5.xlarge'])
    expect(suggestShapes(aws, 'c5.xlarg', 0)).toEqual([])
    expect(suggestShapes(aws, 'definitely-not-a-shape')).toEqual([])
    expect(suggestShapes(aws, '')).toEqual([])
    expect(suggestShapes(google, 'c5.xlarge')).toEqual([])
  })
})
