import {defineConfig} from 'vitest/config'

import FileOrder from './test/file-order.js'
import {ALL_TESTS, E2E, FAULTS, INTEGRATION} from './vitest.projects.js'

// Four projects (vitest.projects.ts says which file is where): `vitest run` runs all four, as
// `npm test` and CI do; `--project unit` (npm run test:unit) runs the quick part alone.
export default defineConfig({
  test: {
    // The real console: test/lib/providers/oracle/driver.test.ts spies on it (the OCI SDK's noise filter wraps console.warn/log).
    disableConsoleIntercept: true,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start real daemons (slurmctld, sshd, slapd): two cores, so keep parallelism modest. The
    // projects share one pool of two workers (same groupOrder, same maxWorkers).
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    // The files that take this machine's services run one after another on whichever worker is free,
    // the rest beside them (test/file-order.ts, from the timings in test/file-durations.json).
    sequence: {sequencer: FileOrder},
    projects: [
      // Unit files share their worker's module cache (isolate: false): the project takes half the time
      // (import dominates). Unit tests restore what they change in process.env and start no process
      // that outlives them, so one file cannot see another's leftovers.
      {extends: true, test: {name: 'unit', include: [ALL_TESTS], exclude: [...INTEGRATION, ...E2E, ...FAULTS], isolate: false}},
      {extends: true, test: {name: 'integration', include: INTEGRATION}},
      {extends: true, test: {name: 'e2e', include: E2E}},
      {extends: true, test: {name: 'faults', include: FAULTS}},
    ],
  },
})
