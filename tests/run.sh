#!/usr/bin/env bash
# Runs every test: unit programs, root integration scripts, TUI scripts.
# A script passes with exit 0, is skipped with exit 77 (it says why), and
# fails otherwise. Prints "N passed, N failed, N skipped" last.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
export IG=$PWD/$BUILD/ingero-top
pass=0 fail=0 skip=0
failed=()
logdir=$(mktemp -d /tmp/ingero-tests.XXXXXX)
filter=${1:-}

run() { # name, command...
	local name=$1; shift
	[ -n "$filter" ] && [[ $name != *$filter* ]] && return
	local log=$logdir/${name//\//_}.log start=$SECONDS
	"$@" >"$log" 2>&1
	local rc=$?
	local t=$((SECONDS - start))
	if [ $rc = 0 ]; then
		pass=$((pass + 1)); printf 'PASS %-44s %3ds\n' "$name" "$t"
	elif [ $rc = 77 ]; then
		skip=$((skip + 1)); printf 'SKIP %-44s %s\n' "$name" "$(tail -n 1 "$log")"
	else
		fail=$((fail + 1)); failed+=("$name")
		printf 'FAIL %-44s %3ds (exit %d)\n' "$name" "$t" "$rc"
		sed 's/^/    | /' "$log" | tail -n 40
	fi
}

units=0
for t in "$BUILD"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	units=$((units + 1))
	run "unit/$(basename "$t")" "$t"
done
# nothing built is a failure, not an empty pass
if [ $units = 0 ] && [ -z "$filter" ]; then
	fail=$((fail + 1)); failed+=("unit tests not built (make test-build)")
	echo "FAIL no unit test in $BUILD/tests/unit: run make test-build"
fi
for t in tests/integration/test_*.sh tests/tui/test_*.sh; do
	[ -f "$t" ] || continue
	if [ "$(id -u)" != 0 ] && grep -q '^# needs: root' "$t"; then
		skip=$((skip + 1)); printf 'SKIP %-44s needs root\n' "$t"; continue
	fi
	run "$t" timeout 300 bash "$t"
done

echo
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "logs: $logdir"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
