// src/docs-pages.ts: the docs/ pages `citc COMMAND --help` points to. Each key must be a command citc
// registers (a renamed command would silently lose its pointer) and each page must exist in docs/
// (a moved page would send a reader to nothing); package.json must ship docs/, or the installed
// package's help would name files that are not there.
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {DOCS_PAGES} from '../src/docs-pages.js'
import {commands} from '../src/index.js'

const ROOT = join(import.meta.dirname, '..')

describe('the docs/ pages help points to', () => {
  it('are keyed by commands citc registers', () => {
    expect(Object.keys(DOCS_PAGES).length).toBeGreaterThan(5)
    for (const id of Object.keys(DOCS_PAGES)) expect(Object.keys(commands), id).toContain(id)
  })

  it('exist, in docs/, and ship in the package', () => {
    for (const [id, pages] of Object.entries(DOCS_PAGES)) {
      expect(pages.length, id).toBeGreaterThan(0)
      for (const page of pages) {
        expect(page, id).toMatch(/^docs\/[\w-]+\.md$/)
        expect(existsSync(join(ROOT, page)), `${id}: ${page}`).toBe(true)
      }
    }
    const files = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {files: string[]}).files
    expect(files).toContain('docs')
  })
})
