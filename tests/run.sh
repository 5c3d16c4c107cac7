#!/usr/bin/env bash
# Runs every test: unit programs, root integration scripts, TUI scripts.
# A script passes with exit 0, is skipped with exit 77 (it says why), and
# fails otherwise. Prints "N passed, N failed, N skipped" last.
#
# Three phases (README.md, "Tests"):
#  1. the unit programs, JOBS at a time (no clock limits, no shared state);
#  2. the root integration scripts one at a time: they load BPF programs,
#     count them, and check timing that a neighbour would disturb; and the
#     scripts marked "# needs: alone" (the shims' simulated times);
#  3. the integration scripts without "# needs:" (no BPF program, no timing),
#     the root ones marked "# shares: pool" (their checks hold beside a
#     neighbour: the fleet over real sshd hosts) and every TUI script,
#     POOL_JOBS at a time: they replay recordings or wait
#     on screens, each with its own temporary files, tmux server and ports,
#     and poll with deadlines. Longest first. They mostly wait (a key, then
#     a look at the screen): at 2 at a time the CPUs idled 72 % of the TUI
#     scripts' run, so twice as many run as there are CPUs.
# JOBS defaults to 2, POOL_JOBS to twice the CPUs this shell may use (at
# most 6). Results are reported in order as each one ends.
#
# The integration scripts of phase 3 (no BPF, no timing: they replay
# recordings, fuzz, query) do not wait for phase 2: one at a time, they run
# beside it under SCHED_IDLE (chrt -i 0), which takes only CPU time that
# nothing else wants: a traced workload or ingero-top that wakes preempts
# them at once, so phase 2's timing is not disturbed, and the CPUs that
# phase 2 leaves idle (its workloads mostly sleep or wait on one CPU) do
# their work. Their results are reported at the end. BESIDE=0 turns it off.
set -u
cd "$(dirname "$0")/.."
export BUILD=${BUILD:-build}
export IG=$PWD/$BUILD/ingero-top
pass=0 fail=0 skip=0
failed=()
logdir=$(mktemp -d /tmp/ingero-tests.XXXXXX)
filter=${1:-}
jobs_max=${JOBS:-2}
ncpu=$(nproc 2>/dev/null || echo 1)
pool_jobs=${POOL_JOBS:-$((2 * ncpu > 6 ? 6 : 2 * ncpu))}

report() { # name, rc, seconds, log
	if [ "$2" = 0 ]; then
		pass=$((pass + 1)); printf 'PASS %-44s %3ds\n' "$1" "$3"
	elif [ "$2" = 77 ]; then
		skip=$((skip + 1)); printf 'SKIP %-44s %s\n' "$1" "$(tail -n 1 "$4")"
	else
		fail=$((fail + 1)); failed+=("$1")
		printf 'FAIL %-44s %3ds (exit %d)\n' "$1" "$3" "$2"
		sed 's/^/    | /' "$4" | tail -n 40
	fi
}
log_of() { echo "$logdir/${1//\//_}.log"; }
# Runs a unit program (a path under $BUILD) or a script (SCRIPT_TIMEOUT
# seconds at most, 600 by default: a guard against a hung script, not a
# speed limit; the longest, test_sweep_quick, took 184 s on the 2-CPU VM
# under other sessions' load, and 300 s would have failed it on a machine
# under twice as slow).
run_one() { # name
	if [[ $1 == *.sh ]]; then
		timeout "${SCRIPT_TIMEOUT:-600}" bash "$1"
	else
		"$BUILD/tests/$1"
	fi
}
selected() { # name: 0 when the filter keeps it
	[ -z "$filter" ] || [[ $1 == *$filter* ]]
}
root_only() { # script
	[[ $1 == *.sh ]] && grep -q '^# needs: root' "$1"
}
alone_only() { # script: root, or timing that a neighbour would disturb
	[[ $1 == *.sh ]] && grep -qE '^# needs: (root|alone)' "$1" && ! grep -q '^# shares: pool' "$1"
}

# Runs NAMES (unit/test_x or a script path) JOBS at a time; reports them
# in the given order as each one ends.
pool() {
	local names=("$@") next=0 i
	pool_one() {
		local log start=$SECONDS
		log=$(log_of "$1")
		run_one "$1" >"$log" 2>&1
		echo "$? $((SECONDS - start))" >"$log.rc"
	}
	report_done() { # reports, in order, those that have ended
		local rc secs log
		while [ $next -lt ${#names[@]} ]; do
			log=$(log_of "${names[$next]}")
			[ -f "$log.rc" ] || return 0
			read -r rc secs <"$log.rc"
			report "${names[$next]}" "$rc" "$secs" "$log"
			next=$((next + 1))
		done
	}
	for ((i = 0; i < ${#names[@]}; i++)); do
		while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
			wait -n
			report_done
		done
		pool_one "${names[$i]}" &
	done
	wait
	report_done
}

# 1. unit programs
units=()
for t in "$BUILD"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	selected "unit/${t##*/}" && units+=("unit/${t##*/}")
done
# nothing built is a failure, not an empty pass
if [ -z "$filter" ] && ! ls "$BUILD"/tests/unit/test_* >/dev/null 2>&1; then
	fail=$((fail + 1)); failed+=("unit tests not built (make test-build)")
	echo "FAIL no unit test in $BUILD/tests/unit: run make test-build"
fi
[ ${#units[@]} -gt 0 ] && pool "${units[@]}"

# 2. root integration scripts, alone; 3. the others, a pool
alone=() shared=()
for t in tests/integration/test_*.sh; do
	[ -f "$t" ] && selected "$t" || continue
	if alone_only "$t"; then alone+=("$t"); else shared+=("$t"); fi
done
for t in tests/tui/test_*.sh; do
	[ -f "$t" ] && selected "$t" && shared+=("$t")
done
# 2b. beside phase 2 at idle priority: the integration scripts that need
# neither root nor quiet (see the header)
beside=() tui=()
for t in "${shared[@]}"; do
	if [ "${BESIDE:-1}" = 1 ] && [[ $t == tests/integration/* ]] && ! root_only "$t"; then
		beside+=("$t")
	else
		tui+=("$t")
	fi
done
shared=("${tui[@]}")
beside_run() {
	local t log start
	for t in "${beside[@]}"; do
		log=$(log_of "$t") start=$SECONDS
		chrt -i 0 bash -c 'exec timeout "${SCRIPT_TIMEOUT:-600}" bash "$1"' _ "$t" >"$log" 2>&1
		echo "$? $((SECONDS - start))" >"$log.rc"
	done
}
# not a job of this shell (pool counts its jobs): a grandchild, ended with
# the run if the run is stopped
beside_done=$logdir/beside.done
if [ ${#beside[@]} -gt 0 ]; then
	( (echo $BASHPID >"$logdir/beside.pid"; beside_run; touch "$beside_done") & )
	trap '[ -e "$beside_done" ] || { p=$(cat "$logdir/beside.pid" 2>/dev/null); [ -n "$p" ] && kill -STOP "$p" && pkill -P "$p"; kill -KILL "$p"; } 2>/dev/null' EXIT
fi
for t in "${alone[@]}"; do
	if [ "$(id -u)" != 0 ] && root_only "$t"; then
		skip=$((skip + 1)); printf 'SKIP %-44s needs root\n' "$t"; continue
	fi
	log=$(log_of "$t") start=$SECONDS
	run_one "$t" >"$log" 2>&1
	report "$t" "$?" $((SECONDS - start)) "$log"
done
runnable=()
for t in "${shared[@]}"; do
	if [ "$(id -u)" != 0 ] && root_only "$t"; then
		skip=$((skip + 1)); printf 'SKIP %-44s needs root\n' "$t"; continue
	fi
	runnable+=("$t")
done
# longest first (seconds measured on a 2-CPU VM; unlisted ones last)
longest=(test_fleet_ssh test_replay_fixtures test_fuzz_replay test_tui_htop test_tui_end_live test_tui_keys
	test_tui_freeze test_tui_kill test_tui_cause test_gpu_pane test_tui_color test_mcp
	test_perfetto test_tui_stacks)
ordered=()
for l in "${longest[@]}"; do
	for t in "${runnable[@]}"; do [[ $t == */$l.sh ]] && ordered+=("$t"); done
done
for t in "${runnable[@]}"; do
	[[ " ${ordered[*]} " == *" $t "* ]] || ordered+=("$t")
done
[ ${#ordered[@]} -gt 0 ] && jobs_max=$pool_jobs && pool "${ordered[@]}"
if [ ${#beside[@]} -gt 0 ]; then
	while [ ! -e "$beside_done" ]; do sleep 1; done
	for t in "${beside[@]}"; do
		log=$(log_of "$t")
		read -r rc secs <"$log.rc"
		report "$t" "$rc" "$secs" "$log"
	done
fi

echo
# the failed checks again, last, where a runner that keeps only the head
# and the tail of the output (CI) still shows them
for t in "${failed[@]}"; do
	echo "$t:"
	grep -E '^ *(FAIL|CONTRACT|UNJUDGED) ' "$(log_of "$t")" 2>/dev/null | head -n 12 | sed 's/^ */    /'
done
[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "logs: $logdir"
echo "$pass passed, $fail failed, $skip skipped"
[ $fail = 0 ]
