// What a workflow may do with the user: print, ask, and pick a renderer. Commands build it; workflows
// in src/lib/tasks take it, so they never reach into oclif.
import {confirm, input} from '@inquirer/prompts'

import type {RendererName} from './base-command.js'
import {cancelled, usageError} from './errors.js'

export interface Io {
  /** Result text for people (suppressed under --json). */
  log(message: string): void
  /** Notes and warnings on stderr (suppressed under --json). */
  note(message: string): void
  json: boolean
  interactive: boolean
  yes: boolean
  renderer: RendererName
}

/**
 * Ask for a yes/no confirmation. --yes answers yes; without a TTY it is an error naming --yes;
 * a "no" is a cancellation (exit 130), and changes nothing.
 */
export async function confirmOrRefuse(io: Io, message: string): Promise<void> {
  if (io.yes) return
  if (!io.interactive) throw usageError(`${message} — needs a confirmation, and there is no terminal to ask on`, 'pass --yes to confirm')
  const ok = await confirm({message, default: false})
  if (!ok) throw cancelled('cancelled: nothing was changed')
}

/** Ask the user to type a word (e.g. the cluster name before destroy). */
export async function confirmByTyping(io: Io, word: string, what: string): Promise<void> {
  if (io.yes) return
  if (!io.interactive) throw usageError(`${what} needs a confirmation, and there is no terminal to ask on`, 'pass --yes to confirm')
  const typed = await input({message: `Type the cluster name (${word}) to confirm ${what}:`})
  if (typed.trim() !== word) throw cancelled(`cancelled: "${typed.trim()}" is not "${word}"; nothing was changed`)
}
