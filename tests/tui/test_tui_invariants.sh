#!/usr/bin/env bash
# needs: root
# The viewer's numbers add up on a live run with exiting processes and
# threads (issue 14): a launcher script starts a workload with threads and
# a forked child that exits early, another that runs on, and short-lived
# helpers (readlink, basename, sleep); the run is recorded, and
# build/tests/unit/test_tui_figures checks every frame of it (each second of
# event time: the same model state the live screens were drawn from).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
[ -x "$IG" ] || skip "$IG not built"
WL=${WL:-$PWD/${BUILD:-build}/workload}
FIG=$PWD/${BUILD:-build}/tests/unit/test_tui_figures
[ -x "$WL" ] && [ -x "$FIG" ] || skip "build first (make test-build)"
[ "$(id -u)" = 0 ] || skip "needs root"
"$IG" check >"$TMPD/check.txt" 2>&1 || skip "ingero-top check fails here: $(tail -n 1 "$TMPD/check.txt")"

{
	echo "$WL --iters 400 --threads 3 --fork --kernels 4 --sync-every 1 --sleep-us 500 &"
	echo "$WL --iters 5000 --threads 2 --kernels 2 --sync-every 2 --host-us 200 &"
	echo "readlink -f /tmp >/dev/null; basename /a/b >/dev/null; sleep 0.2"
	echo "wait"
} >"$TMPD/run.sh"
"$IG" --batch --summary --record "$TMPD/live.db" -- sh "$TMPD/run.sh" >"$TMPD/summary.txt" 2>&1 ||
	fail "the live run failed: $(tail -n 3 "$TMPD/summary.txt")"
ok "recorded a live run with exiting processes and threads"
"$FIG" "$TMPD/live.db" >"$TMPD/fig.txt" 2>&1 || {
	tail -20 "$TMPD/fig.txt"
	fail "the figures do not add up on the live run"
}
grep -E 'frames|passed' "$TMPD/fig.txt"
procs=$(sqlite3 "$TMPD/live.db" 'select count(distinct pid) from events' 2>/dev/null)
[ "${procs:-0}" -ge 4 ] || fail "only ${procs:-0} processes recorded (the launcher, 3 workloads, helpers)"
ok "every frame of the live run adds up ($procs processes)"
