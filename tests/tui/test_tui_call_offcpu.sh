#!/usr/bin/env bash
# o on one of the slowest calls shows its off-CPU intervals however long ago
# they were (model/callev.c): replaying tests/scenarios/cpu-contention.db to
# its end, the window's slowest cudaLaunchKernel call was preempted once,
# seconds before the end; its thread left the CPU about 1 100 times since,
# far more than the 32 intervals a thread keeps. o on it shows that very
# interval (its time, its duration as SQLite has it, the preemptor), not
# "its intervals are gone".
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"

db=$TUI_ROOT/tests/scenarios/cpu-contention.db
# the slowest cudaLaunchKernel call of the last 9 s (the window's slowest at
# the end: the window is the last 10 s), and the off-CPU interval inside it
read -r cts cdur <<<"$(sqlite3 -separator ' ' "$db" "SELECT e.start_ns, e.duration FROM events e JOIN ops o ON o.source_id = e.source AND o.op_id = e.op WHERE o.name = 'cudaLaunchKernel' AND e.kind = 1 AND e.end_ns > (SELECT MAX(end_ns) FROM events) - 9000000000 ORDER BY e.duration DESC LIMIT 1")"
odur=$(sqlite3 "$db" "SELECT duration FROM events WHERE kind = 2 AND start_ns >= $cts AND start_ns < $cts + $cdur ORDER BY start_ns LIMIT 1")
later=$(sqlite3 "$db" "SELECT COUNT(*) FROM events WHERE kind = 2 AND start_ns > $cts + $cdur AND tid = (SELECT tid FROM events WHERE start_ns = $cts AND kind = 1 LIMIT 1)")
[ -n "$odur" ] && [ "$later" -gt 32 ] || fail "the recording lacks the case: interval '$odur', $later later intervals"
ms=$(python3 -c "print('%.2fms' % ($odur / 1e6))")

start 120 45 "$IG" --speed 0 --replay "$db"
wait_for 'at 22s/22s' 60
keys p
keys /
text cudaLaunchKernel
keys Enter
keys Enter
expect '^ cudaLaunchKernel  runtime API' "op screen"
expect 'slowest calls in the window' "the slowest calls"
# focus the slowest calls (after the processes), its first row, then o
keys Tab
keys o
expect '^ during cudaLaunchKernel at [0-9:.]+, ' "o on the slowest call: its thread during it"
expect "^[0-9:.]+ +$ms preempted in a CUDA( cal|…).* ig-hog\[" \
	"its interval is there ($ms, preempted by ig-hog), $later intervals later"
expect_not 'intervals are gone|none kept for this call' "nothing said to be gone"
keys q
wait_exit 10
stop
exit 0
