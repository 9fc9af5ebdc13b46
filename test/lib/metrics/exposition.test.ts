import {describe, expect, it} from 'vitest'

import {escapeLabelValue, renderExposition, sampleLine, samplesByName} from '../../../src/lib/metrics/exposition.js'

describe('the text exposition format', () => {
  it('escapes backslash, double quote and newline in label values', () => {
    expect(escapeLabelValue('a\\b"c\nd')).toBe('a\\\\b\\"c\\nd')
    expect(sampleLine('m', {reason: 'say "hi"'}, 1)).toBe('m{reason="say \\"hi\\""} 1')
    expect(sampleLine('m', {}, NaN)).toBe('m NaN')
  })

  it('writes HELP and TYPE once per family, sorts samples, skips empty families', () => {
    const text = renderExposition([
      {name: 'b', type: 'gauge', help: 'B\nline', lines: ['b{x="2"} 2', 'b{x="1"} 1']},
      {name: 'a_total', type: 'counter', help: 'A', lines: []},
    ])
    expect(text).toBe('# HELP b B\\nline\n# TYPE b gauge\nb{x="1"} 1\nb{x="2"} 2\n')
  })

  it('refuses a counter without _total (citc bug, promtool would refuse it)', () => {
    expect(() => renderExposition([{name: 'jobs', type: 'counter', help: 'x', lines: ['jobs 1']}])).toThrow(/_total/)
  })

  it('reads a file back by metric name', () => {
    const m = samplesByName('# HELP a x\n# TYPE a gauge\na{k="v"} 1\na 2\nb 3\n')
    expect(Object.fromEntries(m)).toEqual({a: ['a{k="v"} 1', 'a 2'], b: ['b 3']})
  })
})
