// Scripted answers for Io's prompts: each question is matched by its message, in order, and its
// answer given back — so a wizard's logic is unit-tested without a pseudo-terminal. A question the
// script does not expect, or an answer left over, fails the test.
import type {Io, Prompts} from '../../src/lib/io.js'

export interface Asked {
  kind: 'select' | 'input' | 'number' | 'confirm'
  message: string
  default?: unknown
  choices?: string[]
}

/** An answer; undefined takes the question's default; a function sees the question. */
export type Answer = string | number | boolean | undefined | ((q: Asked) => string | number | boolean | undefined)

export function scriptedPrompts(script: Array<[RegExp, Answer]>): Prompts & {asked: Asked[]; left: () => string[]} {
  const queue = [...script]
  const asked: Asked[] = []
  const answer = (q: Asked) => {
    asked.push(q)
    const next = queue.shift()
    if (!next) throw new Error(`unexpected question: ${q.message}`)
    const [pattern, value] = next
    if (!pattern.test(q.message)) throw new Error(`asked "${q.message}", expected a question matching ${pattern}`)
    return typeof value === 'function' ? value(q) : value
  }
  return {
    asked,
    left: () => queue.map(([p]) => String(p)),
    async select(q) {
      const value = answer({kind: 'select', message: q.message, default: q.default, choices: q.choices.map((c) => c.value)})
      const choice = q.choices.find((c) => c.value === value)
      if (!choice) throw new Error(`"${String(value)}" is not a choice of "${q.message}" (${q.choices.map((c) => c.value).join(', ')})`)
      return choice.value
    },
    async input(q) {
      const value = answer({kind: 'input', message: q.message, default: q.default})
      const text = value === undefined ? (q.default ?? '') : String(value)
      const valid = q.validate?.(text)
      if (valid !== undefined && valid !== true) throw new Error(`"${text}" refused by "${q.message}": ${String(valid)}`)
      return text
    },
    async number(q) {
      const value = answer({kind: 'number', message: q.message, default: q.default})
      return value === undefined ? q.default : Number(value)
    },
    async confirm(q) {
      return Boolean(answer({kind: 'confirm', message: q.message, default: q.default}))
    },
  }
}

/** An interactive Io (a terminal, no --yes) whose questions the script answers; notes are kept. */
export function scriptedIo(prompts: Prompts): Io & {notes: string[]} {
  const notes: string[] = []
  return {log: () => {}, note: (m) => notes.push(m), notes, json: false, interactive: true, yes: false, renderer: 'silent', prompts}
}
