#!/usr/bin/python3
# A stand-in for systemctl inside a compute image root where no systemd runs (tests only: the
# image-boot test, test/helpers/compute-image.ts). It records every call, and for start/restart does
# what systemd would do with the unit file the image really has, so a wrong unit, a wrong
# /etc/default file or a failing daemon shows: the unit and its drop-ins are read, ConditionPathExists
# is checked (a failed condition skips the start and exits 0, as systemd does), EnvironmentFile is
# loaded, ExecStart expanded as systemd expands it ($VAR split into words, ${VAR} one word),
# RuntimeDirectory made, User/Group taken, and the daemon started: Type=simple in the background
# (its pid kept in /run/standin-<unit>.pid), Type=forking waited for; a service with only an init
# script runs that, as systemd-sysv-generator's unit would. Nothing else of systemd.
import grp
import os
import pwd
import re
import shlex
import signal
import subprocess
import sys
import time

LOG = '/var/log/systemctl-standin.log'
UNIT_DIRS = ['/etc/systemd/system', '/run/systemd/system', '/lib/systemd/system', '/usr/lib/systemd/system']


def record(line):
    with open(LOG, 'a') as f:
        f.write(line + '\n')


def unit_name(u):
    return u if '.' in u else u + '.service'


def parse_unit(unit):
    """{(section, key): [values]} from the unit file and its drop-ins; an empty value resets a list."""
    path = next((os.path.join(d, unit) for d in UNIT_DIRS if os.path.exists(os.path.join(d, unit))), None)
    if path is None:
        return None
    files = [path]
    for d in UNIT_DIRS:
        dd = os.path.join(d, unit + '.d')
        if os.path.isdir(dd):
            files += [os.path.join(dd, f) for f in sorted(os.listdir(dd)) if f.endswith('.conf')]
    conf = {}
    for f in files:
        section = None
        for line in open(f):
            line = line.strip()
            if not line or line[0] in '#;':
                continue
            if line.startswith('['):
                section = line[1:-1]
                continue
            key, _, value = line.partition('=')
            values = conf.setdefault((section, key.strip()), [])
            if value.strip() == '':
                values.clear()
            else:
                values.append(value.strip())
    return conf


def env_file(path):
    env = {}
    if not os.path.exists(path):
        return env
    for line in open(path):
        line = line.strip()
        if not line or line[0] in '#;' or '=' not in line:
            continue
        key, _, value = line.partition('=')
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in '"\'':
            value = value[1:-1].replace('\\"', '"')
        env[key.strip()] = value
    return env


def expand(words, env):
    out = []
    for w in words:
        whole = re.fullmatch(r'\$([A-Za-z_][A-Za-z0-9_]*)', w)
        if whole:
            out += env.get(whole.group(1), '').split()
        else:
            out.append(re.sub(r'\$\{([A-Za-z_][A-Za-z0-9_]*)\}', lambda m: env.get(m.group(1), ''), w))
    return out


def pid_alive(pid):
    """Alive, and not a zombie (nothing reaps in the boot namespace, as systemd would)."""
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().rsplit(') ', 1)[1][0] != 'Z'
    except (OSError, IndexError):
        return False


def stop(unit):
    sysv = '/etc/init.d/' + unit[: -len('.service')]
    if parse_unit(unit) is None and os.path.exists(sysv):
        rc = subprocess.call([sysv, 'stop'], stdin=subprocess.DEVNULL)
        record('%s stop (init script, no unit): exited %d' % (sysv, rc))
        return
    pidfile = '/run/standin-%s.pid' % unit
    if not os.path.exists(pidfile):
        return
    pid = int(open(pidfile).read().strip())
    if pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if not pid_alive(pid):
                break
            time.sleep(0.1)
    os.unlink(pidfile)
    record('stopped %s (pid %d)' % (unit, pid))


def start(unit):
    conf = parse_unit(unit)
    sysv = '/etc/init.d/' + unit[: -len('.service')]
    if conf is None and unit.endswith('.service') and os.path.exists(sysv):
        # What systemd-sysv-generator makes of an init script without a unit: the script does the work.
        rc = subprocess.call([sysv, 'start'], stdin=subprocess.DEVNULL)
        record('%s start (init script, no unit): exited %d' % (sysv, rc))
        return 0 if rc == 0 else 1
    if conf is None:
        record('no unit %s' % unit)
        print('Failed to start %s: Unit %s not found.' % (unit, unit), file=sys.stderr)
        return 5
    get = lambda s, k: conf.get((s, k), [])
    for cond in get('Unit', 'ConditionPathExists'):
        negate = cond.startswith('!')
        if os.path.exists(cond.lstrip('!')) == negate:
            record('condition failed: %s ConditionPathExists=%s (not started)' % (unit, cond))
            return 0
    env = {'PATH': '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'LANG': 'C.UTF-8'}
    for f in get('Service', 'EnvironmentFile'):
        optional = f.startswith('-')
        f = f.lstrip('-')
        if not optional and not os.path.exists(f):
            record('missing EnvironmentFile %s of %s' % (f, unit))
            return 1
        env.update(env_file(f))
    user = (get('Service', 'User') or ['root'])[-1]
    group = (get('Service', 'Group') or [None])[-1]
    uid = pwd.getpwnam(user).pw_uid
    gid = grp.getgrnam(group).gr_gid if group else pwd.getpwnam(user).pw_gid
    for d in get('Service', 'RuntimeDirectory'):
        for name in d.split():
            path = os.path.join('/run', name)
            os.makedirs(path, exist_ok=True)
            os.chmod(path, int((get('Service', 'RuntimeDirectoryMode') or ['0755'])[-1], 8))
            os.chown(path, uid, gid)
    exec_start = (get('Service', 'ExecStart') or [''])[-1].lstrip('-@+!')
    argv = expand(shlex.split(exec_start), env)
    kind = (get('Service', 'Type') or ['simple'])[-1]

    def as_user():
        os.setsid()
        os.setgid(gid)
        os.initgroups(user, gid)
        os.setuid(uid)

    out = open('/var/log/standin-%s.log' % unit, 'ab')
    record('start %s (Type=%s, User=%s): %s' % (unit, kind, user, shlex.join(argv)))
    child = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=out, preexec_fn=as_user, cwd='/')
    if kind == 'forking':
        rc = child.wait()
        record('%s: ExecStart exited %d' % (unit, rc))
        return 0 if rc == 0 else 1
    with open('/run/standin-%s.pid' % unit, 'w') as f:
        f.write('%d\n' % child.pid)
    # systemd reports a simple service started at once; the record says whether it stayed up.
    time.sleep(1)
    record('%s: %s' % (unit, 'running, pid %d' % child.pid if child.poll() is None else 'exited %s at start' % child.returncode))
    return 0


def main(args):
    record('systemctl ' + ' '.join(args))
    verbs = [a for a in args if not a.startswith('-')]
    if not verbs:
        return 0
    verb, units = verbs[0], [unit_name(u) for u in verbs[1:]]
    rc = 0
    for unit in units:
        if verb in ('start', 'restart', 'try-restart', 'reload-or-restart'):
            if verb != 'start':
                stop(unit)
            rc = start(unit) or rc
        elif verb == 'stop':
            stop(unit)
        elif verb == 'is-active':
            pidfile = '/run/standin-%s.pid' % unit
            alive = os.path.exists(pidfile) and pid_alive(int(open(pidfile).read().strip()))
            if '--quiet' not in args and '-q' not in args:
                print('active' if alive else 'inactive')
            rc = rc or (0 if alive else 3)
        elif verb in ('enable', 'disable', 'daemon-reload', 'mask', 'unmask'):
            pass
        else:
            record('not stood in for: %s' % verb)
            return 1
    return rc


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
