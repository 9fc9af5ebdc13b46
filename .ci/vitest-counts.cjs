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
