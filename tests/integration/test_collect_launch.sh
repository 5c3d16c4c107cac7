#!/usr/bin/env bash
# needs: root
# No call is lost at the start of a target, whatever starts it: a command
# behind launchers that exec it (env, sh -c, nice + taskset), a 0.1 s job,
# --pid of a launcher that execs the workload later, and the default mode
# (the first process that loads a CUDA library the collector has never
# seen, and an identical second one). The per-op counts equal the
# workload's own, exactly, each run (REPEAT runs, default 2). Where calls
# can still be missed they are counted and said: a process found running
# with CUDA mapped, and holds turned off, are "attached late".
. "$(dirname "$0")/lib.sh"
need_root
REPEAT=${REPEAT:-2}
# A CPU this shell may run on (never a fixed number).
CPU=$(python3 -c 'import os; print(sorted(os.sched_getaffinity(0))[0])')
WLA=(--iters 300 --kernels 3 --kernel-us 1 --malloc-every 50)

wait_for() { for _ in $(seq 200); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
total() { awk '$1 != "pid" {s += $2} END {print s + 0}' "$1"; }
calls_of() { # events, expect: calls of the expect file's processes
	awk 'NR == FNR { if ($1 == "pid") want["pid=" $2] = 1; next } $2 == "call" && ($3 in want)' \
		"$2" "$1" | wc -l
}
# Waits (20 s at most) until the events file has every call of the expect
# file, while ingero-top still runs: --events writes as it reads (1 when not).
wait_calls() {
	for _ in $(seq 400); do
		[ -s "$2" ] && [ "$(calls_of "$1" "$2")" -ge "$(total "$2")" ] && return 0
		sleep 0.05
	done
	return 1
}
check() { # name, events, expect
	event_counts_of "$2" "$3" >"$TMP/got"
	expect_counts "$3" >"$TMP/want"
	if [ -s "$TMP/want" ] && diff -u "$TMP/want" "$TMP/got" >"$TMP/diff"; then
		ok "$1: per-op counts equal the workload's own ($(total "$3") calls)"
	else
		bad "$1: per-op counts differ (want vs got):"; cat "$TMP/diff"
	fi
}
run_cmd() { # name, expect, command...
	local name=$1 exp=$2; shift 2
	rm -f "$exp"
	"$IG" -v --events --no-system-libs -- "$@" >"$TMP/c.ev" 2>"$TMP/c.err"
	expect_eq "$name: exit status" "$?" 0
	check "$name" "$TMP/c.ev" "$exp"
}

for run in $(seq "$REPEAT"); do
	E=$TMP/r$run
	run_cmd "run $run: -- workload" "$E.direct" "$WL" "${WLA[@]}" --expect "$E.direct"
	run_cmd "run $run: -- env A=1 workload" "$E.env" env A=1 "$WL" "${WLA[@]}" --expect "$E.env"
	grep -q "held workload\[[0-9]*\] for .* (libraries loaded)" "$TMP/c.err" \
		&& ok "run $run: env: held at the library load" || bad "env: no hold: $(cat "$TMP/c.err")"
	run_cmd "run $run: -- sh -c (exec)" "$E.sh" sh -c "$WL ${WLA[*]} --expect $E.sh"
	run_cmd "run $run: -- sh -c (fork)" "$E.shf" sh -c "$WL ${WLA[*]} --expect $E.shf; true"
	run_cmd "run $run: -- nice taskset" "$E.nice" nice -n 5 taskset -c "$CPU" "$WL" "${WLA[@]}" \
		--expect "$E.nice"
	run_cmd "run $run: 0.1 s job under nice taskset" "$E.short" nice -n 5 taskset -c "$CPU" \
		"$WL" --iters 1000 --kernels 4 --kernel-us 20 --expect "$E.short"

	# --pid of a launcher that execs the workload once told to.
	rm -f "$TMP/go" "$E.pid"
	sh -c "while [ ! -e $TMP/go ]; do sleep 0.01; done; exec env A=1 $WL ${WLA[*]} --expect $E.pid" \
		2>/dev/null &
	launcher=$!
	rm -f "$TMP/p.ev" "$TMP/p.err" # not last run's "watching"
	"$IG" -v --events --pid "$launcher" >"$TMP/p.ev" 2>"$TMP/p.err" &
	ig=$!
	wait_for "watching" "$TMP/p.err" || bad "--pid: no loader watched"
	touch "$TMP/go"
	wait $launcher
	wait_calls "$TMP/p.ev" "$E.pid" || bad "run $run: --pid launcher: calls not in the events file while running"
	kill -INT $ig; wait $ig
	expect_eq "run $run: --pid launcher: ingero-top exit status" "$?" 0
	check "run $run: --pid of a launcher that execs the workload" "$TMP/p.ev" "$E.pid"

	# Default mode: the first process to load the libraries and a second.
	rm -f "$TMP/a.ev" "$TMP/a.err"
	"$IG" -v --events --no-system-libs >"$TMP/a.ev" 2>"$TMP/a.err" &
	ig=$!
	wait_for "watching" "$TMP/a.err" || bad "default mode: no loader watched"
	"$WL" "${WLA[@]}" --expect "$E.first" 2>/dev/null
	"$WL" "${WLA[@]}" --expect "$E.second" 2>/dev/null
	wait_calls "$TMP/a.ev" "$E.first" || bad "run $run: default mode: calls not in the events file while running"
	wait_calls "$TMP/a.ev" "$E.second" || bad "run $run: default mode: second's calls not in the events file"
	kill -INT $ig; wait $ig
	expect_eq "run $run: default mode: ingero-top exit status" "$?" 0
	check "run $run: default mode, first process" "$TMP/a.ev" "$E.first"
	check "run $run: default mode, second process" "$TMP/a.ev" "$E.second"
done

# The status says what was done and what may be missing (JSON, live only).
status() { grep '^{' "$1" | tail -n 1 | python3 -c "import json,sys; s=json.load(sys.stdin)['status']; print(s['$2'])"; }
"$IG" --batch --json --summary --no-system-libs -- env A=1 "$WL" "${WLA[@]}" >"$TMP/s.json" 2>/dev/null
[ "$(status "$TMP/s.json" holds)" -ge 1 ] && ok "status: holds $(status "$TMP/s.json" holds)" \
	|| bad "status: no hold counted"
expect_eq "status: processes attached late" "$(status "$TMP/s.json" late_pids)" 0
expect_eq "status: partial calls" "$(status "$TMP/s.json" calls_partial)" 0

# Without holds, a call can be missed: the process is reported late.
INGERO_TOP_NO_HOLD=1 "$IG" --batch --json --summary --no-system-libs -- env A=1 "$WL" "${WLA[@]}" \
	>"$TMP/n.json" 2>"$TMP/n.err"
expect_eq "no holds: processes attached late (status)" "$(status "$TMP/n.json" late_pids)" 1
# (Which look finds the library first, the loader's notice or a rescan,
# depends on timing: either says so.)
grep -q "^ingero-top: attached to PID [0-9]* late (" "$TMP/n.err" \
	&& ok "no holds: said on stderr" || bad "no holds: not said: $(cat "$TMP/n.err")"
# ... and the command's exit too, though both came in one tick (a 10 ms run:
# the exit's notice once overwrote the late one, which was never printed)
grep -q "^ingero-top: env exited with status 0$" "$TMP/n.err" &&
	ok "no holds: the exit said after it" || bad "no holds: the exit not said: $(cat "$TMP/n.err")"

# --pid of a process that already maps CUDA: its earlier calls are unknown.
"$WL" --wait-signal --iters 5 --kernels 1 >"$TMP/w.out" 2>/dev/null &
wl=$!
wait_for ready "$TMP/w.out"
"$IG" --batch -n 1 -d 0.2 --pid "$wl" >"$TMP/l.out" 2>"$TMP/l.err"
grep -q "^attach: attached late to 1 process (PID $wl): a CUDA library was mapped before" "$TMP/l.out" \
	&& ok "--pid of a running CUDA process: attached late, in the attach summary" \
	|| bad "--pid late: $(head -n 8 "$TMP/l.out")"
grep -q "^collection late 1 (PID $wl) " "$TMP/l.out" && ok "--pid late: in the frame header" \
	|| bad "--pid late: header: $(grep collection "$TMP/l.out")"
kill -USR1 $wl; wait $wl
finish
