// A gzipped tar archive written here, in Node: the same input gives the same bytes on any machine
// (entries sorted, one fixed mtime, owner 0, gzip without a timestamp), so its sha256 says whether a
// management node already has exactly this content. GNU tar and bsdtar on this machine differ in the
// options that would make theirs reproducible; every tar reads this one (ustar, with a pax record
// for names longer than ustar holds).
import {createHash} from 'node:crypto'
import {createWriteStream, readFileSync} from 'node:fs'
import {constants, createGzip} from 'node:zlib'

export type TarEntry =
  | {type: 'dir'; path: string}
  | {type: 'file'; path: string; /** read when written */ source: string; executable: boolean}
  | {type: 'symlink'; path: string; target: string}

/** 1985-10-26, the date npm pack gives every file: what matters is that it never changes. */
const MTIME = 499_162_500
const BLOCK = 512

const octal = (n: number, width: number) => n.toString(8).padStart(width - 1, '0') + '\0'

function header(o: {name: string; mode: number; size: number; type: string; linkname?: string; prefix?: string}): Buffer {
  const h = Buffer.alloc(BLOCK)
  h.write(o.name, 0, 100, 'utf8')
  h.write(octal(o.mode, 8), 100, 'ascii')
  h.write(octal(0, 8), 108, 'ascii')
  h.write(octal(0, 8), 116, 'ascii')
  h.write(octal(o.size, 12), 124, 'ascii')
  h.write(octal(MTIME, 12), 136, 'ascii')
  h.write(' '.repeat(8), 148, 'ascii')
  h.write(o.type, 156, 'ascii')
  if (o.linkname) h.write(o.linkname, 157, 100, 'utf8')
  h.write('ustar\0', 257, 'ascii')
  h.write('00', 263, 'ascii')
  if (o.prefix) h.write(o.prefix, 345, 155, 'utf8')
  let sum = 0
  for (const b of h) sum += b
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii')
  return h
}

/** A pax record "LEN key=value\n", LEN counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`
  let len = Buffer.byteLength(body) + 1
  while (String(len).length + Buffer.byteLength(body) !== len) len = String(len).length + Buffer.byteLength(body)
  return `${len}${body}`
}

const padding = (size: number) => Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK)

/** The blocks of one entry: a pax header first when the name or link target does not fit ustar. */
function* entryBlocks(e: TarEntry): Generator<Buffer> {
  const name = e.type === 'dir' ? `${e.path.replace(/\/$/, '')}/` : e.path
  const data = e.type === 'file' ? readFileSync(e.source) : Buffer.alloc(0)
  const linkname = e.type === 'symlink' ? e.target : undefined
  let ustarName = name
  let prefix: string | undefined
  const pax: string[] = []
  if (Buffer.byteLength(name) > 100) {
    // ustar's prefix/name split, else a pax path record.
    const cut = name.lastIndexOf('/', name.length - 2)
    if (cut > 0 && Buffer.byteLength(name.slice(0, cut)) <= 155 && Buffer.byteLength(name.slice(cut + 1)) <= 100) {
      prefix = name.slice(0, cut)
      ustarName = name.slice(cut + 1)
    } else {
      pax.push(paxRecord('path', name))
      ustarName = name.slice(0, 99)
    }
  }
  if (linkname && Buffer.byteLength(linkname) > 100) pax.push(paxRecord('linkpath', linkname))
  if (pax.length > 0) {
    const body = Buffer.from(pax.join(''))
    yield header({name: 'PaxHeader', mode: 0o644, size: body.length, type: 'x'})
    yield body
    yield padding(body.length)
  }
  const mode = e.type === 'dir' || (e.type === 'file' && e.executable) ? 0o755 : e.type === 'symlink' ? 0o777 : 0o644
  const type = e.type === 'dir' ? '5' : e.type === 'symlink' ? '2' : '0'
  yield header({name: ustarName, prefix, mode, size: data.length, type, linkname: linkname && Buffer.byteLength(linkname) <= 100 ? linkname : undefined})
  if (data.length > 0) {
    yield data
    yield padding(data.length)
  }
}

/** Write entries (sorted by path here) as a .tar.gz; resolves with its sha256 and size. */
export async function writeTarGz(entries: TarEntry[], file: string): Promise<{sha256: string; bytes: number}> {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const hash = createHash('sha256')
  let bytes = 0
  const gzip = createGzip({level: constants.Z_DEFAULT_COMPRESSION})
  const out = createWriteStream(file, {mode: 0o600})
  gzip.on('data', (chunk: Buffer) => {
    hash.update(chunk)
    bytes += chunk.length
  })
  const done = new Promise<void>((resolve, reject) => {
    out.on('finish', resolve)
    out.on('error', reject)
    gzip.on('error', reject)
  })
  gzip.pipe(out)
  const write = (b: Buffer) => (gzip.write(b) ? Promise.resolve() : new Promise<void>((r) => gzip.once('drain', () => r())))
  for (const e of sorted) for (const block of entryBlocks(e)) await write(block)
  // The end of the archive: two zero blocks.
  await write(Buffer.alloc(2 * BLOCK))
  gzip.end()
  await done
  return {sha256: hash.digest('hex'), bytes}
}
