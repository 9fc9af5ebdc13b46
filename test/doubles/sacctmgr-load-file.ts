// How `sacctmgr load` reads its file, for the unit tests of what citc writes there (loadText) and for
// the slurmdbd held in memory (memory-slurmdbd.ts). Written from Slurm's src/sacctmgr/file_functions.c
// (22.05; _get_next_line, _parse_options, load_sacctmgr_cfg_file), the parts citc's files meet:
//   - each line is first read as a config line: from an unescaped "#" on is a comment, and every
//     backslash is dropped, keeping the character after it ("\#" is "#", "\\" is "\");
//   - "Object - rest": the object is what comes before " - " (Cluster, Parent, Account, User);
//   - the rest is options split on ":" outside quotes; the first, without "=", is the name; a quote
//     left open ends sacctmgr at once (fatal: nothing of the file is loaded);
//   - values lose their surrounding quotes, and everything but a user's name is lower-cased.
// Every line is read before anything is added: a bad line stops the load and nothing is added.

export interface LoadLine {
  /** 1-based, as sacctmgr counts them in "Problem with line(N)". */
  line: number
  object: string
  name: string
  /** Option keys as written (DefaultAccount, Description, MaxJobs…) → value without its quotes. */
  options: Record<string, string>
}

export class LoadFileError extends Error {
  constructor(
    message: string,
    /** The line sacctmgr names, when it names one. */
    readonly line?: number,
  ) {
    super(message)
  }
}

/** One raw line as sacctmgr's config reader gives it: comment cut, escapes dropped. */
export function configLine(raw: string): string {
  let bs = 0
  let cut = raw.length
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === '#' && bs % 2 === 0) {
      cut = i
      break
    }
    bs = raw[i] === '\\' ? bs + 1 : 0
  }
  const text = raw.slice(0, cut)
  let out = ''
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') i++
    if (i < text.length) out += text[i]
  }
  return out
}

const unquote = (v: string): string => (/^(['"]).*\1$/s.test(v) ? v.slice(1, -1) : v)

/** The options of one line (after "Object - "), split on ":" outside quotes. */
function options(rest: string, line: number, lowerName: boolean): {name: string; options: Record<string, string>} {
  const parts: string[] = []
  let quote = ''
  let start = 0
  for (let i = 0; i <= rest.length; i++) {
    const c = rest[i]
    if (i === rest.length || (c === ':' && !quote)) {
      parts.push(rest.slice(start, i))
      start = i + 1
    } else if ((c === "'" || c === '"') && (!quote || c === quote)) {
      quote = quote ? '' : c
    }
  }
  if (quote) throw new LoadFileError(`fatal: There is a problem with option ${rest} with quotes.`)
  const [first, ...more] = parts
  if (first === undefined || first === '' || first.includes('=')) throw new LoadFileError(` No name given\n Problem with line(${line})`, line)
  const opts: Record<string, string> = {}
  for (const p of more) {
    const eq = p.indexOf('=')
    if (eq < 0) throw new LoadFileError(` Bad format on ${p}: End your option with an '=' sign\n Problem with line(${line})`, line)
    opts[p.slice(0, eq)] = unquote(p.slice(eq + 1)).toLowerCase()
  }
  const name = unquote(first.trim())
  return {name: lowerName ? name.toLowerCase() : name, options: opts}
}

/** Every line of a load file, as sacctmgr reads it; a LoadFileError for the first it cannot read. */
export function readLoadFile(text: string): LoadLine[] {
  const out: LoadLine[] = []
  const raw = text.split('\n')
  for (let i = 0; i < raw.length; i++) {
    const line = configLine(raw[i])
    if (line.trim() === '') continue
    const m = /^(\w+) - (.*)$/.exec(line)
    if (!m) throw new LoadFileError(` Misformatted line(${i + 1}): ${line}`, i + 1)
    out.push({line: i + 1, object: m[1], ...options(m[2], i + 1, m[1] !== 'User')})
  }
  return out
}
