// Runs a command on a real pseudo-terminal (Python's pty module: no native npm addon needed) and
// answers its prompts as a person would: wait for a pattern on the screen, then type. Bounded.
import {spawnSync} from 'node:child_process'

export interface PtyStep {
  /** A regular expression (Python syntax) to wait for in the output so far. */
  expect: string
  /** What to type then ("\r" is Enter). */
  send: string
}

const DRIVER = String.raw`
import json, os, pty, re, select, sys, time
cfg = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.environ.update(cfg["env"])
    os.execvp(cfg["argv"][0], cfg["argv"])
out = b""
deadline = time.time() + cfg["timeout"]
steps = cfg["steps"]
def read(t):
    global out
    r, _, _ = select.select([fd], [], [], t)
    if r:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        out += data
    return True
alive = True
for step in steps:
    while alive and not re.search(step["expect"], out.decode("utf8", "replace")):
        if time.time() > deadline:
            sys.stdout.write(json.dumps({"timeout": step["expect"], "output": out.decode("utf8", "replace")}))
            os.kill(pid, 9)
            sys.exit(0)
        alive = read(0.2)
    time.sleep(0.3)
    os.write(fd, step["send"].encode())
while alive and time.time() < deadline:
    alive = read(0.2)
_, status = os.waitpid(pid, 0)
code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
sys.stdout.write(json.dumps({"code": code, "output": out.decode("utf8", "replace")}))
`

export function runOnPty(argv: string[], steps: PtyStep[], opts: {env?: Record<string, string>; timeoutS?: number; cwd?: string} = {}) {
  const cfg = {argv, steps, env: opts.env ?? {}, timeout: opts.timeoutS ?? 60}
  const r = spawnSync('python3', ['-c', DRIVER, JSON.stringify(cfg)], {encoding: 'utf8', cwd: opts.cwd, timeout: (cfg.timeout + 10) * 1000})
  if (r.status !== 0) throw new Error(`pty driver failed: ${r.stderr}`)
  const res = JSON.parse(r.stdout) as {code?: number; output: string; timeout?: string}
  if (res.timeout) throw new Error(`timed out waiting for /${res.timeout}/ on the terminal; screen so far:\n${res.output}`)
  return {code: res.code!, output: res.output}
}
