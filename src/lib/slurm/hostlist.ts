// Slurm hostlist expressions ("c[1-3,7]", "demo-c5-xlarge-[0001-0100]"): expand to names, compress names
// back to an expression. Pure functions, no I/O. Checked against Slurm 22.05's own parser (scontrol
// show hostnames / show hostlist) in test/lib/slurm/hostlist.test.ts.
//
// What Slurm 22.05 does, and what this module does about it:
// - Expansion keeps order and duplicates ("n[1,1]" gives n1 twice), as Slurm does. The width of a range
//   is the width of its lower bound as written: "n[001-010]" pads to 3, "n[1-010]" does not pad,
//   "n[0099-100]" gives n0099 n0100. Numbers that outgrow the width are not truncated (n[8-10] → n10).
// - Several bracket groups in one name: the LAST group varies fastest, then the first, the second…, and
//   the one before the last varies slowest. "a[1-2]b[3-4]c[5-6]" → a1b3c5 a1b3c6 a2b3c5 a2b3c6 a1b4c5 …
//   (that is how Slurm's parser recurses; with two groups it is the ordinary row-major order).
// - Slurm refuses text after the last bracket group ("x[1-3].ext", "x[1-3]-y"): so do we.
// - Slurm refuses a single range of more than 65,536 hosts (its MAX_RANGE) with "Too many hosts in
//   range": so do we, and compression never writes one: "n[1-70000]" is written "n[1-65536,65537-70000]".
//   (`scontrol show hostlist` itself prints "n[1-70000]", which scontrol then refuses to parse.)
// - Deliberately stricter than Slurm, which silently accepts these: an empty item ("a,,b", "a,"),
//   whitespace (Slurm treats it as a separator), an unclosed "[" (Slurm turns "c[1-3" into "c]") and a
//   stray "]" (Slurm takes "a]b" as a name). Leading/trailing whitespace of the whole expression is
//   trimmed, and an empty expression is an empty list.
//
// Compression (`scontrol show hostlist` only merges neighbours in the order given and never dedupes;
// compressHostlist sorts and dedupes first, and for sorted, unique input its output is exactly
// scontrol's, except for the 65,536 split above):
// - A name's numeric part is its maximal run of trailing digits; the rest is its prefix. Names with no
//   trailing digits stand alone ("login"). So do names with more than 14 trailing digits (they would not
//   fit a double exactly; Slurm would range them, we write them out whole: still valid, just longer).
// - Order: prefixes in natural order ("rack2-n" before "rack10-n"), a name equal to a prefix just
//   before that prefix's group ("foo,foo[1-2]"); within a prefix by number, then by width.
// - Zero padding as Slurm reads it: "0001" can only be written with width 4, "1000" with any width up
//   to 4. Consecutive numbers share a range when one width renders them all: n0999,n1000 → n[0999-1000],
//   n9,n10 → n[9-10]; n1,n01 cannot (n[1,01]). A prefix mixing padded and unpadded forms of the same
//   numbers therefore compresses poorly (n1,n01,n2,n02 → n[1,01,2,02]) but correctly, as in scontrol.
// - No suffix ranges: Slurm 22.05 cannot parse "c[1-2].ext", so c1.ext,c2.ext stay as they are.

/** Default ceiling on the number of names expandHostlist will produce. */
export const DEFAULT_EXPAND_LIMIT = 1_000_000

/** The largest range Slurm 22.05 accepts between brackets (its MAX_RANGE): hi - lo + 1 <= this. */
export const SLURM_MAX_RANGE = 65_536

/** Names whose trailing number is longer than this are not put in ranges (see above). */
const MAX_DIGITS = 14

/** A malformed hostlist expression or host name. `part` is the offending piece. */
export class HostlistError extends Error {
  readonly expression: string
  readonly part: string
  constructor(expression: string, part: string, message: string) {
    super(message)
    this.name = 'HostlistError'
    this.expression = expression
    this.part = part
  }
}

const POW10: number[] = []
for (let i = 0, p = 1; i <= 16; i++, p *= 10) POW10.push(p)

const isDigit = (c: number) => c >= 48 && c <= 57

function pad(n: number, width: number): string {
  const s = String(n)
  return s.length >= width ? s : '0'.repeat(width - s.length) + s
}

// ---------------------------------------------------------------------------------------------------
// Expansion

interface Range {
  lo: number
  hi: number
  width: number
}

/** A name with bracket groups: literals[0] group[0] literals[1] group[1] … (nothing after the last). */
interface Item {
  literals: string[]
  groups: Range[][]
  count: number
}

/**
 * Expand a Slurm hostlist expression into host names, in Slurm's order, duplicates kept.
 * Throws a HostlistError naming the offending part for bad syntax, and when the expression would
 * produce more than `limit` names.
 */
export function expandHostlist(expr: string, limit: number = DEFAULT_EXPAND_LIMIT): string[] {
  const text = expr.trim()
  if (text === '') return []
  const items: Item[] = []
  let total = 0
  for (const raw of splitItems(expr, text)) {
    const item = parseItem(expr, raw)
    total += item.count
    if (total > limit)
      throw new HostlistError(expr, raw, `hostlist "${clip(expr)}" expands to more than ${limit} hosts (limit reached at "${clip(raw)}")`)
    items.push(item)
  }
  const out: string[] = new Array(total)
  let k = 0
  for (const item of items) k = emitItem(item, out, k)
  return out
}

/** A HostlistError whose message starts with the whole expression. */
function fail(expr: string, part: string, message: string): HostlistError {
  return new HostlistError(expr, part, `invalid hostlist "${clip(expr)}": ${message}`)
}

/** Split on commas outside brackets, checking that brackets pair up and items are not empty. */
function splitItems(expr: string, text: string): string[] {
  const items: string[] = []
  let start = 0
  let open = -1
  // The item that starts at `start`, for messages (up to the next comma outside brackets, roughly).
  const itemAt = (from: number) => {
    const comma = text.indexOf(',', Math.max(from, open))
    return text.slice(start, comma < 0 ? text.length : comma)
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === '[') {
      if (open >= 0) throw fail(expr, itemAt(i), `"[" inside brackets in "${clip(itemAt(i))}"`)
      open = i
    } else if (c === ']') {
      if (open < 0) throw fail(expr, itemAt(i), `"]" without a "[" before it in "${clip(itemAt(i))}"`)
      open = -1
    } else if (c === ',' && open < 0) {
      items.push(checkItem(expr, text, start, i))
      start = i + 1
    } else if (text.charCodeAt(i) <= 32) {
      throw fail(expr, itemAt(i), `whitespace or a control character in "${clip(itemAt(i))}" (separate host names with commas only)`)
    }
  }
  if (open >= 0) throw fail(expr, text.slice(start), `"[" is never closed in "${clip(text.slice(start))}"`)
  items.push(checkItem(expr, text, start, text.length))
  return items
}

function checkItem(expr: string, text: string, start: number, end: number): string {
  if (start === end) {
    const where = start === 0 ? 'at the start' : end === text.length ? 'at the end' : `after "${clip(text.slice(0, start - 1))}"`
    throw fail(expr, '', `empty host name ${where} (two commas in a row, or a comma at either end)`)
  }
  return text.slice(start, end)
}

function parseItem(expr: string, raw: string): Item {
  const open = raw.indexOf('[')
  if (open < 0) return {literals: [raw], groups: [], count: 1}
  const literals: string[] = []
  const groups: Range[][] = []
  let count = 1
  let pos = 0
  for (let i = open; i >= 0; i = raw.indexOf('[', pos)) {
    const close = raw.indexOf(']', i) // splitItems guarantees it exists
    literals.push(raw.slice(pos, i))
    const ranges = parseRangeList(expr, raw, raw.slice(i + 1, close))
    let n = 0
    for (const r of ranges) n += r.hi - r.lo + 1
    count *= n
    groups.push(ranges)
    pos = close + 1
  }
  if (pos < raw.length)
    throw fail(expr, raw.slice(pos), `"${clip(raw.slice(pos))}" after the last "]" in "${clip(raw)}" (Slurm accepts nothing after the last bracket group)`)
  return {literals, groups, count}
}

const RANGE = /^(\d+)(?:-(\d+))?$/

function parseRangeList(expr: string, raw: string, body: string): Range[] {
  const where = raw === expr.trim() ? '' : ` in "${clip(raw)}"`
  if (body === '') throw fail(expr, '[]', `empty brackets "[]"${where}`)
  const ranges: Range[] = []
  for (const part of body.split(',')) {
    if (part === '') throw fail(expr, `[${body}]`, `empty range in "[${clip(body)}]"${where}`)
    const m = RANGE.exec(part)
    if (!m) throw fail(expr, part, `"${clip(part)}"${where} is not a number or a range of numbers like 1-10`)
    const lo = Number(m[1])
    const hi = m[2] === undefined ? lo : Number(m[2])
    if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi)) throw fail(expr, part, `number too large in "${clip(part)}"${where}`)
    if (hi < lo) throw fail(expr, part, `reversed range "${part}"${where}: the first number must not be larger than the second`)
    if (hi - lo + 1 > SLURM_MAX_RANGE)
      throw fail(expr, part, `range "${part}"${where} has ${hi - lo + 1} hosts; Slurm refuses a range of more than ${SLURM_MAX_RANGE} (write it as several: 1-65536,65537-…)`)
    ranges.push({lo, hi, width: m[1].length})
  }
  return ranges
}

function groupValues(ranges: Range[]): string[] {
  const values: string[] = []
  for (const r of ranges) for (let n = r.lo; n <= r.hi; n++) values.push(pad(n, r.width))
  return values
}

function emitItem(item: Item, out: string[], k: number): number {
  const {literals, groups} = item
  if (groups.length === 0) {
    out[k++] = literals[0]
    return k
  }
  if (groups.length === 1) {
    const pre = literals[0]
    for (const r of groups[0]) for (let n = r.lo; n <= r.hi; n++) out[k++] = pre + pad(n, r.width)
    return k
  }
  // Slurm's order: the last group varies fastest, then group 0, 1, …, and group g-2 slowest.
  const g = groups.length
  const values = groups.map(groupValues)
  const order: number[] = [g - 1]
  for (let d = 0; d < g - 1; d++) order.push(d) // fastest first
  const idx = new Array<number>(g).fill(0)
  for (let t = 0; t < item.count; t++) {
    let name = ''
    for (let d = 0; d < g; d++) name += literals[d] + values[d][idx[d]]
    out[k++] = name
    for (const d of order) {
      if (++idx[d] < values[d].length) break
      idx[d] = 0
    }
  }
  return k
}

function clip(s: string, max = 80): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`
}

// ---------------------------------------------------------------------------------------------------
// Compression

/**
 * Natural order: digit runs compare as numbers ("n2" < "n10"), everything else by UTF-16 code unit.
 * Ties (same numbers written with different zero padding) fall back to plain comparison, so the order
 * is total and deterministic (no locale).
 */
function naturalCompare(a: string, b: string): number {
  const la = a.length
  const lb = b.length
  let i = 0
  let j = 0
  while (i < la && j < lb) {
    const ca = a.charCodeAt(i)
    const cb = b.charCodeAt(j)
    if (isDigit(ca) && isDigit(cb)) {
      let ie = i
      while (ie < la && isDigit(a.charCodeAt(ie))) ie++
      let je = j
      while (je < lb && isDigit(b.charCodeAt(je))) je++
      let is = i
      while (is < ie - 1 && a.charCodeAt(is) === 48) is++
      let js = j
      while (js < je - 1 && b.charCodeAt(js) === 48) js++
      if (ie - is !== je - js) return ie - is - (je - js)
      for (let x = 0; x < ie - is; x++) {
        const d = a.charCodeAt(is + x) - b.charCodeAt(js + x)
        if (d !== 0) return d
      }
      i = ie
      j = je
    } else {
      if (ca !== cb) return ca - cb
      i++
      j++
    }
  }
  if (la - i !== lb - j) return la - i - (lb - j)
  return a < b ? -1 : a > b ? 1 : 0
}

/** One prefix's numbers, each encoded as num * 16 + width (exact: num < 10^14, width <= 14). */
interface Group {
  key: string
  /** undefined for a name without a numeric part */
  codes?: number[]
}

/** Space and control characters, comma, brackets: never in a name Slurm can read back. */
const isBadNameChar = (c: number) => c <= 32 || c === 44 || c === 91 || c === 93

function badName(name: string): HostlistError {
  const what = name === '' ? 'an empty host name' : `host name "${clip(name)}" (it contains whitespace, a comma or a bracket)`
  return new HostlistError(name, name, `cannot compress ${what}`)
}

/**
 * Compress host names into a Slurm hostlist expression: sorted (natural order of prefixes, then
 * numbers), deduplicated, consecutive numbers of a prefix as ranges. O(n log n). Equal to what
 * `scontrol show hostlist` prints for the same names sorted and deduplicated (see the notes at the top
 * of this file for the one deliberate difference), and expands back to the same set.
 */
export function compressHostlist(names: readonly string[]): string {
  const byPrefix = new Map<string, Group>()
  const singles = new Set<string>()
  let last: Group | undefined // names usually come in runs of one prefix: skip the lookup then
  for (const name of names) {
    const len = name.length
    let i = len
    while (i > 0) {
      const c = name.charCodeAt(i - 1)
      if (c < 48 || c > 57) break
      i--
    }
    const width = len - i
    if (width === 0 || width > MAX_DIGITS) {
      if (len === 0 || hasBadChar(name)) throw badName(name)
      singles.add(name)
      continue
    }
    let num = 0
    for (let p = i; p < len; p++) num = num * 10 + (name.charCodeAt(p) - 48)
    const prefix = name.slice(0, i) // (cheaper than name.startsWith(last.key), measured)
    if (last === undefined || prefix !== last.key) {
      last = byPrefix.get(prefix)
      if (last === undefined) {
        if (hasBadChar(prefix)) throw badName(name) // checked once per prefix; the rest are digits
        byPrefix.set(prefix, (last = {key: prefix, codes: []}))
      }
    }
    last.codes!.push(num * 16 + width)
  }

  const groups: Group[] = [...byPrefix.values()]
  for (const s of singles) groups.push({key: s})
  groups.sort((a, b) => naturalCompare(a.key, b.key) || (a.codes ? 1 : 0) - (b.codes ? 1 : 0))

  const out: string[] = []
  for (const g of groups) out.push(g.codes ? compressGroup(g.key, g.codes) : g.key)
  return out.join(',')
}

function hasBadChar(s: string): boolean {
  for (let p = 0; p < s.length; p++) if (isBadNameChar(s.charCodeAt(p))) return true
  return false
}

function compressGroup(prefix: string, codes: number[]): string {
  const sorted = Float64Array.from(codes).sort()
  const parts: string[] = []
  let hosts = 0
  let lo = -1
  let hi = -1
  let runWidth = 0
  let fixed = false // the run's lower bound is zero-padded, so its width is fixed
  let prev = -1
  for (let k = 0; k < sorted.length; k++) {
    const code = sorted[k]
    if (code === prev) continue // duplicate name
    prev = code
    const width = code % 16
    const num = (code - width) / 16
    const natural = width === 1 || num >= POW10[width - 1] // no leading zero
    hosts++
    if (lo >= 0 && num === hi + 1 && (fixed ? width === runWidth || (natural && width > runWidth) : natural)) {
      hi = num
      continue
    }
    if (lo >= 0) pushRun(parts, lo, hi, runWidth)
    lo = hi = num
    runWidth = width
    fixed = !natural
  }
  pushRun(parts, lo, hi, runWidth)
  return hosts === 1 ? prefix + parts[0] : `${prefix}[${parts.join(',')}]`
}

/** lo..hi as "lo-hi" pieces of at most SLURM_MAX_RANGE hosts each. */
function pushRun(parts: string[], lo: number, hi: number, width: number): void {
  for (let s = lo; s <= hi; s += SLURM_MAX_RANGE) {
    const e = Math.min(hi, s + SLURM_MAX_RANGE - 1)
    parts.push(s === e ? pad(s, width) : `${pad(s, width)}-${pad(e, width)}`)
  }
}
