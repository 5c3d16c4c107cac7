#!/usr/bin/env bash
# The cause in the first line (issue 14), at 80x24, 120x40 and 200x60, on
# the shipped CPU-contention recording: the alert row leads with the cause
# and the culprit, cut at a word, never inside a name[pid]; the header says
# "1 alert (HIGH)"; wide terminals grow the names, the alert and the p99
# trend, narrow ones abbreviate op names (the help lists them); n opens the
# top alert from anywhere, N and n move between alerts; r asks before it
# wipes anything; the hint bar stays while paused and at the end; e, the
# sort keys and the F6 menu explain the columns; every evidence key is
# explained beside its value.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
REC=tests/scenarios/cpu-contention.db
# the hog's pid in the shipped recording (it changes when it is made again)
HOG=$(sqlite3 "$REC" "SELECT other_pid FROM events WHERE other_comm = 'ig-hog' LIMIT 1")

for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	echo "--- $size"
	start "$w" "$h" "$IG" --speed 0 --replay "$REC"
	wait_for ' 100% ' 20
	wait_for '^HIGH ' 20
	# the recording holds two chains: CPU contention and the launches' own
	# CPU work (launch overhead), both HIGH
	expect '2 alerts \(worst HIGH\)' "$size: the header: how many alerts and the worst"
	expect '^HIGH +[0-9]+s +50% CPU contention by ig-hog\['"$HOG"'\]: ' \
		"$size: the alert row leads with the cause and the culprit"
	names_whole || fail "$size: a name[pid] cut in the middle"
	ok "$size: no name[pid] cut"
	if [ "$w" -ge 200 ]; then
		expect 'CPU contention by ig-hog\['"$HOG"'\]: .*91% of its tail preempted\)$' \
			"$size: a wide terminal shows the whole alert"
		expect 'cudaStreamSynchronize +[0-9]' "$size: op names in full"
		expect '^! GPU API .*P99 TREND' "$size: the p99 trend"
	elif [ "$w" -le 80 ]; then
		expect '^HIGH .*…$|^HIGH .*\.\.\.$' "$size: a narrow one cuts the alert at a word"
		expect 'cudaStreamSync +[0-9]' "$size: abbreviated op names"
	fi
	expect 'F1Help F10Quit pPause' "$size: the hint bar at the end of the replay"
	keys p
	expect 'F1Help F10Quit pResume' "$size: the hint bar while paused (p resumes)"

	# n from anywhere: an op screen -> the top alert; then next / previous
	keys Enter
	expect '^ [a-zA-Z]+  (runtime|driver) API' "$size: an op screen"
	keys n
	expect '^ \[HIGH\] chain-0001  CPU contention  active' "$size: n opens the top alert"
	expect 'impact +50% of the feeding threads' "$size: the alert screen says the impact"
	expect_scroll 'impact_pct +50%  share of the feeding threads' "$size: evidence keys explained"
	expect_scroll 'feeder_wall_ns +[0-9.]+s  wall time of the feeding threads' \
		"$size: the denominator explained"
	names_whole || fail "$size: a name[pid] cut on the alert screen"
	keys n
	expect '^ \[HIGH\] chain-0002  launch overhead  active' "$size: n: the next alert"
	keys n
	expect 'no next alert' "$size: n on the last alert"
	keys Escape
	keys Escape
	expect '^! GPU API' "$size: back to the main screen"

	# r asks first
	keys r
	expect 'y/N Reset the statistics and the alerts' "$size: r asks"
	keys Escape
	expect 'cancelled' "$size: Esc cancels"
	expect '^HIGH ' "$size: nothing was reset"

	# what a column means: e, the sort keys, the F6 menu
	# n leaves the focus on the alerts pane: Tab to the op table first (each
	# e waits up to 3 s for its words: a slow redraw is not a wrong pane)
	explained() {
		local i
		for i in $(seq 30); do
			screen | grep -q 'GPU API: the CUDA' && return 0
			sleep 0.1
		done
		return 1
	}
	for _ in 1 2 3; do
		keys e
		explained && break
		keys Tab
	done
	expect 'GPU API: the CUDA' "$size: e explains the sorted column"
	keys '>'
	expect 'CALLS: calls since' "$size: > moves the sort and explains the column"
	keys F6
	expect 'Sort by' "$size: the sort menu"
	keys Down
	expect 'calls since the start|calls per second' "$size: the menu explains the chosen column"
	keys Escape
	keys h
	expect 'help \(replay mode\)' "$size: the help"
	keys /
	keys q
	wait_exit 10
	stop
done

# the help lists every column and the abbreviations
start 120 40 "$IG" --speed 0 --replay "$REC"
wait_for ' 100% ' 20
keys h
expect 'help \(replay mode\)' "the help"
for k in $(seq 12); do keys NPage; screen >>"$TMPD/help.txt"; done
for want in 'TAILPRE +share of the tail calls' 'WAKER +the task that woke' \
	'IMPACT +share of the feeding' 'cudaStreamSync = cudaStreamSynchronize' \
	'input wait +between calls, asleep until another task sent it input'; do
	grep -qE -- "$want" "$TMPD/help.txt" || fail "the help lacks /$want/"
	ok "the help: $want"
done
keys q
wait_exit 10
