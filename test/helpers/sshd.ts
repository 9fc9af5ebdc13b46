// A private OpenSSH server for tests: its own host key, client key, authorized_keys and config in a
// temp dir, listening on a free loopback port as the current user. Stopped by PID, never by name.
import {execFileSync, spawn, type ChildProcess} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir, userInfo} from 'node:os'
import {join} from 'node:path'

import {freePort} from './slurm.js'
import {portAccepts} from './net.js'
import {sleep} from '../../src/lib/proc.js'

export const SSHD = '/usr/sbin/sshd'
const SFTP_SERVER = '/usr/lib/openssh/sftp-server'

export interface SshdSandbox {
  host: '127.0.0.1'
  port: number
  user: string
  dir: string
  clientKeyPath: string
  clientKey: Buffer
  hostKeyPath: string
  /** As `ssh-keygen -lf` prints it for the host key. */
  hostKeyFingerprint: string
  /** Everything sshd wrote to stderr so far (-e: its log). */
  log(): string
  pid: number
  stop(): Promise<void>
}


/** `ssh-keygen -lf file` → the SHA256:… field. */
export function keygenFingerprint(pubKeyPath: string): string {
  const out = execFileSync('ssh-keygen', ['-lf', pubKeyPath], {encoding: 'utf8'})
  const fp = out.split(/\s+/)[1]
  if (!fp?.startsWith('SHA256:')) throw new Error(`unexpected ssh-keygen output: ${out}`)
  return fp
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null
}

async function stopChild(child: ChildProcess, timeoutMs = 5000): Promise<void> {
  if (exited(child) || child.pid === undefined) return
  const gone = new Promise<void>((r) => child.once('exit', () => r()))
  child.kill('SIGTERM')
  const timer = sleep(timeoutMs).then(() => 'timeout' as const)
  if ((await Promise.race([gone, timer])) === 'timeout') {
    child.kill('SIGKILL')
    await Promise.race([gone, sleep(timeoutMs)])
  }
}

export interface SshdOptions {
  /** Serve this host private key (e.g. the one citc generated for a management node); its public
   *  part is read from `<file>.pub`. Default: a new key. */
  hostKeyFile?: string
  /** Also authorize this public key line (e.g. citc's admin key for a cluster). */
  authorizeKey?: string
  /** Listen on this port (default: a free one). */
  port?: number
  /**
   * Environment of every session (sshd_config SetEnv: it overrides sshd's default PATH too), e.g. a
   * PATH with test doubles first, as a stand-in management node's own programs would be found.
   */
  setEnv?: Record<string, string>
}

export async function startSshd(opts: SshdOptions = {}): Promise<SshdSandbox> {
  const dir = mkdtempSync(join(tmpdir(), 'citc-sshd-'))
  try {
    const user = userInfo().username
    const hostKeyPath = join(dir, 'ssh_host_ed25519_key')
    const clientKeyPath = join(dir, 'client_ed25519')
    if (opts.hostKeyFile) {
      writeFileSync(hostKeyPath, readFileSync(opts.hostKeyFile), {mode: 0o600})
      writeFileSync(`${hostKeyPath}.pub`, readFileSync(`${opts.hostKeyFile}.pub`), {mode: 0o644})
    } else {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-test-host', '-f', hostKeyPath])
    }
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'citc-test-client', '-f', clientKeyPath])
    const authorizedKeys = join(dir, 'authorized_keys')
    const extra = opts.authorizeKey ? `${opts.authorizeKey.trim()}\n` : ''
    writeFileSync(authorizedKeys, readFileSync(`${clientKeyPath}.pub`, 'utf8') + extra, {mode: 0o600})
    mkdirSync('/run/sshd', {recursive: true, mode: 0o755}) // sshd's privilege separation directory

    // The port is free when we look; another process may take it before sshd binds: retry.
    for (let attempt = 1; ; attempt++) {
      const port = opts.port ?? (await freePort())
      const config = join(dir, 'sshd_config')
      writeFileSync(
        config,
        [
          `ListenAddress 127.0.0.1:${port}`,
          `HostKey ${hostKeyPath}`,
          `PidFile ${join(dir, 'sshd.pid')}`,
          `AuthorizedKeysFile ${authorizedKeys}`,
          'PermitRootLogin prohibit-password',
          'PubkeyAuthentication yes',
          'PasswordAuthentication no',
          'KbdInteractiveAuthentication no',
          'UsePAM no',
          'StrictModes no',
          'UseDNS no',
          'PrintMotd no',
          'LogLevel INFO',
          'MaxSessions 20',
          `Subsystem sftp ${SFTP_SERVER}`,
          ...(opts.setEnv ? [`SetEnv ${Object.entries(opts.setEnv).map(([k, v]) => `"${k}=${v}"`).join(' ')}`] : []),
          '',
        ].join('\n'),
      )
      const child = spawn(SSHD, ['-D', '-e', '-f', config], {stdio: ['ignore', 'ignore', 'pipe']})
      let log = ''
      child.stderr!.on('data', (d: Buffer) => {
        log += d.toString()
      })
      const deadline = Date.now() + 10_000
      while (!exited(child) && Date.now() < deadline && !(await portAccepts(port))) await sleep(50)
      if (!exited(child) && (await portAccepts(port))) {
        return {
          host: '127.0.0.1',
          port,
          user,
          dir,
          clientKeyPath,
          clientKey: readFileSync(clientKeyPath),
          hostKeyPath,
          hostKeyFingerprint: keygenFingerprint(`${hostKeyPath}.pub`),
          log: () => log,
          pid: child.pid!,
          async stop() {
            await stopChild(child)
            rmSync(dir, {recursive: true, force: true})
          },
        }
      }
      await stopChild(child)
      if (attempt >= 3 || opts.port !== undefined || !/Address already in use/.test(log)) throw new Error(`sshd did not start on port ${port}:\n${log}`)
    }
  } catch (error) {
    rmSync(dir, {recursive: true, force: true})
    throw error
  }
}
