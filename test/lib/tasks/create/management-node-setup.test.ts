// Getting a management node ready, against a real sshd on loopback: waiting for SSH with backoff (a
// node that comes up late, one that never does, one with the wrong host key), the tools check, the
// bounded waits, and citc's bundle: built here from ./node_modules, unpacked by the install script on
// "a node" (this machine, as root would) where npm is never called, its native parts loading or falling back.
import {spawnSync} from 'node:child_process'
import {createHash} from 'node:crypto'
import {existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {CitcError} from '../../../../src/lib/errors.js'
import {installedPackage, installPackage, installTools, PACKER_IN_DISTRIBUTION, PACKER_PLUGINS, remoteCitcBin, TOOLS_SCRIPT, waitForCloudInit, waitForSsh} from '../../../../src/lib/tasks/create/management-node-setup.js'
import {bundleCitc, productionPackages} from '../../../../src/lib/tools/bundle.js'
import {localTransport} from '../../../../src/lib/transport/local.js'
import type {Transport} from '../../../../src/lib/transport/types.js'
import {ROOT} from '../../../helpers/cli.js'
import {generateEd25519KeyPair} from '../../../../src/lib/transport/ssh/index.js'
import {freePort} from '../../../helpers/slurm.js'
import {startSshd, type SshdSandbox} from '../../../helpers/sshd.js'
import {sleep} from '../../../../src/lib/proc.js'

const servers: SshdSandbox[] = []
afterAll(async () => {
  for (const s of servers) await s.stop()
})

describe('waitForSsh', () => {
  it('keeps trying with backoff until the node answers with the pinned key', async () => {
    // A node whose sshd starts only after a while, with a known host key.
    const keys = await startSshd()
    servers.push(keys)
    const port = await freePort()
    const seen: string[] = []
    const t0 = Date.now()
    const waiting = waitForSsh({
      host: '127.0.0.1',
      port,
      user: keys.user,
      privateKey: keys.clientKeyPath,
      hostKeyFingerprint: keys.hostKeyFingerprint,
      timeoutMs: 30_000,
      initialDelayMs: 300,
      report: (m) => seen.push(m),
    })
    await sleep(1500)
    const late = await startSshd({port, hostKeyFile: keys.hostKeyPath, authorizeKey: readFileSync(`${keys.clientKeyPath}.pub`, 'utf8')})
    servers.push(late)
    const t = await waiting
    try {
      expect((await t.run(['echo', 'up'])).stdout).toBe('up\n')
    } finally {
      await t.close()
    }
    expect(Date.now() - t0).toBeLessThan(15_000)
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen[0]).toMatch(/^attempt 1: cannot connect to 127\.0\.0\.1:\d+: connection refused; retrying in 0 s$/)
    expect(seen[1]).toMatch(/retrying in 1 s$/) // 0.3 s, then 0.6 s: doubling
  }, 60_000)

  it('gives up after the timeout with what the last attempt saw', async () => {
    const port = await freePort()
    const t0 = Date.now()
    const e = await waitForSsh({host: '127.0.0.1', port, user: 'root', privateKey: Buffer.from(generateEd25519KeyPair('t').privateKey), hostKeyFingerprint: 'SHA256:' + 'A'.repeat(43), timeoutMs: 2000, initialDelayMs: 200}).catch((x: unknown) => x)
    expect(e).toBeInstanceOf(CitcError)
    expect((e as CitcError).message).toMatch(/^SSH on the management node root@127\.0\.0\.1:\d+ never came up: \d+ attempt\(s\) in \d+ s, the last one: cannot connect .*connection refused$/)
    expect((e as CitcError).exitCode).toBe(4)
    // It gave up (one that never did would run into the test's limit): the seconds it took, shown in
    // the message, are this machine's speed, so only a bound far from it (20 s for a 2-s timeout).
    expect(Date.now() - t0).toBeLessThan(20_000)
  })

  it('fails at once on a host key that is not the pinned one', async () => {
    const s = await startSshd()
    servers.push(s)
    const t0 = Date.now()
    const e = (await waitForSsh({host: s.host, port: s.port, user: s.user, privateKey: s.clientKeyPath, hostKeyFingerprint: 'SHA256:' + 'B'.repeat(43), timeoutMs: 60_000}).catch((x: unknown) => x)) as CitcError
    expect(e.message).toMatch(/does not match the pinned key/)
    expect(e.hint).toMatch(/cloud-init/)
    // Not retried until the 60-s timeout: half of it is far from this machine's speed (10 s was not).
    expect(Date.now() - t0).toBeLessThan(30_000)
  })
})

describe('installTools', () => {
  it('finds Node.js >= 20, ansible-playbook and packer present here and installs nothing', async () => {
    // CI installs them (.ci/run): fail, never skip, where they are missing.
    for (const c of ['node', 'ansible-playbook', 'packer']) expect(spawnSync('sh', ['-c', `command -v ${c}`]).status, `${c} on PATH`).toBe(0)
    expect(await installTools(localTransport())).toEqual([])
  })

  it('installs Node.js 24 (the active LTS) from NodeSource and ansible-core from the distribution, apt waiting for its lock', () => {
    expect(TOOLS_SCRIPT).toMatch(/node_24\.x nodistro main/)
    expect(TOOLS_SCRIPT).toMatch(/DPkg::Lock::Timeout=600/)
    expect(TOOLS_SCRIPT).toMatch(/need="ansible-core"/)
    // Every network wait has its own bound too: apt's connections, curl's whole transfer.
    expect(TOOLS_SCRIPT).toMatch(/Acquire::https::Timeout=30/)
    expect(TOOLS_SCRIPT).toMatch(/curl -fsSL --connect-timeout 30 --max-time 120/)
  })

  it("Packer: the distribution's where apt has one (Debian 12), else HashiCorp's repository and the template's plugins", () => {
    // apt-cache policy as Debian 12 and Ubuntu 24.04 answer it (a stand-in apt-cache first on PATH).
    const answers = {
      debian: 'packer:\n  Installed: (none)\n  Candidate: 1.6.6+ds2-1+b1\n  Version table:\n',
      ubuntu: '', // no package of that name in the lists
      none: 'packer:\n  Installed: (none)\n  Candidate: (none)\n',
    }
    const bin = join(work, 'apt-cache-stand-in')
    mkdirSync(bin, {recursive: true})
    for (const [os, answer] of Object.entries(answers)) {
      writeFileSync(join(bin, 'apt-cache'), `#!/bin/sh\nprintf '%s' '${answer}'\n`, {mode: 0o755})
      const r = spawnSync('sh', ['-c', `${PACKER_IN_DISTRIBUTION}\npacker_in_distribution && echo distribution || echo hashicorp`], {encoding: 'utf8', env: {...process.env, PATH: `${bin}:${process.env.PATH}`}})
      expect(r.stdout.trim(), os).toBe(os === 'debian' ? 'distribution' : 'hashicorp')
    }
    expect(TOOLS_SCRIPT).toMatch(/https:\/\/apt\.releases\.hashicorp\.com \$\(\. \/etc\/os-release && echo "\$VERSION_CODENAME"\) main/)
    expect(PACKER_PLUGINS).toEqual(['amazon', 'googlecompute', 'oracle', 'ansible'])
    expect(TOOLS_SCRIPT).toMatch(/HOME=\/root timeout 300 packer plugins install "github\.com\/hashicorp\/\$p"/)
    expect(spawnSync('sh', ['-n', '-c', TOOLS_SCRIPT]).status).toBe(0)
  })

  it('every plugin installed from HashiCorp is one the template uses', () => {
    const template = readFileSync(join(ROOT, 'templates', 'packer', 'cloud.pkr.hcl'), 'utf8')
    for (const [plugin, uses] of [['amazon', 'source "amazon-ebs"'], ['googlecompute', 'source "googlecompute"'], ['oracle', 'source "oracle-oci"'], ['ansible', 'provisioner "ansible"']]) {
      expect(PACKER_PLUGINS).toContain(plugin)
      expect(template).toContain(uses)
    }
  })
})

const work = mkdtempSync(join(tmpdir(), 'citc-mgmt-node-setup-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

/** This machine as a management node whose PATH starts with `bin` (stand-ins for cloud-init or npm). */
function nodeWithPath(bin: string): Transport {
  const local = localTransport()
  const withPath = <T extends {env?: Record<string, string>}>(o: T = {} as T) => ({...o, env: {...o.env, PATH: `${bin}:${process.env.PATH}`}})
  return {...local, run: (argv, o) => local.run(argv, withPath(o)), check: (argv, o) => local.check(argv, withPath(o))}
}

describe('bounded waits on the node', () => {
  it("gives up on a cloud-init that never finishes, saying that is what it waited for", async () => {
    const bin = join(work, 'hanging-cloud-init')
    mkdirSync(bin)
    writeFileSync(join(bin, 'cloud-init'), '#!/bin/sh\nexec sleep 60\n', {mode: 0o755})
    const t0 = Date.now()
    const e = (await waitForCloudInit(nodeWithPath(bin), {timeoutMs: 1500}).catch((x: unknown) => x)) as CitcError
    expect(e).toBeInstanceOf(CitcError)
    expect(e.message).toBe("waiting for cloud-init's first boot on the management node: gave up after 2 s waiting for cloud-init's first boot (`cloud-init status --wait`)")
    expect(e.exitCode).toBe(4)
    expect(e.hint).toMatch(/cloud-init-output\.log/)
    expect(Date.now() - t0).toBeLessThan(15_000)
  }, 30_000)
})

describe("citc's bundle: the package with its production node_modules, installed with no registry", () => {
  let bundle: Awaited<ReturnType<typeof bundleCitc>>
  const prefix = join(work, 'prefix')
  const npmCalls = join(work, 'npm-calls')
  const noNpm = join(work, 'no-npm')

  beforeAll(async () => {
    // The published files include dist/: `npm test` builds first, as for the CLI tests.
    if (!existsSync(join(ROOT, 'dist', 'index.js'))) throw new Error('dist/ is missing: run `npm run build` first (npm test does)')
    bundle = await bundleCitc(ROOT, join(work, 'bundle'))
    // An npm that records being called and fails: the install must never need it.
    mkdirSync(noNpm)
    writeFileSync(join(noNpm, 'npm'), `#!/bin/sh\necho "npm $*" >> ${npmCalls}\nexit 1\n`, {mode: 0o755})
  }, 120_000)

  it('holds the published files and the production dependencies, not the development ones, byte for byte the same each time', async () => {
    const listing = spawnSync('tar', ['-tzf', bundle.file], {encoding: 'utf8', maxBuffer: 64 << 20}).stdout.split('\n')
    expect(listing).toContain('package/bin/run.js')
    expect(listing).toContain('package/dist/index.js')
    expect(listing).toContain('package/playbooks/management.yml')
    expect(listing).toContain('package/node_modules/ssh2/package.json')
    expect(listing).toContain('package/node_modules/@oclif/core/package.json')
    expect(listing.some((l) => l.startsWith('package/node_modules/vitest/'))).toBe(false)
    expect(listing.some((l) => l.startsWith('package/node_modules/typescript/'))).toBe(false)
    expect(listing.some((l) => l.includes('/node_modules/.bin/'))).toBe(false)
    expect(bundle.dependencies).toBe(productionPackages(ROOT).length)
    const again = await bundleCitc(ROOT, join(work, 'bundle-again'))
    expect(again.sha256).toBe(bundle.sha256)
  }, 120_000)

  it('installs on a node with no npm at all: checked by sha256, unpacked, bin/citc linked, and it runs', async () => {
    const node = nodeWithPath(noNpm)
    expect(await installedPackage(node, prefix, bundle.sha256)).toBe(false)
    const lines: string[] = []
    await installPackage(node, {prefix, tarball: bundle.file, sha256: bundle.sha256, onOutput: (l) => lines.push(l)})
    expect(lines.join('\n')).toMatch(/^citc\/0\.1\.0 /m) // its own `citc --version`
    expect(existsSync(npmCalls)).toBe(false)
    expect(await installedPackage(node, prefix, bundle.sha256)).toBe(true)
    const version = spawnSync(process.execPath, [join(prefix, 'bin', 'citc'), '--version'], {encoding: 'utf8', cwd: '/'})
    expect(version.stdout).toMatch(/^citc\/0\.1\.0 /)
    expect(existsSync(remoteCitcBin(prefix))).toBe(true)
    // Again over itself (a new version replaces the old one in one move).
    await installPackage(node, {prefix, tarball: bundle.file, sha256: bundle.sha256})
    expect(readdirSync(join(prefix, 'lib', 'node_modules'))).toEqual(['citc'])
  }, 120_000)

  it('a bundle that does not run leaves the install that was there (a live cluster’s node programs exec it)', async () => {
    const broken = join(work, 'broken')
    mkdirSync(join(broken, 'package', 'bin'), {recursive: true})
    writeFileSync(join(broken, 'package', 'bin', 'run.js'), 'process.exit(3)\n')
    const tgz = join(work, 'broken.tgz')
    expect(spawnSync('tar', ['-czf', tgz, '-C', broken, 'package']).status).toBe(0)
    const sha256 = createHash('sha256').update(readFileSync(tgz)).digest('hex')
    const e = (await installPackage(nodeWithPath(noNpm), {prefix, tarball: tgz, sha256}).catch((x: unknown) => x)) as CitcError
    expect(e).toBeInstanceOf(CitcError)
    expect(e.message).toMatch(/installing citc on the management node \(unpacking its bundle\) failed/)
    expect(spawnSync(process.execPath, [join(prefix, 'bin', 'citc'), '--version'], {encoding: 'utf8', cwd: '/'}).stdout).toMatch(/^citc\/0\.1\.0 /)
    expect(await installedPackage(localTransport(), prefix, bundle.sha256)).toBe(true)
  }, 60_000)

  it('refuses an upload that is not the bundle it was told (sha256), installing nothing', async () => {
    const other = join(work, 'other-prefix')
    const e = (await installPackage(localTransport(), {prefix: other, tarball: bundle.file, sha256: '0'.repeat(64)}).catch((x: unknown) => x)) as CitcError
    expect(e).toBeInstanceOf(CitcError)
    expect(e.message).toMatch(/installing citc on the management node \(unpacking its bundle\) failed \(exit 1\): the uploaded .* is not the bundle citc built \(sha256 differs\)/)
    expect(existsSync(join(other, 'lib'))).toBe(false)
  })

  it("ssh2's native parts load where they were built, and ssh2 falls back where they cannot (another machine's)", () => {
    const dir = join(prefix, 'lib', 'node_modules', 'citc')
    const probe = `const c = require('./node_modules/ssh2/lib/protocol/crypto.js'); require('ssh2').utils.generateKeyPairSync('ed25519'); console.log(c.bindingAvailable)`
    const here = spawnSync(process.execPath, ['-e', probe], {cwd: dir, encoding: 'utf8'})
    expect(here.stderr).toBe('')
    expect(here.stdout.trim()).toBe('true')
    // Another architecture's binaries: not loadable here. ssh2 must still work, without them.
    const natives = spawnSync('find', [join(dir, 'node_modules'), '-name', '*.node'], {encoding: 'utf8'}).stdout.trim().split('\n').filter(Boolean)
    expect(natives.length).toBeGreaterThan(0)
    for (const f of natives) writeFileSync(f, 'not a shared object of this machine')
    const elsewhere = spawnSync(process.execPath, ['-e', probe], {cwd: dir, encoding: 'utf8'})
    expect(elsewhere.status, elsewhere.stderr).toBe(0)
    expect(elsewhere.stdout.trim()).toBe('false')
  })
})
