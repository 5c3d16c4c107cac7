#!/usr/bin/env bash
# The always-on recorder's soak (issue 27, "Done when"): `ingero-top record`
# on the shim workload for SECONDS (default 600) with ROTATE-second files
# (default 60) under a cap of CAP_MB (default 60; the workload sleeps 2 ms a
# step: ~13 MB a minute, so that a file fits in half the cap), then kill -9;
# the checks
# are tests/integration/test_record_service.sh's: files rotate on the
# boundaries, the oldest are pruned, the directory stays under the cap, a
# replay of the directory with --since lands on the right second (its
# counts are SQL's), and the files hold every call the workload made up to
# 1 s before the kill. Root; not part of `make test`.
#   sudo tests/bench/record_soak.sh [SECONDS] [ROTATE] [CAP_MB]
set -u
cd "$(dirname "$0")/../.." || exit 1
export RECORD_SECS=${1:-600} RECORD_ROTATE=${2:-60} RECORD_MAX_MB=${3:-60} RECORD_SLEEP_US=${RECORD_SLEEP_US:-2000}
echo "record_soak: ${RECORD_SECS}s, ${RECORD_ROTATE}s files, cap ${RECORD_MAX_MB}M (BUILD=${BUILD:-build})"
start=$(date +%s)
tests/integration/test_record_service.sh
rc=$?
echo "record_soak: $(($(date +%s) - start))s in all, exit $rc"
exit $rc
