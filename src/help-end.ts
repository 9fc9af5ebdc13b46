// What citc's help adds at the end of a command's help (help.ts, and manifest-help.ts for the fast
// path): the docs/ pages that explain the command further (docs-pages.ts), then the exit codes every
// command shares. No oclif import: the fast path loads this without oclif's start-up.
import {join} from 'node:path'

import {DOCS_PAGES} from './docs-pages.js'
import {EXIT_CODE_HELP} from './lib/errors.js'

/** The command's pages as a help section, then the exit codes; `root` is where citc is installed. */
export function helpEnd(root: string, commandId: string): string {
  const pages = DOCS_PAGES[commandId.replaceAll(' ', ':')]
  const docs = pages ? `SEE ALSO\n${pages.map((p) => `  ${join(root, p)}`).join('\n')}` : undefined
  return [docs, EXIT_CODE_HELP].filter(Boolean).join('\n\n')
}
