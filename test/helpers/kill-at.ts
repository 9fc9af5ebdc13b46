// SIGKILL citc at an exact step, as a power cut or an OOM kill would: a wrapper for one command
// (mv, cp, service, ldapadd, ansible-playbook …) first on citc's PATH. When citc runs that command with
// arguments matching `args` for the `nth` time, the wrapper kills the citc process (its PID, given by
// the test once citc runs) with SIGKILL — `before` running the real command (the step never happened)
// or `after` it (the step happened, citc never learned it). Every other call runs the real command.
// Nothing else is killed: children citc started earlier go on, as they would.
import {chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

export interface KillPoint {
  /** The command's name as citc runs it (looked up on PATH). */
  command: string
  /** An extended regular expression (grep -E) the command's arguments, joined by spaces, must match. */
  args: string
  /** Which matching call (1: the first). */
  nth?: number
  when: 'before' | 'after'
}

export interface KillAt {
  /** PATH for citc: the wrapper first. */
  path: string
  /** Give the wrapper citc's PID (from citc's onSpawn). */
  arm(pid: number): void
  /** The arguments of the call at which the wrapper killed citc; '' while it has not. */
  fired(): string
  remove(): void
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`

export function killAt(point: KillPoint): KillAt {
  const dir = mkdtempSync(join(tmpdir(), 'citc-kill-at-'))
  const realPath = process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin'
  const script = `#!/bin/sh
# kill-at wrapper for ${point.command} (test/helpers/kill-at.ts)
real=$(PATH=${q(realPath)} command -v ${q(point.command)})
d=${q(dir)}
if [ ! -e "$d/fired" ] && [ -e "$d/pid" ] && printf '%s' "$*" | grep -Eq -- ${q(point.args)}; then
  n=$(($(cat "$d/count" 2>/dev/null || echo 0) + 1))
  echo "$n" > "$d/count"
  if [ "$n" -eq ${point.nth ?? 1} ]; then
    ${
      point.when === 'before'
        ? `echo "$*" > "$d/fired"; kill -KILL "$(cat "$d/pid")"; exit 137`
        : `"$real" "$@"; rc=$?; echo "$*" > "$d/fired"; kill -KILL "$(cat "$d/pid")"; exit $rc`
    }
  fi
fi
exec "$real" "$@"
`
  const wrapper = join(dir, point.command)
  writeFileSync(wrapper, script)
  chmodSync(wrapper, 0o755)
  return {
    path: `${dir}:${realPath}`,
    arm: (pid) => writeFileSync(join(dir, 'pid'), String(pid)),
    fired: () => (existsSync(join(dir, 'fired')) ? readFileSync(join(dir, 'fired'), 'utf8').trim() : ''),
    remove: () => rmSync(dir, {recursive: true, force: true}),
  }
}
