// Home directories for tests of credential discovery and the wizards: a fresh directory per call
// under one root, with the files given (~/.aws/credentials, ~/.oci/config …).
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'

export function fakeHomes(prefix: string): {home: (files?: Record<string, string>) => string; root: string; remove: () => void} {
  const root = mkdtempSync(join(tmpdir(), prefix))
  let n = 0
  return {
    root,
    home(files = {}) {
      const h = join(root, `home-${++n}`)
      mkdirSync(h, {recursive: true})
      for (const [p, text] of Object.entries(files)) {
        mkdirSync(dirname(join(h, p)), {recursive: true})
        writeFileSync(join(h, p), text)
      }
      return h
    },
    remove: () => rmSync(root, {recursive: true, force: true}),
  }
}
