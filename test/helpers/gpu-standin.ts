// A stand-in for this machine's NVIDIA stack, as a tree citc is pointed at (the stand-in's driver.gpuRoot,
// docs/stand-ins.md#gpus). Used where there is no GPU:
// - proc/driver/nvidia/gpus/<bus>/information, as the kernel module writes it (test/doubles/nvidia-gpus.ts);
// - dev/nvidia<minor>, dev/nvidiactl, dev/nvidia-uvm: character devices (with `devices`, root only:
//   mknod; copies of /dev/null's numbers, so opening one is harmless);
// - usr/bin/nvidia-smi: a script that, like the real one, lists the GPUs whose device file it can
//   see — in a node, exactly the node's own;
// - usr/lib/x86_64-linux-gnu/libcuda.so.1 → libcuda.so.580.95.05 and libnvidia-ml.so.1 → …: the
//   driver's libraries as a symbolic link to a versioned file (content: a marker).
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {gpuInformation} from '../doubles/nvidia-gpus.js'

export const STANDIN_DRIVER = '580.95.05'
export const STANDIN_MODEL = 'NVIDIA H100 80GB HBM3'

const NVIDIA_SMI = `#!/bin/sh
# citc's stand-in nvidia-smi: -L lists the GPUs whose device file this process sees.
[ "$1" = -L ] || { echo "stand-in nvidia-smi: only -L" >&2; exit 2; }
n=0
for d in /dev/nvidia[0-9]*; do
  [ -c "$d" ] || continue
  echo "GPU $n: ${STANDIN_MODEL} (UUID: GPU-citc-standin-\${d#/dev/nvidia})"
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "No devices were found"; exit 6; }
`

/** A stand-in tree with `count` GPUs (minors 0..count-1); device files only when `devices` (needs root). */
export function makeGpuStandin(count: number, opts: {devices?: boolean; dir?: string} = {}): string {
  const root = opts.dir ?? mkdtempSync(join(tmpdir(), 'citc-gpu-standin-'))
  for (let minor = 0; minor < count; minor++) {
    const bus = `0000:${(0x17 + minor).toString(16).padStart(2, '0')}:00.0`
    const dir = join(root, 'proc/driver/nvidia/gpus', bus)
    mkdirSync(dir, {recursive: true})
    writeFileSync(join(dir, 'information'), gpuInformation({model: STANDIN_MODEL, minor, bus}))
  }
  mkdirSync(join(root, 'dev'), {recursive: true})
  if (opts.devices) {
    for (const name of [...Array.from({length: count}, (_, i) => `nvidia${i}`), 'nvidiactl', 'nvidia-uvm']) {
      execFileSync('mknod', ['-m', '0666', join(root, 'dev', name), 'c', '1', '3'])
    }
  }
  mkdirSync(join(root, 'usr/bin'), {recursive: true})
  writeFileSync(join(root, 'usr/bin/nvidia-smi'), NVIDIA_SMI, {mode: 0o755})
  const lib = join(root, 'usr/lib/x86_64-linux-gnu')
  mkdirSync(lib, {recursive: true})
  for (const name of ['libcuda', 'libnvidia-ml']) {
    writeFileSync(join(lib, `${name}.so.${STANDIN_DRIVER}`), `stand-in ${name}\n`)
    symlinkSync(`${name}.so.${STANDIN_DRIVER}`, join(lib, `${name}.so.1`))
  }
  // Not the driver's: never bound into a node.
  writeFileSync(join(lib, 'libssl.so.3'), 'not nvidia\n')
  return root
}
