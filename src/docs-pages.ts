// Which page of docs/ explains a command further: `citc COMMAND --help` ends with them (help.ts), as
// absolute paths into the installed package (package.json ships docs/), so they open wherever citc runs.
// Keys are command ids as src/index.ts registers them; test/docs-pages.test.ts keeps both sides real.

export const DOCS_PAGES: Readonly<Record<string, readonly string[]>> = {
  accounts: ['docs/accounts.md'],
  'accounts:apply': ['docs/accounts.md'],
  'add-user': ['docs/accounts.md'],
  create: ['docs/state-and-logs.md', 'docs/cloud-status.md', 'docs/gpus.md'],
  destroy: ['docs/state-and-logs.md'],
  doctor: ['docs/node-versions.md', 'docs/doctor-security.md'],
  finish: ['docs/finish.md', 'docs/limits.md', 'docs/gpus.md'],
  'metrics:collect': ['docs/metrics.md'],
  monitor: ['docs/monitoring.md'],
  'node:add': ['docs/joined-machines.md'],
  'node:fail': ['docs/elastic-nodes.md'],
  'node:remove': ['docs/joined-machines.md'],
  'node:resume': ['docs/elastic-nodes.md'],
  'node:suspend': ['docs/elastic-nodes.md'],
  'node:sync': ['docs/elastic-nodes.md'],
  nodes: ['docs/elastic-nodes.md', 'docs/joined-machines.md'],
  'rebuild-image': ['docs/elastic-nodes.md', 'docs/gpus.md'],
  status: ['docs/elastic-nodes.md', 'docs/joined-machines.md'],
  usage: ['docs/accounts.md'],
}
