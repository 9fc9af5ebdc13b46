// Prints "PASSED FAILED" from a vitest JSON report (--reporter=json --outputFile=FILE): the counts CI's
// last line adds up. A missing or unreadable report counts as one failure, so a run that crashed
// before writing it can never pass.
const fs = require('fs')
let r = {}
try { r = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')) } catch {}
const passed = r.numPassedTests ?? 0
// A file whose hooks failed has no failed test of its own (its tests are skipped): count it once.
const suiteErrors = (r.testResults ?? []).filter((t) => t.status === 'failed' && !(t.assertionResults ?? []).some((a) => a.status === 'failed')).length
const failed = (r.numFailedTests ?? 0) + suiteErrors + (r.numTotalTests === undefined ? 1 : 0)
console.log(`${passed} ${failed}`)
// The failures by name on stderr: CI keeps only the end of the output, so .ci/run prints them again last.
for (const t of r.testResults ?? []) {
  const file = require('path').relative(process.cwd(), t.name ?? '')
  const failedTests = (t.assertionResults ?? []).filter((a) => a.status === 'failed')
  for (const a of failedTests) {
    console.error(`FAILED ${file} > ${a.fullName}`)
    // The first lines of its message (no colour), so the cause can be read from the kept output too.
    const message = (a.failureMessages ?? []).join('\n').replace(/\x1b\[[0-9;]*m/g, '').split('\n').filter((l) => l.trim() !== '')
    for (const line of message.slice(0, 6)) console.error(`    ${line.slice(0, 240)}`)
  }
  if (t.status === 'failed' && failedTests.length === 0) console.error(`FAILED ${file} (its hooks: ${(t.message ?? '').split('\n')[0].slice(0, 200)})`)
}
