// What citc accepts as a user's login name, first name, surname and Slurm account — pure checks that
// run before anything is changed. Each returns a message (what is wrong and what is allowed), or
// undefined when the value is fine. Names that exist on the management node (getent passwd) are
// checked by the workflow, not here.

/** POSIX-portable login names as useradd accepts them by default: a lower-case letter, then a-z 0-9 _ -. */
export const USERNAME = /^[a-z][a-z0-9_-]*$/
const USERNAME_MAX = 32

/**
 * Accounts of the system and of what citc installs (and common cloud images' default users): never
 * handed to a person even if they do not exist on this node yet, since they may exist on another.
 */
export const RESERVED_USERNAMES: ReadonlySet<string> = new Set([
  // Debian/Ubuntu base-passwd and friends
  'root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy', 'www-data',
  'backup', 'list', 'irc', 'gnats', 'nobody', 'nogroup', 'messagebus', 'syslog', 'uuidd', 'tss', 'tcpdump',
  'dnsmasq', 'avahi', 'rtkit', 'polkitd', 'landscape', 'lxd', 'pollinate', 'usbmux', 'fwupd-refresh', 'statd',
  'adm', 'tty', 'disk', 'kmem', 'dialout', 'fax', 'voice', 'cdrom', 'floppy', 'tape', 'sudo', 'audio', 'dip',
  'operator', 'src', 'shadow', 'utmp', 'video', 'sasl', 'plugdev', 'staff', 'users', 'wheel', 'halt',
  'shutdown', 'ftp', 'input', 'kvm', 'render', 'crontab', 'netdev', 'ssh', 'sshd', 'ntp', 'chrony', '_chrony',
  'postfix', 'exim', 'dovecot', 'nscd', 'systemd', 'ldap', 'sssd', 'nslcd', 'openldap', 'dirsrv',
  // what citc runs
  'citc', 'admin', 'administrator', 'slurm', 'slurmctld', 'slurmd', 'slurmdbd', 'munge', 'mysql', 'mariadb',
  'telegraf', 'influxdb', 'grafana', 'packer', 'ansible', 'terraform', 'nfs', 'nfsnobody', 'rpc', 'rpcuser',
  // default users of cloud images
  'ubuntu', 'debian', 'centos', 'rocky', 'almalinux', 'fedora', 'ec2-user', 'opc', 'cloud-user',
  'azureuser', 'google', 'guest', 'test', 'user',
])

/** Prefixes reserved by the system (systemd's dynamic users, Debian's per-package users). */
const RESERVED_PREFIXES = ['systemd-', 'debian-']

/** Why `name` cannot be a login name, or undefined. */
export function usernameProblem(name: string): string | undefined {
  if (name === '') return 'is empty'
  if (name.length > USERNAME_MAX) return `"${printable(name)}" is ${name.length} characters long; at most ${USERNAME_MAX} are allowed`
  if (!USERNAME.test(name)) {
    return `"${printable(name)}" is not a valid login name: it must start with a lower-case letter (a-z), then only a-z, 0-9, "_" and "-"`
  }
  if (RESERVED_USERNAMES.has(name) || RESERVED_PREFIXES.some((p) => name.startsWith(p))) {
    return `"${name}" is reserved for the system or for citc; choose another name`
  }
  return undefined
}

const PERSON_NAME_MAX = 64

/** Control characters (C0, DEL, C1), line and paragraph separators, and bidirectional overrides. */
// eslint-disable-next-line no-control-regex
export const FORBIDDEN_IN_NAME = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u

/** Why `value` cannot be a first name or surname (`what` names it in the message), or undefined. */
export function personNameProblem(value: string, what = 'the name'): string | undefined {
  if (value.trim() === '') return `${what} is empty`
  const bad = FORBIDDEN_IN_NAME.exec(value)
  if (bad) {
    const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
    return `${what} contains a control character (U+${code}, e.g. a newline or tab); only printable characters are allowed`
  }
  const length = [...value].length
  if (length > PERSON_NAME_MAX) return `${what} is ${length} characters long; at most ${PERSON_NAME_MAX} are allowed`
  if (value !== value.trim()) return `${what} starts or ends with a space`
  return undefined
}

/** A Slurm account name citc creates: like a login name (sacctmgr lower-cases names; "," and "=" would be read as syntax). */
export const ACCOUNT = /^[a-z][a-z0-9_-]*$/
const ACCOUNT_MAX = 64

export function accountProblem(name: string): string | undefined {
  if (name === '') return 'is empty'
  if (name.length > ACCOUNT_MAX) return `"${printable(name)}" is ${name.length} characters long; at most ${ACCOUNT_MAX} are allowed`
  if (!ACCOUNT.test(name)) return `"${printable(name)}" is not a valid Slurm account name: a lower-case letter, then only a-z, 0-9, "_" and "-"`
  if (name === 'root') return '"root" is Slurm\'s own account; choose another'
  return undefined
}

/** A value for an error message: control characters shown as escapes, never echoed raw to a terminal. */
export function printable(value: string): string {
  const shown = JSON.stringify(value)
    .slice(1, -1)
    .replace(new RegExp(FORBIDDEN_IN_NAME.source, 'gu'), (c) => `\\u${c.codePointAt(0)!.toString(16).padStart(4, '0')}`)
  return shown.length > 80 ? `${shown.slice(0, 77)}...` : shown
}
