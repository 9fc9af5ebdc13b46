import {defineConfig} from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // @oclif/test captures output itself; vitest's interception would leave it empty.
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start real daemons (slurmctld, sshd, slapd): two cores, so keep parallelism modest.
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
  },
})
