// What a local GPU node gets of this machine's NVIDIA stack when it boots (driver.ts):
// - its own GPUs' device files, as gres.conf gives them to it (finish writes one line per local GPU node),
//   plus NVIDIA's control devices; no other GPU's device file exists in its /dev, so nvidia-smi and CUDA
//   in its jobs see its GPUs only (as in a container: the driver enumerates the device files it can open);
// - the host's driver user-space (nvidia-smi, libcuda, libnvidia-ml, …), bound read-only at the same
//   paths: it must match the host's kernel module, so an image never carries its own (image-steps.ts).
// `gpuRoot` is '/' except under a stand-in (src/lib/stand-in.ts driver.gpuRoot): a tree of stand-in files.
import {existsSync, lstatSync, readdirSync, readFileSync} from 'node:fs'
import {dirname, join} from 'node:path'

import {expandHostlist} from '../../slurm/hostlist.js'

/** NVIDIA's devices every GPU node needs besides its GPUs' (nvidia-caps: MIG's capability devices). */
export const NVIDIA_CONTROL_DEVICES = ['nvidiactl', 'nvidia-uvm', 'nvidia-uvm-tools', 'nvidia-modeset', 'nvidia-caps'] as const

/**
 * The device files gres.conf gives `node` (File= of its Name=gpu lines, expanded), or undefined when no
 * line names it. gres.conf is Slurm's own format: `NodeName=<hostlist> Name=gpu Type=h100 File=/dev/nvidia[0-1]`.
 */
export function gpuFilesOf(gresConf: string, node: string): string[] | undefined {
  let files: string[] | undefined
  for (const raw of gresConf.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim()
    if (!line) continue
    const pairs = new Map<string, string>()
    for (const word of line.split(/\s+/)) {
      const eq = word.indexOf('=')
      if (eq > 0) pairs.set(word.slice(0, eq).toLowerCase(), word.slice(eq + 1))
    }
    const names = pairs.get('nodename')
    const file = pairs.get('file')
    if (pairs.get('name') !== 'gpu' || !names || !file) continue
    let mine: boolean
    try {
      mine = expandHostlist(names).includes(node)
    } catch {
      continue // a line Slurm would refuse is slurmd's to report
    }
    if (mine) files = [...(files ?? []), ...expandHostlist(file)]
  }
  return files
}

/** gres.conf next to slurm.conf (Slurm's own rule), or '' when there is none. */
export function readGresConf(confPath: string): string {
  try {
    return readFileSync(join(dirname(confPath), 'gres.conf'), 'utf8')
  } catch {
    return ''
  }
}

/** The programs and libraries of NVIDIA's driver user-space a job may use (nvidia-container-toolkit's "utility" and "compute" sets). */
const DRIVER_PROGRAMS = ['nvidia-smi', 'nvidia-debugdump', 'nvidia-cuda-mps-control', 'nvidia-cuda-mps-server']
const DRIVER_LIBRARIES =
  /^lib(cuda|cudadebugger|nvidia-ml|nvidia-cfg|nvidia-ptxjitcompiler|nvidia-nvvm|nvidia-gpucomp|nvidia-allocator|nvidia-opencl|nvidia-pkcs11(-openssl3)?)\.so(\.|$)/
/** Where Debian, Ubuntu and NVIDIA's own installer put them (merged /usr: /bin and /lib are the same directories). */
const PROGRAM_DIRS = ['usr/bin', 'usr/local/bin']
const LIBRARY_DIRS = ['usr/lib/x86_64-linux-gnu', 'usr/lib/aarch64-linux-gnu', 'usr/lib64', 'usr/lib']

/**
 * The host's driver user-space under `gpuRoot`: each file (or symbolic link, e.g. libcuda.so.1 →
 * libcuda.so.580.95.05) with the path it gets in the node (its path below gpuRoot). Empty on a machine
 * without NVIDIA's driver.
 */
export function driverUserspace(gpuRoot: string): Array<{source: string; target: string}> {
  const out: Array<{source: string; target: string}> = []
  const add = (rel: string) => {
    const source = join(gpuRoot, rel)
    try {
      const st = lstatSync(source)
      if (st.isFile() || st.isSymbolicLink()) out.push({source, target: `/${rel}`})
    } catch {
      // not there
    }
  }
  for (const dir of PROGRAM_DIRS) for (const p of DRIVER_PROGRAMS) add(join(dir, p))
  for (const dir of LIBRARY_DIRS) {
    const abs = join(gpuRoot, dir)
    if (!existsSync(abs)) continue
    for (const f of readdirSync(abs).sort()) if (DRIVER_LIBRARIES.test(f)) add(join(dir, f))
  }
  return out
}
