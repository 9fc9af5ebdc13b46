import {Flags} from '@oclif/core'

import {BaseCommand} from '../lib/base-command.js'
import {EXIT_CODES} from '../lib/errors.js'
import {PROVIDER_NAMES} from '../lib/providers/registry.js'

export default class Doctor extends BaseCommand<typeof Doctor> {
  static summary = 'Check the tools citc needs (and their versions) and the cloud credentials it finds'
  static description = `Node.js >= 20; Terraform >= 1.5 or OpenTofu and npm for clouds; ansible-playbook for local; ssh and
ssh-keygen; the clouds' CLIs destroy's sweep uses (aws, gcloud, oci); and, per cloud, the credentials
found in the environment and the usual files, and the one citc would use. Nothing goes over the
network. Exits ${EXIT_CODES.remote} when a required tool is missing (the report says what to install).`

  static examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --provider aws', '<%= config.bin %> doctor --json']

  static flags = {
    provider: Flags.option({char: 'p', options: PROVIDER_NAMES, multiple: true, description: 'check only what these providers need (default: all)'} as const)(),
  }

  async run() {
    const {ALL_SCOPES, doctor, doctorLines} = await import('../lib/tasks/doctor/check-machine.js')
    const report = await doctor(this.flags.provider ?? ALL_SCOPES)
    if (report.ok) {
      for (const l of doctorLines(report)) this.log(l)
      return report
    }
    if (this.jsonEnabled()) this.logJson(report)
    else for (const l of doctorLines(report)) this.log(l)
    this.exit(EXIT_CODES.remote)
  }
}
