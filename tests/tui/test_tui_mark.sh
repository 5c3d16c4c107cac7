#!/usr/bin/env bash
# Comparing two times (issue 27: "what changed at 14:02"), at 80x24, on
# the shipped memcpy recording (no root; cudaLaunchKernel's p99 is 2.7
# times as high 10 s before the end): m at the end of the replay marks that
# moment (MARK and its clock in the header, mUnmark in the hint bar);
# t (one window back) and j +5s move, and the op table shows P99 and
# CALLS/S as mark→now: the mark's side is what the screen showed at the
# mark, the current side is the p99 SQLite computes from the recording's
# calls in the window (within the histogram's error) and what the screen
# shows once the mark is cleared; an op the current window has no row for
# (cudaFree, called at the end only) reads "-". The timeline shows an M at
# the mark, the time split under the processes and the process screen's
# "where the time goes" give each part as mark→now, and m again clears it.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

db=$TUI_ROOT/tests/scenarios/memcpy.db
S=1000000000
read -r start_ns end_ns < <("$IG" --json --summary --replay "$db" | python3 -c '
import json, sys
s = json.load(sys.stdin)["status"]
print(s["replay_start_ns"], s["replay_end_ns"])')
[ -n "$end_ns" ] || fail "no span from --json --summary"
len_s=$(((end_ns - start_ns) / S))
export TZ=Etc/GMT-2
clock_at() { python3 -c 'import sys, time; print(time.strftime("%H:%M:%S", time.localtime(int(sys.argv[1]) // 10**9)))' "$1"; }
A='→'

# p99_at POS_NS OP: the p99 (nearest rank) of OP's calls that ended in the
# window before POS_NS, in ns, from the recording
p99_at() {
	sqlite3 "$db" "SELECT e.duration FROM events e JOIN ops o ON o.source_id = e.source
		AND o.op_id = e.op WHERE o.name = '$2' AND e.end_ns > $1 - 10 * $S
		AND e.end_ns <= $1 ORDER BY e.duration" |
		python3 -c 'import math, sys
v = [int(l) for l in sys.stdin]
print(v[max(0, math.ceil(0.99 * len(v)) - 1)] if v else 0)'
}
# near SCREEN_VALUE NS: a duration as the screen spells it (850ns 12.3us
# 4.56ms 1.23s) within 3 % of NS (the histogram's error and the rounding)
near() {
	python3 -c 'import re, sys
m = re.fullmatch(r"([0-9.]+)(ns|us|ms|s)", sys.argv[1])
if not m: sys.exit(1)
v = float(m.group(1)) * {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
sys.exit(0 if abs(v - int(sys.argv[2])) <= 0.03 * int(sys.argv[2]) else 1)' "$1" "$2"
}
launch() { cell '^! GPU API' '^. cudaLaunchKernel ' "$1"; }
# the timeline: the row with the start and end clocks
strip() { screen | grep -E '^ [0-9:]{8} .* [0-9:]{8} *$' | head -1; }

start 80 24 env LANG=C.UTF-8 LC_ALL=C.UTF-8 "$IG" --replay "$db" --speed 0
wait_for 'end of the recording' 60
expect 'mMark' "the hint bar lists m"
p99_end=$(launch P99)
rate_end=$(launch CALLS/S)
free_end=$(cell '^! GPU API' '^. cudaFree ' P99)
[ -n "$p99_end" ] && [ -n "$rate_end" ] && [ -n "$free_end" ] || fail "no P99 or CALLS/S to mark"

# m at the end: the mark is that moment, and nothing moved yet
keys m
expect " MARK $(clock_at "$end_ns") " "m: the header says MARK $(clock_at "$end_ns")"
expect 'mUnmark' "the hint bar says m unmarks"
expect 'CALLS/S MARK→NOW .*P99 MARK→NOW' "80x24: CALLS/S and P99 as mark→now"
got=$(launch "P99 MARK${A}NOW")
[ "$got" = "$p99_end$A$p99_end" ] || fail "at the mark: P99 $got, want $p99_end$A$p99_end"
ok "at the mark: P99 $got"

# t: one window back; the mark's side stays what the screen showed
pos=$((end_ns - 10 * S))
keys t
expect " PAUSED .*MARK $(clock_at "$end_ns") .* at $(((pos - start_ns) / S))s/${len_s}s " \
	"t: 10 s back, the mark kept"
got=$(launch "P99 MARK${A}NOW")
[ "${got%%$A*}" = "$p99_end" ] || fail "after t: the mark's P99 ${got%%$A*}, the screen showed $p99_end"
want=$(p99_at "$pos" cudaLaunchKernel)
near "${got#*$A}" "$want" || fail "after t: P99 now ${got#*$A}, SQLite's p99 of the window is ${want}ns"
ok "after t: P99 $got (SQLite: ${want}ns now)"
got=$(launch "CALLS/S MARK${A}NOW")
[ "${got%%$A*}" = "$rate_end" ] || fail "after t: the mark's CALLS/S ${got%%$A*}, the screen showed $rate_end"
ok "after t: CALLS/S $got"
strip | grep -qE '█.*M [0-9:]{8} *$' || fail "the timeline: the position, then M at the end: $(strip)"
ok "the timeline shows M at the mark"
expect '^ workload\[[0-9]+\] .*(gpu|api) [0-9.<]+%→[0-9.<]+%' \
	"the time split under the processes: its parts mark→now"

# the process screen: the mark's bar above the current one, parts mark→now
keys Tab
keys Enter
expect '^ mark █' "the process screen: the mark's bar"
expect '^ now  █' "the process screen: the current bar"
expect '^ (GPU wait|gpu) [0-9.<]+%→[0-9.<]+%' "the process screen: GPU wait mark→now"
keys Escape
keys BTab

# j +5s: a seek back rebuilds the model, the mark is a copy and stays
pos=$((start_ns + 5 * S))
keys j
text '+5s'
keys Enter
expect " PAUSED .*MARK $(clock_at "$end_ns") .* at 5s/${len_s}s " "j +5s: the mark kept"
got=$(launch "P99 MARK${A}NOW")
[ "${got%%$A*}" = "$p99_end" ] || fail "after j: the mark's P99 ${got%%$A*}, the screen showed $p99_end"
p99_now=${got#*$A}
want=$(p99_at "$pos" cudaLaunchKernel)
near "$p99_now" "$want" || fail "after j: P99 now $p99_now, SQLite's p99 of the window is ${want}ns"
ok "after j +5s: P99 $got (SQLite: ${want}ns now)"
[ "$(sqlite3 "$db" "SELECT COUNT(*) FROM events e JOIN ops o ON o.source_id = e.source
	AND o.op_id = e.op WHERE o.name = 'cudaFree' AND e.end_ns <= $pos")" = 0 ] ||
	fail "the recording has a cudaFree before +5s: the test needs another op"
got=$(cell '^! GPU API' '^. cudaFree ' "P99 MARK${A}NOW")
[ "$got" = "$free_end$A-" ] || fail "cudaFree (not called yet): P99 $got, want $free_end$A-"
ok "an op of the mark only: cudaFree $got"
got=$(cell '^! GPU API' '^. cudaFree ' CALLS)
[ -z "$got" ] || [ "$got" = - ] || fail "cudaFree (not called yet): CALLS $got, want -"

# m again: cleared; the plain P99 is the current side shown before
keys m
expect "mark $(clock_at "$end_ns") cleared" "m again clears the mark"
expect_not ' MARK ' "the header no longer says MARK"
expect_not 'MARK→NOW' "the op table is back to its columns"
expect 'mMark' "the hint bar says m marks"
got=$(launch P99)
[ "$got" = "$p99_now" ] || fail "after clearing: P99 $got, the current side said $p99_now"
ok "after clearing: P99 $got, as the current side said"
strip | grep -q 'M' && fail "the timeline still shows the mark: $(strip)"
ok "the timeline has no mark"

# the help says how (its last page, at 80x24)
keys h
expect_scroll '^ m +Mark this moment' "the help lists m"
keys End
expect 'Comparing two times' "the help has a section on m"
keys Escape
keys q
wait_exit 30
