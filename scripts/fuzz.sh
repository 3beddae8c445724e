#!/usr/bin/env bash
# `make fuzz`: 10,000 generated hostile inputs over every surface fabricgen reads (intents, YAML
# bytes, catalogs, build directories, exports of edited builds, device answers, results files, paths
# on the command line, lab state), each run through the CLI in a forked, CPU-, time- and
# memory-limited child; then a report: cases per generator, exit codes, wall and CPU time, peak
# memory, and every failure class with its smallest input saved under the report directory.
#
#   FABRICGEN_FUZZ_CASES=2000 bash scripts/fuzz.sh     # fewer (or more) cases
#   FABRICGEN_FUZZ_SEED=1234 bash scripts/fuzz.sh      # rerun a report's seed
#   FUZZ_JOBS=2 bash scripts/fuzz.sh                   # two processes (on an otherwise idle machine)
#
# Exit 0 when no case failed, 1 when any did. Nothing leaves the machine: push is aimed at
# 127.0.0.1 port 9, and a guard in each case refuses any other address.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

report=${FABRICGEN_FUZZ_REPORT:-$PWD/output/fuzz-report}
rm -rf "$report"
mkdir -p "$report"
export FABRICGEN_FUZZ=full FABRICGEN_FUZZ_REPORT="$report"
export FABRICGEN_FUZZ_SEED=${FABRICGEN_FUZZ_SEED:-$(( (RANDOM << 15) | RANDOM ))}
echo "fuzzing with seed $FABRICGEN_FUZZ_SEED; pytest output in $report/pytest*.log"

started=$(date +%s)
run() {  # run CAMPAIGNS LOG: one pytest process over the named campaigns
    .venv/bin/python -m pytest tests/test_fuzz.py -q -p no:cacheprovider -k "$1" >"$2" 2>&1 || true
}
if [ "${FUZZ_JOBS:-1}" -ge 2 ]; then
    run "test_fuzz_intents or test_fuzz_yaml_bytes or test_fuzz_device_answers or test_fuzz_lab_state" "$report/pytest-1.log" &
    run "test_fuzz_catalogs or test_fuzz_build_directories or test_fuzz_exports or test_fuzz_results_files or test_fuzz_paths" "$report/pytest-2.log" &
    wait
else
    run "test_fuzz_" "$report/pytest.log"
fi
.venv/bin/python -m tests.fuzzing report "$report" "$(( $(date +%s) - started ))"
