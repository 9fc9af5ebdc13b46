import {describe, expect, it} from 'vitest'
import {z} from 'zod'

import {
  byPosition,
  didYouMean,
  formatPath,
  parseYamlDocument,
  zodProblems,
  type ZodProblemOptions,
} from '../../../src/lib/config/yaml.js'
import {InvalidInputError, type InputProblem} from '../../../src/lib/errors.js'

/** Fixtures as lines, so that line N of the file is the N-th argument. */
const lines = (...l: string[]) => l.join('\n') + '\n'

function problems(fn: () => unknown): InputProblem[] {
  try {
    fn()
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError)
    expect((error as InvalidInputError).exitCode).toBe(3)
    return (error as InvalidInputError).problems
  }
  throw new Error('expected an InvalidInputError')
}

describe('formatPath', () => {
  it('writes plain keys dotted, other keys JSON-quoted in brackets, indexes in brackets', () => {
    expect(formatPath([])).toBe('(the document)')
    expect(formatPath(['shapes', 'c5.xlarge', 'count'])).toBe('shapes["c5.xlarge"].count')
    expect(formatPath(['n1-standard-1'])).toBe('n1-standard-1')
    expect(formatPath(['shapes', 'g4dn.xlarge', 'features', 1])).toBe('shapes["g4dn.xlarge"].features[1]')
    expect(formatPath(['a b', 'say "hi"', ''])).toBe('["a b"]["say \\"hi\\""][""]')
    expect(formatPath([0, 'username'])).toBe('[0].username')
  })

  it('writes a dotted first key as typed (a shape at the top of limits.yaml), and brackets the key after it', () => {
    expect(formatPath(['local.medum'])).toBe('local.medum')
    expect(formatPath(['c5.xlarge'])).toBe('c5.xlarge')
    // Not VM.Standard2.1.2, which would read as one shape name.
    expect(formatPath(['VM.Standard2.1', '2'])).toBe('VM.Standard2.1["2"]')
    expect(formatPath(['VM.Standard2.1', '1.5'])).toBe('VM.Standard2.1["1.5"]')
    expect(formatPath(['VM.Standard2.1', 'x', 'y'])).toBe('VM.Standard2.1["x"].y')
    expect(formatPath(['c5.xlarge', 0])).toBe('c5.xlarge[0]')
    // Only a name: empty parts, spaces or a leading dot stay quoted.
    for (const odd of ['.hidden', 'a..b', 'a.', 'a b.c', '']) expect(formatPath([odd])).toBe(`[${JSON.stringify(odd)}]`)
  })
})

describe('parseYamlDocument: positions', () => {
  const text = lines(
    'shapes:', //                       1
    '  c5.xlarge: 4', //                 2
    '  g4dn.xlarge:', //                 3
    '    count: 2', //                   4
    '    partitions: [gpu, big]', //     5
    '    features:', //                  6
    '      - fast', //                   7
    '      - ssd', //                    8
    'flow: {a: 1, "b.c": {d: 2}}', //   9
  )
  const y = parseYamlDocument(text, 'limits.yaml')

  it('locates a map entry at its key', () => {
    expect(y.where(['shapes'])).toBe('limits.yaml:1:1')
    expect(y.where(['shapes', 'c5.xlarge'])).toBe('limits.yaml:2:3')
    expect(y.where(['shapes', 'g4dn.xlarge', 'count'])).toBe('limits.yaml:4:5')
    expect(y.where(['flow', 'b.c', 'd'])).toBe('limits.yaml:9:22')
  })

  it('locates a sequence item at the item, in block and flow sequences', () => {
    expect(y.where(['shapes', 'g4dn.xlarge', 'partitions', 1])).toBe('limits.yaml:5:23')
    expect(y.where(['shapes', 'g4dn.xlarge', 'features', 1])).toBe('limits.yaml:8:9')
  })

  it('locates a missing path at its nearest existing parent, and the root at its start', () => {
    expect(y.where(['shapes', 'g4dn.xlarge', 'weight'])).toBe('limits.yaml:3:3')
    expect(y.where(['nope', 'deeper'])).toBe('limits.yaml:1:1')
    expect(y.where([])).toBe('limits.yaml:1:1')
    expect(parseYamlDocument('\n\n  a: 1\n', 'f.yaml').where([])).toBe('f.yaml:3:3')
  })

  it('matches numeric keys by their text', () => {
    const o = parseYamlDocument(lines('VM.Standard2.1:', '  1: 2', '  "2": 3'), 'l.yaml')
    expect(o.where(['VM.Standard2.1', '1'])).toBe('l.yaml:2:3')
    expect(o.where(['VM.Standard2.1', 2])).toBe('l.yaml:3:3')
    expect(o.value).toEqual({'VM.Standard2.1': {1: 2, 2: 3}})
  })

  it('follows aliases', () => {
    const a = parseYamlDocument(lines('base: &b', '  count: 2', 'copy: *b'), 'a.yaml')
    expect(a.value).toEqual({base: {count: 2}, copy: {count: 2}})
    expect(a.where(['copy', 'count'])).toBe('a.yaml:2:3')
  })

  it('returns null for an empty or comment-only document', () => {
    expect(parseYamlDocument('', 'e.yaml').value).toBeNull()
    expect(parseYamlDocument('# nothing here\n', 'e.yaml').value).toBeNull()
    expect(parseYamlDocument('', 'e.yaml').where(['x'])).toBe('e.yaml:1:1')
  })

  it('prefixes a problem with the rendered path (none for the root)', () => {
    expect(y.problem(['shapes', 'c5.xlarge'], 'bad')).toEqual({where: 'limits.yaml:2:3', path: 'shapes["c5.xlarge"]', message: 'bad'})
    expect(y.problem([], 'bad')).toEqual({where: 'limits.yaml:1:1', message: 'bad'})
  })
})

describe('parseYamlDocument: errors', () => {
  it('reports a syntax error at its line and column', () => {
    const p = problems(() => parseYamlDocument(lines('a: 1', 'b: [1, 2', 'c: 3'), 'x.yaml'))
    expect(p.length).toBeGreaterThan(0)
    expect(p[0].where).toBe('x.yaml:3:1')
    expect(p[0].message).toMatch(/fix the YAML syntax/)
  })

  it('reports an unclosed quote', () => {
    const p = problems(() => parseYamlDocument(lines('a: "open', 'b: 2'), 'x.yaml'))
    expect(p.map((x) => x.where)).toContain('x.yaml:3:1')
  })

  it('reports tabs used as indentation', () => {
    const p = problems(() => parseYamlDocument(lines('a:', '\tb: 1'), 'x.yaml'))
    expect(p[0].where).toBe('x.yaml:2:1')
  })

  it('refuses a second document', () => {
    const p = problems(() => parseYamlDocument(lines('a: 1', '---', 'b: 2'), 'x.yaml'))
    expect(p[0].where).toBe('x.yaml:2:1')
  })

  it('makes duplicate keys errors, at the second key, naming the first', () => {
    const p = problems(() => parseYamlDocument(lines('a: 1', 'shapes:', '  c5.xlarge: 1', '  c5.xlarge: 2', 'a: 3'), 'x.yaml'))
    expect(p).toEqual([
      {where: 'x.yaml:4:3', message: 'duplicate key "c5.xlarge" (first at line 3); keep only one of them'},
      {where: 'x.yaml:5:1', message: 'duplicate key "a" (first at line 1); keep only one of them'},
    ])
  })

  it('treats keys that read the same as duplicates (1 and "1")', () => {
    const p = problems(() => parseYamlDocument(lines('s:', '  1: 2', '  "1": 3'), 'x.yaml'))
    expect(p).toEqual([{where: 'x.yaml:3:3', message: 'duplicate key "1" (first at line 2); keep only one of them'}])
  })

  it('finds duplicates in flow maps and in maps inside lists', () => {
    const p = problems(() => parseYamlDocument(lines('a: {x: 1, x: 2}', 'l:', '  - {y: 1}', '  - y: 1', '    y: 2'), 'x.yaml'))
    expect(p.map((x) => x.where)).toEqual(['x.yaml:1:11', 'x.yaml:5:5'])
  })

  it('refuses keys that are lists or maps, and aliases without an anchor', () => {
    expect(problems(() => parseYamlDocument(lines('ok: 1', '? [a, b]', ': 1'), 'x.yaml'))).toEqual([
      {where: 'x.yaml:2:3', message: 'a key must be a plain name or number, not a list or a map'},
    ])
    const p = problems(() => parseYamlDocument(lines('a: 1', 'b: *nowhere'), 'x.yaml'))
    expect(p).toEqual([{where: 'x.yaml:2:4', message: 'alias *nowhere has no anchor before it; define &nowhere first or write the value out'}])
  })

  // Found by test/properties (#23): users.yaml's `firstName: "Zo\ud800e"` reached the directory as "Zo\ufffde".
  it('refuses half a surrogate pair in a value or a key, at the scalar; accepts a whole pair', () => {
    expect(problems(() => parseYamlDocument(lines('a: 1', 'b: "Zo\\ud800e"', '"\\udc00": 2', 'c: [x, "\\udfff"]'), 'x.yaml'))).toEqual([
      {where: 'x.yaml:2:4', message: '"\\ud800" is half of a UTF-16 surrogate pair, not a character; write the character itself (or its "\\U0001F600"-style escape)'},
      {where: 'x.yaml:3:1', message: 'in this key, "\\udc00" is half of a UTF-16 surrogate pair, not a character; write the character itself (or its "\\U0001F600"-style escape)'},
      {where: 'x.yaml:4:8', message: expect.stringMatching(/^"\\udfff" is half/)},
    ])
    expect(parseYamlDocument(lines('a: "\\ud83d\\ude00"', 'b: "\\U0001F600"', 'c: 😀'), 'x.yaml').value).toEqual({a: '😀', b: '😀', c: '😀'})
  })

  it('reports an unknown tag', () => {
    const p = problems(() => parseYamlDocument(lines('a: 1', 'b: !weird 2'), 'x.yaml'))
    expect(p[0].where).toBe('x.yaml:2:4')
    expect(p[0].message).toMatch(/!weird/)
  })
})

/** A whole document against a schema, as citc's readers do it (tasks/create/config-file.ts, users/request.ts). */
function parseYamlWith<S extends z.ZodType>(text: string, file: string, schema: S, opts: ZodProblemOptions = {}): z.output<S> {
  const yaml = parseYamlDocument(text, file)
  const result = schema.safeParse(yaml.value, {reportInput: true})
  if (result.success) return result.data
  throw new InvalidInputError(byPosition(zodProblems(result.error.issues, yaml, opts)))
}

describe('zod issues as located problems', () => {
  const schema = z.strictObject({
    name: z.string(),
    mgmt: z.strictObject({port: z.number().int().max(65535, 'must be a port number, at most 65535'), user: z.string()}),
    tags: z.array(z.string()).optional(),
  })

  it('locates each issue with file:line:col and the rendered path', () => {
    const text = lines(
      'name: demo', //        1
      'mgmt:', //             2
      '  port: 70000', //     3
      '  usr: admin', //      4
      'tags: [a, 2]', //      5
    )
    const p = problems(() => parseYamlWith(text, 'cluster.yaml', schema, {keysAt: (path) => (path.join('.') === 'mgmt' ? ['port', 'user'] : undefined)}))
    expect(p).toEqual([
      {where: 'cluster.yaml:2:1', path: 'mgmt.user', message: 'is required; add it'},
      {where: 'cluster.yaml:3:3', path: 'mgmt.port', message: 'must be a port number, at most 65535'},
      {where: 'cluster.yaml:4:3', path: 'mgmt.usr', message: 'unknown key "usr"; did you mean "user"?'},
      {where: 'cluster.yaml:5:11', path: 'tags[1]', message: expect.any(String)},
    ])
  })

  it('prefixes the path when a part of the document was validated', () => {
    const y = parseYamlDocument(lines('shapes:', '  c5.xlarge:', '    weight: x'), 'l.yaml')
    const r = z.strictObject({weight: z.number('weight must be a number')}).safeParse({weight: 'x'})
    expect(r.success).toBe(false)
    if (r.success) return
    expect(zodProblems(r.error.issues, y, {prefix: ['shapes', 'c5.xlarge']})).toEqual([
      {where: 'l.yaml:3:5', path: 'shapes["c5.xlarge"].weight', message: 'weight must be a number'},
    ])
  })

  it('returns the data when it is valid', () => {
    expect(parseYamlWith(lines('name: a', 'mgmt: {port: 22, user: u}'), 'c.yaml', schema)).toEqual({name: 'a', mgmt: {port: 22, user: 'u'}})
  })
})

describe('helpers', () => {
  it('suggests close words', () => {
    expect(didYouMean('partition', ['shapes', 'partitions', 'slurm'])).toEqual(['partitions'])
    expect(didYouMean('SLURM', ['shapes', 'partitions', 'slurm'])).toEqual(['slurm'])
    expect(didYouMean('zzzzzz', ['shapes', 'partitions', 'slurm'])).toEqual([])
  })

  it('sorts problems by line and column, stably', () => {
    const p = [
      {where: 'f:10:1', message: 'c'},
      {where: 'f:2:5', message: 'b'},
      {where: 'f:2:1', message: 'a'},
      {where: '--flag', message: 'z'},
      {where: 'f:2:1', message: 'a2'},
    ]
    expect(byPosition(p).map((x) => x.message)).toEqual(['a', 'a2', 'b', 'c', 'z'])
  })
})
