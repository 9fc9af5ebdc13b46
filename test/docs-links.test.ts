// The README is the front door and docs/ holds the topics: every relative link in README.md and
// docs/*.md must lead somewhere — an existing file, and, when it names an anchor (#heading), a heading of
// that Markdown file as GitHub names it. Moving or renaming a page, or rewording a heading, then fails
// here instead of leaving a reader at a dead link.
import {existsSync, readdirSync, readFileSync, statSync} from 'node:fs'
import {dirname, join, relative} from 'node:path'
import {describe, expect, it} from 'vitest'

const ROOT = join(import.meta.dirname, '..')
const pages = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)].sort()

/** Markdown outside fenced code blocks, with inline code spans blanked: where links and headings are. */
function prose(text: string): string[] {
  let fenced = false
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced
      return ''
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length))
  })
}

/** Inline links and images, [text](target "title"), with their line numbers. */
function markdownLinks(text: string): Array<{target: string; line: number}> {
  return prose(text).flatMap((line, i) => [...line.matchAll(/!?\[[^\]]*\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => ({target: m[1], line: i + 1})))
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function headingAnchors(text: string): string[] {
  const seen = new Map<string, number>()
  const visible = prose(text)
  return text
    .split('\n')
    .filter((line, i) => visible[i] !== '' && /^#{1,6}\s/.test(line))
    .map((line) => {
      const slug = line
        .replace(/^#+\s+/, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-')
      const n = seen.get(slug) ?? 0
      seen.set(slug, n + 1)
      return n === 0 ? slug : `${slug}-${n}`
    })
}

/** What is wrong with one link of `page` (undefined: it resolves). */
function brokenLink(page: string, target: string): string | undefined {
  const [path, anchor] = target.split('#', 2) as [string, string | undefined]
  const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), decodeURIComponent(path))
  if (!file.startsWith(ROOT + '/') && file !== ROOT) return 'points outside the repository'
  if (!existsSync(file)) return `${relative(ROOT, file)} does not exist`
  if (anchor === undefined) return undefined
  if (statSync(file).isDirectory() || !file.endsWith('.md')) return `an anchor into ${relative(ROOT, file)}, which is not a Markdown file`
  const anchors = headingAnchors(readFileSync(file, 'utf8'))
  return anchors.includes(anchor) ? undefined : `${relative(ROOT, file)} has no heading #${anchor} (it has: ${anchors.join(', ')})`
}

describe('links in README.md and docs/', () => {
  it('finds the pages and their links', () => {
    expect(pages).toContain('README.md')
    expect(pages.length).toBeGreaterThan(5)
    // The README links to every docs page: a page nothing points to is a page nobody finds.
    const readmeTargets = markdownLinks(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((l) => l.target.split('#')[0])
    for (const page of pages.filter((p) => p.startsWith('docs/'))) expect(readmeTargets, `README.md links to ${page}`).toContain(page)
  })

  it.each(pages)('%s: every relative link resolves, anchors included', (page) => {
    const links = markdownLinks(readFileSync(join(ROOT, page), 'utf8')).filter((l) => !/^[a-z][a-z0-9+.-]*:/i.test(l.target))
    const broken = links.flatMap((l) => {
      const why = brokenLink(page, l.target)
      return why ? [`${page}:${l.line} (${l.target}): ${why}`] : []
    })
    expect(broken).toEqual([])
  })
})

describe('the Markdown reader these checks use', () => {
  it('reads inline links, leaves code alone, and names headings as GitHub does', () => {
    const text = [
      '# Quick start',
      'See [the page](docs/a.md#on-this-machine-the-local-provider) and [top](#quick-start).',
      '`[not a link](nowhere.md)` and ![an image](img.png "title")',
      '```sh',
      'echo [no](link.md)',
      '```',
      '## On this machine (the local provider)',
      '## `citc finish`: what it does, step by step!',
      '## Quick start',
    ].join('\n')
    expect(markdownLinks(text)).toEqual([
      {target: 'docs/a.md#on-this-machine-the-local-provider', line: 2},
      {target: '#quick-start', line: 2},
      {target: 'img.png', line: 3},
    ])
    expect(headingAnchors(text)).toEqual(['quick-start', 'on-this-machine-the-local-provider', 'citc-finish-what-it-does-step-by-step', 'quick-start-1'])
  })
})
