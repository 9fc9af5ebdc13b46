// The node programs' check of cluster.json (and a stand-in) once per content (src/lib/tasks/node/checked-once.ts):
// kept only when it passes, for the same text and path only, and only from a file of this user's alone.
import {chmodSync, mkdtempSync, readdirSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {checkedOnce} from '../../../../src/lib/tasks/node/checked-once.js'

const work = mkdtempSync(join(tmpdir(), 'citc-checked-once-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

describe('checkedOnce', () => {
  const dir = join(work, 'state')
  let checks = 0
  const check = (text: string) => async () => {
    checks++
    const v = JSON.parse(text) as {ok: boolean}
    if (!v.ok) throw new Error('not what citc writes')
    return v
  }
  const read = (text: string, file = '/etc/citc/cluster.json') => checkedOnce({dir, name: 'cluster-json', file, text, check: check(text)})

  it('checks a text once and keeps the result 0600; another text or path is checked again', async () => {
    const a = '{"ok":true,"n":1}'
    expect(await read(a)).toEqual({ok: true, n: 1})
    expect(await read(a)).toEqual({ok: true, n: 1})
    expect(checks).toBe(1)
    expect(statSync(join(dir, 'checked-cluster-json.json')).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(await read('{"ok":true,"n":2}')).toEqual({ok: true, n: 2})
    expect(await read('{"ok":true,"n":2}', '/elsewhere.json')).toEqual({ok: true, n: 2})
    expect(checks).toBe(3)
  })

  it('a text that fails is never kept: the same error every time', async () => {
    const before = checks
    for (let i = 0; i < 2; i++) await expect(read('{"ok":false}')).rejects.toThrow('not what citc writes')
    expect(checks).toBe(before + 2)
    expect(readdirSync(dir)).toEqual(['checked-cluster-json.json'])
  })

  it('a kept file others may write is not trusted: checked again', async () => {
    const a = '{"ok":true,"n":3}'
    await read(a)
    chmodSync(join(dir, 'checked-cluster-json.json'), 0o666)
    const before = checks
    await read(a)
    expect(checks).toBe(before + 1)
  })

  it('without a state directory every read is checked', async () => {
    const before = checks
    for (let i = 0; i < 2; i++) await checkedOnce({dir: undefined, name: 'x', file: '/f', text: '{"ok":true}', check: check('{"ok":true}')})
    expect(checks).toBe(before + 2)
  })
})
