// The one function through which a command line for a POSIX shell is built from an argv array.
// Every word is either made only of characters no shell treats specially, or wrapped in single
// quotes (inside which nothing is special; a ' is written as '\''). User input therefore always
// arrives as one literal word: `;`, `$(...)`, backticks, globs, newlines and quotes included.

/** Characters that are literal in every position of a word in sh, bash, dash and zsh. `=` and `~`
 *  are absent on purpose: `A=1 cmd` is an assignment and `~x` a home directory. */
const SAFE = /^[A-Za-z0-9_./:@%+,-]+$/

/** Quote one word for a POSIX shell. */
export function quoteWord(word: string): string {
  if (word.includes('\0')) throw new Error('a command argument cannot contain a NUL byte')
  if (SAFE.test(word)) return word
  return `'${word.replaceAll("'", `'\\''`)}'`
}

/** The argv as one shell command line: `sh -c "$(shellQuote(argv))"` runs exactly argv. */
export function shellQuote(argv: string[]): string {
  return argv.map(quoteWord).join(' ')
}
