// `citc frobnicate`: an unknown command is a usage error (exit 2) like an unknown flag, with the
// closest command as the hint, and under --json the one error document every other failure prints.
// Registered in package.json (oclif.hooks.command_not_found) in place of @oclif/plugin-not-found,
// which exits 127, prints no JSON and asks "did you mean" only on a terminal.
import {type Hook, toConfiguredId} from '@oclif/core'
import {reportError} from '../lib/base-command.js'
import {editDistance} from '../lib/edit-distance.js'
import {CitcError, usageError} from '../lib/errors.js'

/** The known command closest to what was typed (both as typed: "cluster list"); ties go to the first. */
export function closestCommand(typed: string, known: readonly string[]): string | undefined {
  let best: {id: string; d: number} | undefined
  for (const id of known) {
    // A typed prefix of a command ("clus", "add") is as close as a command can be.
    const d = id.startsWith(typed) ? 0 : editDistance(typed, id)
    if (!best || d < best.d) best = {id, d}
  }
  return best?.id
}

/** The usage error for an unknown command, with its suggestion. */
export function unknownCommandError(typed: string, known: readonly string[]): CitcError {
  const closest = closestCommand(typed, known)
  return usageError(
    `"${typed}" is not a citc command`,
    closest ? `did you mean \`citc ${closest}\`? \`citc --help\` lists every command` : '`citc --help` lists every command',
  )
}

const hook: Hook.CommandNotFound = async function ({argv = [], config, id}) {
  const visible = config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases])
  // With a space as topic separator oclif folds the arguments into the id ("add-usr bob" arrives as
  // add-usr:bob): the command is the first word, or the first two after a topic ("cluster lst").
  const words = id.split(':')
  const typed = words.slice(0, words.length > 1 && config.findTopic(words[0]) ? 2 : 1).join(':')
  const error = unknownCommandError(
    toConfiguredId(typed, config),
    visible.map((c) => toConfiguredId(c, config)),
  )
  // Shown as every command shows a failure (BaseCommand.catch).
  const code = reportError(error, {json: argv.includes('--json'), verbose: false, writeJson: (doc) => process.stdout.write(JSON.stringify(doc, null, 2) + '\n')})
  this.exit(code)
}

export default hook
