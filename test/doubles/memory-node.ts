// The two files a management node holds for citc (/etc/citc/ldap.json and cluster.json), as tests that
// run add-user or remove-user on a MemoryTransport give them.

export const MEMORY_LDAP = {
  uri: 'ldap://127.0.0.1:389/',
  baseDn: 'dc=mem',
  peopleDn: 'ou=People,dc=mem',
  groupsDn: 'ou=Groups,dc=mem',
  adminDn: 'cn=admin,dc=mem',
  adminPasswordFile: '/etc/citc/secrets/ldap-admin',
  homeDir: '/mnt/shared/home',
}

// cluster.json as the citc_programs role writes it (cluster/management-contract.ts).
export const MEMORY_CLUSTER = {
  version: 1,
  name: 'mem',
  provider: 'local',
  sharedDir: '/mnt/shared',
  slurmUser: 'root',
  programsDir: '/usr/local/libexec/citc',
  confPath: '/mnt/shared/etc/slurm/slurm.conf',
  elasticLog: '/var/log/citc/elastic.log',
  driver: {},
}
