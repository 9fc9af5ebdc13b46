// What a workflow may do with the user: print, ask, and pick a renderer. Commands build it; workflows
// in src/lib/tasks take it, so they never reach into oclif. Every question goes through Io's prompts:
// on a terminal @inquirer/prompts (imported when a question is asked), in unit tests scripted answers,
// so the wizards' logic is tested without a pseudo-terminal (test/cli/wizard.test.ts keeps a real one).
import {cancelled, usageError} from './errors.js'

/**
 * How task lists are drawn: interactive on a TTY, line-by-line in CI or off a TTY, nothing under
 * --json (base-command.ts's rendererPolicy chooses).
 */
export type RendererName = 'default' | 'simple' | 'verbose' | 'silent'

export interface Choice<T extends string> {
  name: string
  value: T
}

/** The questions citc asks (the subset of @inquirer/prompts it uses). */
export interface Prompts {
  select<T extends string>(q: {message: string; choices: Choice<T>[]; default?: T}): Promise<T>
  input(q: {message: string; default?: string; required?: boolean; validate?: (value: string) => boolean | string}): Promise<string>
  number(q: {message: string; default?: number; min?: number; max?: number}): Promise<number | undefined>
  confirm(q: {message: string; default?: boolean}): Promise<boolean>
}

/** The terminal's prompts: @inquirer/prompts, loaded on the first question. */
const terminalPrompts: Prompts = {
  async select(q) {
    const {select} = await import('@inquirer/prompts')
    return select(q)
  },
  async input(q) {
    const {input} = await import('@inquirer/prompts')
    return input(q)
  },
  async number(q) {
    const {number} = await import('@inquirer/prompts')
    return number(q)
  },
  async confirm(q) {
    const {confirm} = await import('@inquirer/prompts')
    return confirm(q)
  },
}

export interface Io {
  /** Result text for people (suppressed under --json). */
  log(message: string): void
  /** Notes and warnings on stderr (suppressed under --json). */
  note(message: string): void
  json: boolean
  interactive: boolean
  yes: boolean
  renderer: RendererName
  /** How questions are asked (default: the terminal's). */
  prompts?: Prompts
}

/** The prompts of `io`. */
export const promptsOf = (io: Io): Prompts => io.prompts ?? terminalPrompts

/**
 * Ask for a yes/no confirmation. --yes answers yes; without a TTY it is an error naming --yes;
 * a "no" is a cancellation (exit 130), and changes nothing.
 */
export async function confirmOrRefuse(io: Io, message: string): Promise<void> {
  if (io.yes) return
  if (!io.interactive) throw usageError(`${message} — needs a confirmation, and there is no terminal to ask on`, 'pass --yes to confirm')
  const ok = await promptsOf(io).confirm({message, default: false})
  if (!ok) throw cancelled('cancelled: nothing was changed')
}

/** Ask the user to type a word (e.g. the cluster name before destroy). */
export async function confirmByTyping(io: Io, word: string, what: string): Promise<void> {
  if (io.yes) return
  if (!io.interactive) throw usageError(`${what} needs a confirmation, and there is no terminal to ask on`, 'pass --yes to confirm')
  const typed = await promptsOf(io).input({message: `Type the cluster name (${word}) to confirm ${what}:`})
  if (typed.trim() !== word) throw cancelled(`cancelled: "${typed.trim()}" is not "${word}"; nothing was changed`)
}
