// The collector's three outputs from a real Slurm 22.05 (made by fixtures/capture.ts) and the clock
// at capture time.
import {readFileSync} from 'node:fs'

const read = (name: string) => readFileSync(new URL(`fixtures/${name}`, import.meta.url), 'utf8')

export const scontrolNodes = read('scontrol-show-node-22.05.txt')
export const squeueJobs = read('squeue-22.05.txt')
export const sdiagReport = read('sdiag-22.05.txt')
export const capturedAt = Number(read('captured-at.txt').trim())

/** One node's line of the scontrol fixture. */
export const nodeLine = (name: string) => scontrolNodes.split('\n').find((l) => l.startsWith(`NodeName=${name} `))!
