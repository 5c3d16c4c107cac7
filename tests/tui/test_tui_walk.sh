#!/usr/bin/env bash
# Walking a replay, as in below and atop (no root: the shipped recording):
# t and T step one window (10 s) back and forward, j jumps to a typed time
# (an offset from the start or the end, a time of day on the header's
# clock), Home and End go to the start and the end; each leaves the replay
# paused there. At every stop the screen is checked against SQLite's
# counts of the recording up to that moment: the position ("at 12s/22s"),
# the header's event count, cudaLaunchKernel's CALLS, the clock, the
# alerts of that time (none before the first detection, 3.2 s in) and the
# timeline strip under the header. A bad entry in the jump prompt says
# why and changes nothing. The keys are in the hint bar and the help;
# --window sets the step; with --since/--until, Home and End are the
# range's ends.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
command -v python3 >/dev/null || skip "python3 is not installed"

db=$TUI_ROOT/tests/scenarios/cpu-contention.db
S=1000000000
read -r start_ns end_ns < <("$IG" --json --summary --replay "$db" | python3 -c '
import json, sys
s = json.load(sys.stdin)["status"]
print(s["replay_start_ns"], s["replay_end_ns"])')
[ -n "$end_ns" ] || fail "no span from --json --summary"
len_s=$(((end_ns - start_ns) / S))
first_alert=$(sqlite3 "$db" "SELECT MIN(detected_at) FROM causal_chains")
[ -n "$first_alert" ] || fail "the recording has no chains"
# a zone that is not UTC: a time of day is read on the clock the header shows
export TZ=Etc/GMT-2

# events: what the header counts up to event time $1 (the rows the replay
# ingests: calls, host snapshots, process names); calls: cudaLaunchKernel's
events_at() {
	sqlite3 "$db" "SELECT (SELECT COUNT(*) FROM events WHERE end_ns <= $1)
		+ (SELECT COUNT(*) FROM system_snapshots WHERE timestamp <= $1)
		+ (SELECT COUNT(*) FROM process_names WHERE is_event = 1 AND seen_at <= $1)"
}
calls_at() {
	sqlite3 "$db" "SELECT COUNT(*) FROM events e JOIN ops o ON o.source_id = e.source
		AND o.op_id = e.op WHERE o.name = 'cudaLaunchKernel' AND e.end_ns <= $1"
}
clock_at() { python3 -c 'import sys, time; print(time.strftime("%H:%M:%S", time.localtime(int(sys.argv[1]) // 10**9)))' "$1"; }

# at POS_NS WHAT: the screen shows the replay paused at POS_NS, with the
# numbers of the recording up to there
at() {
	local pos=$1 what=$2 off pct
	off=$(((pos - start_ns) / S))
	pct=$(python3 -c "print('%.0f' % (100.0 * ($pos - $start_ns) / ($end_ns - $start_ns)))")
	expect " PAUSED .* at ${off}s/${len_s}s ${pct}% " "$what: paused at ${off}s/${len_s}s ${pct}%"
	expect " events $(events_at "$pos") " "$what: the header counts the $(events_at "$pos") events up to there"
	local want got
	want=$(calls_at "$pos")
	if [ "$want" = 0 ]; then
		expect '^ no CUDA calls yet' "$what: no CUDA call yet, as SQLite counts"
	else
		got=$(cell '^! GPU API' '^. cudaLaunchKernel ' CALLS)
		[ "$got" = "$want" ] || fail "$what: cudaLaunchKernel CALLS $got, SQLite counts $want"
		ok "$what: cudaLaunchKernel CALLS $want as SQLite counts"
	fi
	expect " $(clock_at "$pos")\$" "$what: the clock says $(clock_at "$pos")"
	if [ "$pos" -lt "$first_alert" ]; then
		expect ' no alerts ' "$what: no alert yet (the first is detected later)"
	else
		expect ' 2 alerts \(worst HIGH\) ' "$what: the recording's two alerts"
	fi
}
# typed text, even when it starts with a dash
type_text() { "${TMUX_CMD[@]}" send-keys -t $T -l -- "$1"; sleep "${KEY_PAUSE:-0.25}"; }
# the timeline (row 4): the position mark at the left or the right end
strip() { line 4; }

start 140 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 "$IG" --replay "$db" --speed 0
wait_for 'end of the recording' 60
expect ' at [0-9]+s/[0-9]+s 100% ' "--speed 0 plays to the end"
expect 'tStep- TStep\+ jJump HomeStart EndEnd' "the walk keys lead the hint bar"
strip | grep -qE '^ [0-9:]{8} .*!.*█ [0-9:]{8} *$' ||
	fail "the timeline: the clocks, an alert mark, the position at the end: $(strip)"
ok "the timeline shows the span, the alert mark and the position at the end"

keys t
at $((end_ns - 10 * S)) "t: one window back"
keys t
at $((end_ns - 20 * S)) "t again"
keys t
at "$start_ns" "t stops at the start"
strip | grep -qE '^ [0-9:]{8} █.*!' || fail "the timeline at the start: $(strip)"
ok "the timeline puts the position at the start"
keys T
at $((start_ns + 10 * S)) "T: one window forward"
keys End
at "$end_ns" "End: the end"
keys Home
at "$start_ns" "Home: the start"

# j: offsets, a time of day, a bad entry, Esc
keys j
expect 'Jump to: .*Enter jump  Esc cancel' "j opens the jump prompt"
type_text '+5s'
keys Enter
at $((start_ns + 5 * S)) "j +5s"
keys j
type_text '-5s'
keys Enter
at $((end_ns - 5 * S)) "j -5s (before the end)"
tod_ns=$(((start_ns + 8 * S) / S * S))
keys j
type_text "$(clock_at "$tod_ns")"
keys Enter
at "$tod_ns" "j $(clock_at "$tod_ns") (the header's clock, TZ=$TZ)"
keys j
type_text 'soon'
keys Enter
expect "Jump to: soon +'soon' is not a time" "a bad time: the prompt says why and stays"
keys Escape
expect 'jump cancelled' "Esc cancels"
at "$tod_ns" "after the bad entry: where it was"
keys j
type_text "$((end_ns + 60 * S))"
keys Enter
at "$end_ns" "a time after the end: the end"

# p plays on from a step: the position moves (at --speed 0, to the end)
keys Home
at "$start_ns" "Home again"
keys p
wait_for 'end of the recording' 60
expect_not ' PAUSED ' "p resumes after a walk"

# the help lists the walk keys
keys h
expect_scroll 'Step one window back' "the help lists t"
keys Escape

# narrow: the timeline keeps a row, without the clocks
resize 50 20
expect '(━|=)*(█|#)' "50x20: the timeline is still drawn"
keys q
wait_exit 30
stop

# --window 5: a step is 5 s
start 120 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 "$IG" --replay "$db" --speed 0 --window 5
wait_for 'end of the recording' 60
keys t
at $((end_ns - 5 * S)) "--window 5, t: 5 s back"
keys q
wait_exit 30
stop

# --since/--until: Home and End are the range's ends, the position counts
# within it
start 120 40 env LANG=C.UTF-8 LC_ALL=C.UTF-8 "$IG" --replay "$db" --speed 0 --since +5s --until +12s
wait_for ' at 6s/6s 100% ' 60
keys Home
expect ' PAUSED .* at 0s/6s 0% ' "--since/--until, Home: the range's start"
keys End
expect ' PAUSED .* at 6s/6s 100% ' "--since/--until, End: the range's end"
keys t
expect ' PAUSED .* at 0s/6s 0% ' "--since/--until, t stops at the range's start"
keys q
wait_exit 30
