// Just enough of slurm.conf's syntax to read back what citc wrote (and what a CitC cluster has):
// one "Key=Value Key2=Value2" line, values optionally double-quoted, "#" starts a comment.

/** The key/value pairs of one line, keys as written; an empty object for blank or comment lines. */
export function parseConfLine(line: string): Array<[string, string]> {
  const out: Array<[string, string]> = []
  let i = 0
  const s = line
  while (i < s.length) {
    while (i < s.length && /\s/.test(s[i])) i++
    if (i >= s.length || s[i] === '#') break
    const keyStart = i
    while (i < s.length && s[i] !== '=' && !/\s/.test(s[i])) i++
    const key = s.slice(keyStart, i)
    if (s[i] !== '=') {
      out.push([key, ''])
      continue
    }
    i++ // '='
    let value = ''
    if (s[i] === '"') {
      const close = s.indexOf('"', i + 1)
      const endQuote = close === -1 ? s.length : close
      value = s.slice(i + 1, endQuote)
      i = endQuote + 1
    } else {
      const start = i
      while (i < s.length && !/\s/.test(s[i])) i++
      value = s.slice(start, i)
    }
    out.push([key, value])
  }
  return out
}

/** Lines of a block as parsed entries with their first key, skipping comments and blanks. */
export function parseConfLines(text: string): Array<{key: string; value: string; pairs: Map<string, string>; line: string}> {
  const result = []
  for (const line of text.split('\n')) {
    const pairs = parseConfLine(line)
    if (pairs.length === 0) continue
    const map = new Map(pairs.map(([k, v]) => [k.toLowerCase(), v]))
    result.push({key: pairs[0][0], value: pairs[0][1], pairs: map, line: line.trim()})
  }
  return result
}
