#!/usr/bin/env bash
# The main screen on a replay of a real recording: header (mode, position,
# meters, events/s, drops), the GPU API pane grouped by API, the processes
# pane, and an alert; q quits with status 0.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

start 120 40 "$IG" --speed 20 --replay "$FIXTURE"
wait_for 'REPLAY' 5
expect '^ REPLAY .*(x|×)20 +at [0-9]' "header: mode, speed and position"
expect 'CPU\[.*%\]  MEM\[' "header: CPU and memory meters"
expect 'ev/s [0-9.k]+ +events [0-9.k]+ +drops k 0 u 0' "header: events/s and drops"
expect '^! GPU API +CALLS CALLS/S +P50 +P95 +P99 +MAX P99/P50 +WALL TAILPRE' "ops pane columns"
expect '^Runtime API' "ops pane: runtime group"
expect '^Driver API' "ops pane: driver group"
expect 'cudaMemcpyAsync +[0-9]+' "ops pane: an op row"
expect '^ +PID PROCESS +CONTAINER +CALLS/S +GPU% +CPU% +PRE% WAIT% TOP PREEMPTOR +WAKER' \
	"processes pane columns"
expect '^ +2233 python3 ' "processes pane: the traced process"
wait_for '^(HIGH|MED|LOW|INFO) +[0-9]+(s|m)' 20
ok "an alert appears"
expect '^SEV +AGE IMPACT ALERT' "alerts pane columns"
expect 'F1Help F10Quit' "hint bar"
# the hint bar is the last line, the header the first
line 1 | grep -q REPLAY || fail "header not on line 1"
line 40 | grep -q F1Help || fail "hints not on line 40"
wait_for ' at 1m28s/1m28s 100% ' 20
ok "the replay reaches its end"
expect 'F1Help F10Quit' "the hint bar stays at the end"
# the notice went to the header for a few seconds, and to the log for good
keys l
expect 'end of the recording' "the end of the recording is announced (in the log)"
keys l
keys q
wait_exit 5
[ "$(cat "$TMPD/status")" = 0 ] || fail "exit status $(cat "$TMPD/status")"
ok "q quits with status 0"
