#!/usr/bin/env bash
# Before/after figures for bench/job-latency.ts on one local cluster: "without" runs with citc's
# PrologSlurmctld taken out (its script made non-executable, then finish, which leaves the key out
# where the script is missing, and restarts slurmctld), "with" puts it back. Needs root, a build
# (npm run build) and no other citc cluster on this machine. Run: bash bench/run-job-latency-ab.sh [runs=5]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
data=$(mktemp -d)
export CITC_DATA_DIR=$data
prolog=/usr/local/libexec/citc/prolog-slurmctld
cleanup() { chmod 755 "$prolog" 2>/dev/null || true; ./bin/run.js destroy bench --yes >/dev/null 2>&1 || true; rm -rf "$data"; }
trap cleanup EXIT
./bin/run.js create --provider local --name bench --suspend-time 15 --yes >/dev/null
limits=$data/clusters/bench/limits.yaml
chmod 644 "$prolog"
./bin/run.js finish -c bench --limits "$limits" --yes >/dev/null
echo "== without citc's PrologSlurmctld"
npx tsx bench/job-latency.ts "$runs"
chmod 755 "$prolog"
./bin/run.js finish -c bench --limits "$limits" --yes >/dev/null
echo "== with citc's PrologSlurmctld"
npx tsx bench/job-latency.ts "$runs"
