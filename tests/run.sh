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
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] || continue
	if [ "$(id -u)" != 0 ] && grep -q '^# needs: root' "$t"; then
		skip=$((skip + 1)); printf 'SKIP %-44s needs root\n' "$t"; continue
	fi
	run "$t" timeout 300 bash "$t"
done

# The terminal tests wait on screens far more than they compute: they run
# TUI_JOBS at a time (default 2; each has its own tmux server and polls with
# a deadline), after the integration tests, whose timing checks run alone.
# Their results are reported in order as each one ends.
tui_one() { # script: writes its rc and seconds beside its log
	local t=$1 log=$logdir/${1//\//_}.log start=$SECONDS
	timeout 300 bash "$t" >"$log" 2>&1
	echo "$? $((SECONDS - start))" >"$log.rc"
}
tui=()
for t in tests/tui/test_*.sh; do
	[ -f "$t" ] || continue
	[ -n "$filter" ] && [[ $t != *$filter* ]] && continue
	if [ "$(id -u)" != 0 ] && grep -q '^# needs: root' "$t"; then
		skip=$((skip + 1)); printf 'SKIP %-44s needs root\n' "$t"; continue
	fi
	tui+=("$t")
done
report_tui() { # script: the result tui_one left
	local t=$1 log=$logdir/${1//\//_}.log rc secs
	read -r rc secs <"$log.rc"
	if [ "$rc" = 0 ]; then
		pass=$((pass + 1)); printf 'PASS %-44s %3ds\n' "$t" "$secs"
	elif [ "$rc" = 77 ]; then
		skip=$((skip + 1)); printf 'SKIP %-44s %s\n' "$t" "$(tail -n 1 "$log")"
	else
		fail=$((fail + 1)); failed+=("$t")
		printf 'FAIL %-44s %3ds (exit %d)\n' "$t" "$secs" "$rc"
		sed 's/^/    | /' "$log" | tail -n 40
	fi
}
jobs_max=${TUI_JOBS:-2}
next=0
for ((i = 0; i < ${#tui[@]}; i++)); do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	tui_one "${tui[$i]}" &
	# report, in order, those that have ended
	while [ $next -lt $i ] && [ -f "$logdir/${tui[$next]//\//_}.log.rc" ]; do
		report_tui "${tui[$next]}"; next=$((next + 1))
	done
done
wait
while [ $next -lt ${#tui[@]} ]; do
	report_tui "${tui[$next]}"; next=$((next + 1))
done

echo
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "logs: $logdir"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
