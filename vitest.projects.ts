// Which test file belongs to which vitest project, by what the file really starts. One list each for
// integration and e2e; every other test file is unit. test/projects.test.ts checks the lists
// (every file in exactly one project, no daemon helper in a unit file).
//
//   unit         in-process, or short-lived tools run as the caller (sh, ssh-keygen, `scontrol show
//                hostnames` on a file, the cloud and Terraform doubles, a node child). No root, no
//                daemon, no build: `npm run test:unit`, under 30 s.
//   integration  real programs that serve or configure: slurmctld and munged, sshd, slapd on loopback,
//                ansible-playbook, and the built CLI (bin/run.js → dist/) run as a user runs it.
//   e2e          whole clusters on this machine or behind sshd (test/e2e, serialized on the machine
//                lock), and every test that drives citc on a pseudo-terminal.
//   faults       the fault suite (test/faults, issue #23): real components killed, cut off, filled up or
//                loaded on purpose, and what recovers them. Its own project so the others stay quick;
//                bench/faults.ts runs it and prints one line per class of fault.

/** Real daemons on loopback, Ansible, or the built CLI as a child process. */
export const INTEGRATION = [
  // The built CLI (needs `npm run build`): exit codes, --json documents, help, the manifest.
  'test/cli/cluster-registry.test.ts',
  'test/cli/doctor-monitoring.test.ts',
  // The security collector for real, as root, on a planted management node tree (the stand-in's securityRoot).
  'test/cli/doctor-security.test.ts',
  'test/cli/errors.test.ts',
  'test/cli/fast-help.test.ts',
  'test/cli/finish-preview.test.ts',
  'test/cli/help.test.ts',
  'test/cli/interrupt.test.ts',
  'test/cli/manifest.test.ts',
  // The collector against slurmctld + munged + two slurmd of the test's own.
  'test/cli/metrics-collect.test.ts',
  'test/cli/node-program.test.ts',
  // The built CLI with an sshd of the test's own as a cloud management node (rebuild-image --rollback on aws, google, oracle).
  'test/cli/rebuild-image-rollback-cloud.test.ts',
  'test/cli/status-watch.test.ts',
  // slurmctld + munged of the test's own.
  'test/lib/slurm/slurmctld.test.ts',
  'test/lib/nodes/node-sync.test.ts',
  'test/playbooks/prolog-slurmctld.test.ts',
  // slurmctld + munged + slurmd started by its ResumeProgram after a delay.
  'test/playbooks/prolog-slurmctld-cold.test.ts',
  'test/lib/tasks/status/joined-status.test.ts',
  // slapd of the test's own (add-user-workflow also makes an ordinary account with useradd: root).
  'test/lib/tasks/add-user/add-user-workflow.test.ts',
  'test/lib/tasks/remove-user/remove-user.test.ts',
  'test/lib/users/directory.test.ts',
  // Debian's Packer, mmdebstrap and ansible-playbook building two local images for real (root).
  'test/lib/providers/local/image-base.test.ts',
  // sshd of the test's own.
  'test/lib/providers/cloud-image-build.test.ts',
  'test/lib/tasks/create/management-node-setup.test.ts',
  'test/lib/transport/elevate.test.ts',
  'test/lib/transport/ssh/index.test.ts',
  'test/lib/transport/ssh/tunnel.test.ts',
  // Prometheus of the test's own (and chromium, headless).
  'test/lib/monitoring/page.test.ts',
  'test/lib/monitoring/query.test.ts',
  // Machines made of namespaces (root): test/helpers/machines.ts's own proof.
  'test/helpers/machines.test.ts',
  // ansible-playbook.
  'test/lib/tools/ansible.test.ts',
  'test/playbooks/compute-exporter.test.ts',
  // nftables in a network namespace of the test's own (root).
  'test/playbooks/metadata-guard.test.ts',
  // nftables in network namespaces of the test's own, loaded by ansible-playbook there (root).
  'test/playbooks/local-guard.test.ts',
  'test/playbooks/group-vars.test.ts',
  'test/playbooks/management-contract.test.ts',
  'test/playbooks/node-playbooks.test.ts',
  'test/playbooks/nvidia-gpu-role.test.ts',
  // A compute image root built by compute.yml, booted in namespaces with citc's user-data (root).
  'test/playbooks/node-user-data-boot.test.ts',
  // slapd of the test's own on ldaps with the ldap role's certificates, nslcd on a namespace machine (root).
  'test/playbooks/ldap-tls.test.ts',
  // The filesystem role building Amazon's EFS mount helper and mounting efs tls,iam on a namespace machine (root).
  'test/playbooks/efs-utils.test.ts',
  // The watchdog's init script started and stopped for real (root: it runs the loop as slurm).
  'test/playbooks/watchdog-service.test.ts',
]

/** Whole clusters and pseudo-terminal tests. */
export const E2E = [
  'test/e2e/**/*.test.ts',
  // On a pty: the host-key confirmation (with sshd) and the create wizard (takes the machine lock).
  'test/cli/cluster-add-tty.test.ts',
  'test/cli/status-watch-tty.test.ts',
  'test/cli/wizard.test.ts',
]

/** The fault suite: every file under test/faults. */
export const FAULTS = ['test/faults/**/*.test.ts']

/** Every test file; unit is what the three lists above leave. */
export const ALL_TESTS = 'test/**/*.test.ts'
