// Hostlist timings: compress and expand 100,000 node names over 35 prefixes (the size of slurm.conf
// finish generates for a large cluster). Run with `npx tsx bench/hostlist.ts`.
import {performance} from 'node:perf_hooks'

import {compressHostlist, expandHostlist} from '../src/lib/slurm/hostlist.js'

const PREFIXES = 35
const TOTAL = 100_000

const prefixes = Array.from({length: PREFIXES}, (_, i) => `bench-${['c5', 'm5', 'r5', 'g4dn', 'vm-standard2'][i % 5]}-${2 ** (i % 7)}xlarge-ad${i % 3}-`)
const perPrefix = Math.ceil(TOTAL / PREFIXES)
const sorted: string[] = []
for (const p of prefixes) for (let n = 1; n <= perPrefix && sorted.length < TOTAL; n++) sorted.push(p + String(n).padStart(4, '0'))

// A seeded shuffle, and a copy with every 7th node missing (gaps make many small ranges).
let seed = 12345
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
const shuffled = [...sorted]
for (let i = shuffled.length - 1; i > 0; i--) {
  const j = Math.floor(rand() * (i + 1))
  ;[shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]]
}
const gappy = sorted.filter((_, i) => i % 7 !== 3)

function time<T>(label: string, fn: () => T, runs = 15): T {
  let result = fn() // warm-up
  for (let i = 0; i < 3; i++) result = fn()
  const ms: number[] = []
  for (let i = 0; i < runs; i++) {
    const t = performance.now()
    result = fn()
    ms.push(performance.now() - t)
  }
  ms.sort((a, b) => a - b)
  const median = ms[Math.floor(ms.length / 2)]
  console.log(`${label.padEnd(52)} median ${median.toFixed(2).padStart(7)} ms   min ${ms[0].toFixed(2).padStart(7)} ms   max ${ms.at(-1)!.toFixed(2).padStart(7)} ms`)
  return result
}

console.log(`${sorted.length} names over ${PREFIXES} prefixes, up to ${perPrefix} each (node ${process.version})\n`)
const fromSorted = time('compressHostlist, sorted input', () => compressHostlist(sorted))
const fromShuffled = time('compressHostlist, shuffled input', () => compressHostlist(shuffled))
if (fromSorted !== fromShuffled) throw new Error('compression depends on input order')
const gappyList = time(`compressHostlist, every 7th missing (${gappy.length} names)`, () => compressHostlist(gappy))
const expanded = time('expandHostlist of the compressed list', () => expandHostlist(fromSorted))
function sameNames(a: string[], b: string[]): boolean {
  const x = [...a].sort()
  const y = [...b].sort()
  return x.length === y.length && x.every((n, i) => n === y[i])
}
if (!sameNames(expanded, sorted)) throw new Error('round trip changed the names')
const expandedGappy = time('expandHostlist of the gappy list', () => expandHostlist(gappyList))
if (!sameNames(expandedGappy, gappy)) throw new Error('gappy round trip changed the names')
console.log(`\ncompressed: ${fromSorted.length} characters; gappy: ${gappyList.length} characters`)
