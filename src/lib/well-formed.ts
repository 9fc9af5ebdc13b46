// Text that is not well-formed Unicode: a lone half of a UTF-16 surrogate pair, which a YAML file can
// spell as an escape ("\\ud800"). citc writes what it reads as UTF-8 (slurm.conf, LDIF, sacctmgr's
// arguments, cluster.yaml), where such a half silently becomes U+FFFD; every file reader refuses it.

/** Half of a UTF-16 surrogate pair on its own (with the u flag, a whole pair is one character and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u

/** Why `text` is not well-formed (its first lone half, and what to write instead), or undefined. */
export function loneSurrogateProblem(text: string): string | undefined {
  const half = LONE_SURROGATE.exec(text)?.[0]
  if (half === undefined) return undefined
  const code = `\\u${half.charCodeAt(0).toString(16).padStart(4, '0')}`
  return `"${code}" is half of a UTF-16 surrogate pair, not a character; write the character itself (or its "\\U0001F600"-style escape)`
}
