// citc-gpu-check (playbooks/roles/nvidia_gpu/files/citc-gpu-check), the program systemd runs before
// slurmd on GPU nodes, run for real by sh. What it talks to cannot exist here (no GPU, no NVIDIA driver,
// no node of a cluster), so PATH starts with STAND-INS written by this test: `nvidia-smi` (lists
// STUB_GPUS GPUs and creates the device files in STUB_CREATE, as the real one does when it opens the
// driver), `hostname` (answers STUB_HOSTNAME) and `scontrol`, which records `update` calls and hands
// `show hostnames` to the real scontrol, so hostlists are expanded by Slurm's own code. The gres.conf
// is what citc's renderer writes for real catalogue shapes, its /dev/nvidia paths moved to a temp dir.
import {spawnSync} from 'node:child_process'
import {chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeEach, describe, expect, it} from 'vitest'

import {catalogueFor} from '../../src/lib/providers/catalogues.js'
import {generateConfig} from '../../src/lib/slurm/generate.js'
import {defaultElasticSettings} from '../../src/lib/slurm/render.js'
import {awsModule} from '../../src/lib/providers/aws/index.js'

const SCRIPT = join(import.meta.dirname, '../../playbooks/roles/nvidia_gpu/files/citc-gpu-check')

const work = mkdtempSync(join(tmpdir(), 'citc-gpu-check-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

const realScontrol = spawnSync('sh', ['-c', 'command -v scontrol'], {encoding: 'utf8'}).stdout.trim()
if (!realScontrol) throw new Error('scontrol is needed for this test (hostlist expansion)')

// scontrol reads a slurm.conf even to expand a hostlist: a minimal one of the test's own.
const slurmConf = join(work, 'slurm.conf')
writeFileSync(slurmConf, 'ClusterName=t\nSlurmctldHost=localhost\n')

const stubs = join(work, 'stand-ins')
mkdirSync(stubs)
const log = join(work, 'calls.log')
const smiCount = join(work, 'smi-q-count')
const stub = (name: string, body: string) => {
  writeFileSync(join(stubs, name), `#!/bin/sh\n# STAND-IN for ${name}: written by test/playbooks/gpu-check.test.ts\n${body}\n`)
  chmodSync(join(stubs, name), 0o755)
}
stub('hostname', '[ "$1" = -s ] || exit 2\necho "$STUB_HOSTNAME"')
stub(
  'nvidia-smi',
  [
    `echo "nvidia-smi $*" >> ${log}`,
    '[ -z "${STUB_SMI_FAIL:-}" ] || { echo "$STUB_SMI_FAIL"; exit 9; }',
    // -q: the next of the reports in STUB_SMI_Q (files, one per call; the last one repeats).
    `if [ "$1" = -q ]; then n=$(cat ${smiCount} 2>/dev/null || echo 0); echo $((n + 1)) > ${smiCount}; set -- \${STUB_SMI_Q:-}; shift $((n < $# ? n : $# - 1)) 2>/dev/null; [ $# -gt 0 ] && cat "$1"; exit 0; fi`,
    'for f in ${STUB_CREATE:-}; do : > "$f"; done',
    'i=0; while [ "$i" -lt "${STUB_GPUS:-0}" ]; do echo "GPU $i: NVIDIA L4 (UUID: GPU-stand-in-$i)"; i=$((i + 1)); done',
  ].join('\n'),
)
stub('systemctl', [`echo "systemctl $*" >> ${log}`, '[ "$1" = is-active ] || exit 2', 'echo "$STUB_FM_STATE"', '[ "$STUB_FM_STATE" = active ]'].join('\n'))
// Fabric Manager's program, present only when a test puts this directory on PATH (never run).
const fmBin = join(work, 'fabricmanager-bin')
mkdirSync(fmBin)
writeFileSync(join(fmBin, 'nv-fabricmanager'), '#!/bin/sh\n# STAND-IN: present, never run\nexit 99\n')
chmodSync(join(fmBin, 'nv-fabricmanager'), 0o755)
stub(
  'scontrol',
  [
    `if [ "$1 $2" = "show hostnames" ]; then exec ${realScontrol} "$@"; fi`,
    // One line per call, each argument in brackets, so the test sees exactly what argv was.
    `printf 'scontrol' >> ${log}; for a in "$@"; do printf ' [%s]' "$a" >> ${log}; done; echo >> ${log}`,
  ].join('\n'),
)

// Where the device files of this "node" live, and the gres.conf citc renders for two GPU groups:
// demo-g6-12xlarge-[0001-0004] with 4 L4s, demo-g6-xlarge-[0001-0002] with 1.
const dev = join(work, 'dev')
mkdirSync(dev)
const rendered = generateConfig({
  provider: 'aws',
  slurm: awsModule.slurm,
  clusterId: 'demo',
  limits: {
    entries: [
      {shape: 'g6.12xlarge', count: 4, where: 'l:1:1'},
      {shape: 'g6.xlarge', count: 2, where: 'l:2:1'},
      {shape: 'c5.xlarge', count: 2, where: 'l:3:1'},
    ],
    staticNodes: [],
    partitions: [],
    settings: {},
  },
  catalogue: catalogueFor('aws'),
  elastic: defaultElasticSettings(awsModule.slurm.power),
  base: {clusterId: 'demo', provider: 'aws', controllerHost: 'demo-mgmt', slurmUser: 'slurm', accounting: false},
}).gresConf
const gresConf = join(work, 'gres.conf')
writeFileSync(gresConf, rendered.replaceAll('File=/dev/nvidia', `File=${dev}/nvidia`))

const devices = (n: number) => Array.from({length: n}, (_, i) => join(dev, `nvidia${i}`))

// Stand-in /sys/bus/pci/devices trees: vendor and class files as the kernel writes them.
const pciTree = (name: string, devicesByAddress: Record<string, [vendor: string, cls: string]>) => {
  const root = join(work, name)
  for (const [address, [vendor, cls]] of Object.entries(devicesByAddress)) {
    mkdirSync(join(root, address), {recursive: true})
    writeFileSync(join(root, address, 'vendor'), `${vendor}\n`)
    writeFileSync(join(root, address, 'class'), `${cls}\n`)
  }
  return root
}
// An HGX H100 node: 2 of its GPUs (3D controller, 0x0302), 4 NVSwitches (NVIDIA bridge, 0x0680), an Intel bridge.
const pciNvswitch = pciTree('pci-hgx', {
  '0000:18:00.0': ['0x10de', '0x030200'],
  '0000:2a:00.0': ['0x10de', '0x030200'],
  '0000:05:00.0': ['0x10de', '0x068000'],
  '0000:06:00.0': ['0x10de', '0x068000'],
  '0000:07:00.0': ['0x10de', '0x068000'],
  '0000:08:00.0': ['0x10de', '0x068000'],
  '0000:00:01.0': ['0x8086', '0x060400'],
})
// A node without NVSwitches: NVIDIA GPUs, and another vendor's "other bridge" (0x0680) that is no NVSwitch.
const pciPlain = pciTree('pci-plain', {
  '0000:18:00.0': ['0x10de', '0x030200'],
  '0000:2a:00.0': ['0x10de', '0x030200'],
  '0000:00:1f.0': ['0x8086', '0x068000'],
})

/** `nvidia-smi -q` as a Hopper driver prints it, trimmed to what matters here: one Fabric section per GPU. */
const smiReport = (name: string, fabric: Array<[state: string, status: string] | undefined>) => {
  const gpus = fabric.map((f, i) =>
    [
      `GPU 00000000:${(0x18 + i * 0x12).toString(16).toUpperCase()}:00.0`,
      '    Product Name                          : NVIDIA H100 80GB HBM3',
      ...(f
        ? [
            '    Fabric',
            `        State                             : ${f[0]}`,
            `        Status                            : ${f[1]}`,
            '        CliqueId                          : 0',
            '        Health',
            '            Bandwidth                     : Full',
          ]
        : []),
      '    Compute Mode                          : Default',
    ].join('\n'),
  )
  const file = join(work, `smi-q-${name}.txt`)
  writeFileSync(file, ['==============NVSMI LOG==============', '', 'Driver Version                            : 580.95.05', `Attached GPUs                             : ${fabric.length}`, ...gpus, ''].join('\n'))
  return file
}

beforeEach(() => {
  rmSync(log, {force: true})
  rmSync(smiCount, {force: true})
  for (const f of devices(8)) rmSync(f, {force: true})
})

function check(env: Record<string, string>, args: string[] = []) {
  const r = spawnSync('sh', [SCRIPT, ...args], {
    env: {
      PATH: `${stubs}:/usr/bin:/bin`,
      SLURM_CONF: slurmConf,
      CITC_GRES_CONF: gresConf,
      CITC_GPU_CHECK_DELAY: '0',
      CITC_PCI_DEVICES: pciPlain,
      ...env,
    },
    encoding: 'utf8',
    timeout: 20_000,
  })
  if (r.error) throw r.error
  const calls = existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []
  return {code: r.status, stderr: r.stderr, calls}
}

describe('citc-gpu-check', () => {
  it('renders the gres.conf it is tested with as citc writes it', () => {
    expect(rendered).toContain('NodeName=demo-g6-12xlarge-[0001-0004] Name=gpu Type=l4 File=/dev/nvidia[0-3]\n')
    expect(rendered).toContain('NodeName=demo-g6-xlarge-[0001-0002] Name=gpu Type=l4 File=/dev/nvidia0\n')
  })

  it('all devices present once nvidia-smi has opened the driver: exit 0, no scontrol update', () => {
    const r = check({STUB_HOSTNAME: 'demo-g6-12xlarge-0003', STUB_GPUS: '4', STUB_CREATE: devices(4).join(' ')})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.calls).toEqual(['nvidia-smi -L'])
    for (const f of devices(4)) expect(existsSync(f)).toBe(true)
  })

  it('one device missing: the node is marked DOWN with the reason, exit non-zero', () => {
    const r = check({STUB_HOSTNAME: 'demo-g6-xlarge-0002', STUB_GPUS: '0', CITC_GPU_CHECK_TRIES: '2'})
    expect(r.code).toBe(1)
    const reason = `citc: gpu: ${dev}/nvidia0 missing (nvidia-smi sees 0 GPUs)`
    // Tried twice (udev may be late), then one update with the node's own name.
    expect(r.calls).toEqual(['nvidia-smi -L', 'nvidia-smi -L', `scontrol [update] [NodeName=demo-g6-xlarge-0002] [State=DOWN] [Reason=${reason}]`])
    expect(r.stderr).toContain(`${reason}: marking demo-g6-xlarge-0002 DOWN, slurmd is not started`)
  })

  it('names the first missing device, how many more, and what nvidia-smi sees', () => {
    const r = check({STUB_HOSTNAME: 'demo-g6-12xlarge-0001', STUB_GPUS: '1', STUB_CREATE: devices(1).join(' '), CITC_GPU_CHECK_TRIES: '1'})
    expect(r.code).toBe(1)
    expect(r.calls.at(-1)).toBe(
      `scontrol [update] [NodeName=demo-g6-12xlarge-0001] [State=DOWN] [Reason=citc: gpu: ${dev}/nvidia1 and 2 more missing (nvidia-smi sees 1 GPU)]`,
    )
  })

  it('says why when nvidia-smi fails (no driver): the first line of its message', () => {
    const r = check({
      STUB_HOSTNAME: 'demo-g6-xlarge-0001',
      STUB_SMI_FAIL: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.",
      CITC_GPU_CHECK_TRIES: '1',
    })
    expect(r.code).toBe(1)
    expect(r.calls.at(-1)).toContain(
      `[Reason=citc: gpu: ${dev}/nvidia0 missing (nvidia-smi failed: NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.)]`,
    )
  })

  it('a node not in gres.conf (no GPUs): exit 0 without running nvidia-smi or scontrol update', () => {
    for (const host of ['demo-c5-xlarge-0001', 'demo-g6-12xlarge-0005', 'demo-g6-xlarge']) {
      const r = check({STUB_HOSTNAME: host})
      expect(r.stderr, host).toBe('')
      expect(r.code, host).toBe(0)
      expect(r.calls, host).toEqual([])
    }
  })

  it('no gres.conf at all: exit 0, nothing run', () => {
    const r = check({STUB_HOSTNAME: 'demo-g6-xlarge-0001', CITC_GRES_CONF: join(work, 'absent.conf')})
    expect(r.code).toBe(0)
    expect(r.calls).toEqual([])
  })

  it('a line without NodeName= applies to every node; keys in any case, comments ignored', () => {
    const own = join(work, 'own-gres.conf')
    writeFileSync(own, `# a site's own gres.conf\nname=gpu type=l4 file=${dev}/nvidia[0-1]  # two GPUs everywhere\nNodeName=other-[1-9] Name=gpu File=${dev}/nvidia7\n`)
    const ok = check({STUB_HOSTNAME: 'anything', CITC_GRES_CONF: own, STUB_GPUS: '2', STUB_CREATE: devices(2).join(' ')})
    expect(ok.code).toBe(0)
    expect(ok.calls).toEqual(['nvidia-smi -L'])
  })
})

describe('citc-gpu-check on NVSwitch nodes: the fabric', () => {
  // Every node of this gres.conf has two GPUs (a line without NodeName=).
  const twoGpus = join(work, 'two-gpus-gres.conf')
  writeFileSync(twoGpus, `Name=gpu Type=h100 File=${dev}/nvidia[0-1]\n`)
  const fabric = (env: Record<string, string>) =>
    check({
      STUB_HOSTNAME: 'lab-p5-48xlarge-0001',
      CITC_GRES_CONF: twoGpus,
      STUB_GPUS: '2',
      STUB_CREATE: devices(2).join(' '),
      CITC_PCI_DEVICES: pciNvswitch,
      PATH: `${stubs}:${fmBin}:/usr/bin:/bin`,
      STUB_FM_STATE: 'active',
      CITC_FABRIC_TRIES: '2',
      ...env,
    })
  const down = (reason: string) => `scontrol [update] [NodeName=lab-p5-48xlarge-0001] [State=DOWN] [Reason=${reason}]`

  it('fabric up (Fabric Manager active, every GPU registered): exit 0, nothing marked', () => {
    const r = fabric({STUB_SMI_Q: smiReport('up', [['Completed', 'Success'], ['Completed', 'Success']])})
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.calls).toEqual(['nvidia-smi -L', 'systemctl is-active nvidia-fabricmanager', 'nvidia-smi -q'])
  })

  it('Fabric Manager failed: the node is marked DOWN with the reason, exit non-zero', () => {
    const r = fabric({STUB_FM_STATE: 'failed'})
    expect(r.code).toBe(1)
    const reason = 'citc: gpu: NVSwitch fabric not up (nvidia-fabricmanager failed)'
    // Tried CITC_FABRIC_TRIES times, then one update.
    expect(r.calls).toEqual(['nvidia-smi -L', 'systemctl is-active nvidia-fabricmanager', 'systemctl is-active nvidia-fabricmanager', down(reason)])
    expect(r.stderr).toContain(`${reason}: marking lab-p5-48xlarge-0001 DOWN, slurmd is not started`)
  })

  it('Fabric Manager not in the image: says so, and what to run', () => {
    const r = fabric({PATH: `${stubs}:/usr/bin:/bin`, CITC_FABRIC_TRIES: '1'})
    expect(r.code).toBe(1)
    expect(r.calls.at(-1)).toBe(down('citc: gpu: NVSwitch fabric not up (no nvidia-fabricmanager in this image: citc rebuild-image)'))
  })

  it('a GPU still registering, or registered with an error: counted in the reason', () => {
    const pending = fabric({STUB_SMI_Q: smiReport('pending', [['Completed', 'Success'], ['In Progress', 'N/A']])})
    expect(pending.code).toBe(1)
    expect(pending.calls.at(-1)).toBe(down('citc: gpu: NVSwitch fabric not up (fabric state In Progress on 1 of 2 GPUs)'))
    const failed = fabric({STUB_SMI_Q: smiReport('failed', [['Completed', 'NVML_ERROR_UNKNOWN'], ['Completed', 'NVML_ERROR_UNKNOWN']])})
    expect(failed.calls.at(-1)).toBe(down('citc: gpu: NVSwitch fabric not up (fabric status NVML_ERROR_UNKNOWN on 2 of 2 GPUs)'))
  })

  it('registration that completes while it waits: exit 0 on the later try', () => {
    const r = fabric({STUB_SMI_Q: `${smiReport('starting', [['Not Started', 'N/A'], ['In Progress', 'N/A']])} ${smiReport('done', [['Completed', 'Success'], ['Completed', 'Success']])}`})
    expect(r.code).toBe(0)
    expect(r.calls.filter((c) => c === 'nvidia-smi -q')).toHaveLength(2)
    expect(r.calls.some((c) => c.startsWith('scontrol'))).toBe(false)
  })

  it('GPUs that report no fabric registration (Ampere: no Fabric section, or N/A): the active service is enough', () => {
    expect(fabric({STUB_SMI_Q: smiReport('ampere', [undefined, undefined])}).code).toBe(0)
    expect(fabric({STUB_SMI_Q: smiReport('na', [['N/A', 'N/A'], ['N/A', 'N/A']])}).code).toBe(0)
  })

  it('a node without NVSwitches: the fabric is not checked, even with Fabric Manager failed or absent', () => {
    const cases: Array<Record<string, string>> = [{STUB_FM_STATE: 'failed'}, {PATH: `${stubs}:/usr/bin:/bin`}]
    for (const env of cases) {
      rmSync(log, {force: true})
      const r = fabric({CITC_PCI_DEVICES: pciPlain, ...env})
      expect(r.code).toBe(0)
      expect(r.calls).toEqual(['nvidia-smi -L'])
    }
  })

  it('a missing device is reported first; the fabric is not checked then', () => {
    const r = fabric({STUB_CREATE: devices(1).join(' '), CITC_GPU_CHECK_TRIES: '1', STUB_FM_STATE: 'failed'})
    expect(r.code).toBe(1)
    expect(r.calls).toEqual(['nvidia-smi -L', down(`citc: gpu: ${dev}/nvidia1 missing (nvidia-smi sees 2 GPUs)`)])
  })

  it('--has-nvswitch (Fabric Manager’s ExecCondition=): 0 with NVSwitches, 1 without, nothing run', () => {
    expect(check({CITC_PCI_DEVICES: pciNvswitch}, ['--has-nvswitch']).code).toBe(0)
    expect(check({CITC_PCI_DEVICES: pciPlain}, ['--has-nvswitch']).code).toBe(1)
    expect(check({CITC_PCI_DEVICES: join(work, 'no-such-dir')}, ['--has-nvswitch']).code).toBe(1)
    expect(check({CITC_PCI_DEVICES: pciNvswitch, STUB_HOSTNAME: 'x'}, ['--has-nvswitch']).calls).toEqual([])
  })
})
