// `citc node add` wall time: one machine, then four at once, each a fresh "machine" of the test
// fixture (test/helpers/machines.ts: namespaces with their own network, sshd and a Debian 12 root
// filesystem whose apt cache holds the packages, so nothing is downloaded). Goal (issue #20): four
// machines in ≤ 60 s. Also times a re-run that changes nothing, and `node remove` of all five.
// It makes its own local cluster (`citc create`, ~2.5 min, not timed) in a data dir of its own and
// destroys it at the end; root only, and no other citc cluster may live on this machine.
// Run: npm run build && npx tsx bench/node-add.ts
import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'

import {clusterNetwork, machineRootfs, startMachine, type Machine} from '../test/helpers/machines.js'
import {check, CITC, seconds} from './child.js'

const NAME = 'bench'
const work = mkdtempSync(join(tmpdir(), 'citc-bench-node-add-'))
const env = {...process.env, CITC_DATA_DIR: join(work, 'data')}
const key = join(work, 'id_ed25519')
execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key])
writeFileSync(join(work, 'limits.yaml'), 'local.small: 1\n')

const rootfs = await machineRootfs()
const net = await clusterNetwork()
const machines: Machine[] = []
const citc = (args: string[]) => check(process.execPath, [CITC, ...args], {env, timeoutMs: 30 * 60_000})
const timed = async (label: string, args: string[]) => {
  const t = performance.now()
  await citc(args)
  const ms = performance.now() - t
  console.log(`${label.padEnd(44)} ${seconds(ms)}`)
  return ms
}
try {
  for (let i = 0; i < 5; i++) {
    machines.push(await startMachine({net, name: `b${i + 1}`, index: i + 2, rootfs, authorizedKey: readFileSync(`${key}.pub`, 'utf8'), sharedDir: '/mnt/shared'}))
  }
  await citc(['create', '--provider', 'local', '--name', NAME, '--limits', join(work, 'limits.yaml'), '--yes'])
  const add = (ms: Machine[]) => ['node', 'add', '-c', NAME, ...ms.map((m) => m.address), ...ms.flatMap((m) => ['--host-key', m.hostKeyFingerprint]), '--key', key, '--shared', 'none', '--yes']
  console.log(`node add (packages from the machines' apt cache), ${execFileSync('nproc').toString().trim()} cores:`)
  await timed('one machine', add(machines.slice(0, 1)))
  const four = await timed('four machines at once', add(machines.slice(1)))
  await timed('one machine again (nothing changes)', ['node', 'add', '-c', NAME, machines[0].address, '--key', key, '--shared', 'none', '--yes'])
  await timed('node remove of all five', ['node', 'remove', '-c', NAME, ...machines.map((m) => m.name), '--yes'])
  console.log(`goal: four machines ≤ 60 s: ${four <= 60_000 ? 'met' : 'missed'}`)
} finally {
  await citc(['destroy', NAME, '--yes']).catch((error) => console.error(`destroy failed: ${error}`))
  for (const m of machines) await m.destroy()
  await net.close()
  rmSync(work, {recursive: true, force: true})
}
