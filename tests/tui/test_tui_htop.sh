#!/usr/bin/env bash
# htop habits (issue 14), at 80x24, 120x40 and 200x60, on the shipped
# data-loader recording: F2 setup (hide a column, the refresh interval, the
# theme), F3 search, F5 the processes as a tree, M/P/T sort keys, F9/F7/F8
# (live only in a replay: test_tui_kill.sh sends signals and renices live),
# and the mouse: a click on a row selects it, a double click opens it, a
# click on a column title sorts by it, a click on a hint presses its key,
# the wheel scrolls.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
REC=tests/fixtures/tui/dataloader.db
# the pids of the shipped recording (they change when it is made again)
DL=$(sqlite3 "$REC" "SELECT pid FROM process_names WHERE name = 'dataloader' LIMIT 1")
W0=$(sqlite3 "$REC" "SELECT pid FROM process_names WHERE name = 'dl-worker-0' LIMIT 1")

for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	echo "--- $size"
	start "$w" "$h" "$IG" --speed 0 --replay "$REC"
	wait_for ' 100% ' 20
	wait_for '^ +'"$DL"' dataloader' 20
	keys p

	# F5: the tree (the loader's workers under it)
	keys F5
	expect 'processes as a tree' "$size: F5 says the processes are a tree"
	keys Tab
	keys G
	keys Enter # unfold the helpers: the other workers
	keys g
	expect '^ +'"$W0"' (└─|`-)dl-worker-0' "$size: a worker under its parent"
	keys F5
	expect '^ +'"$W0"' dl-worker-0' "$size: F5 again: a flat list"
	keys G
	keys Enter # fold them again
	keys g
	keys BTab

	# M P on the op table (T steps a replay: test_tui_walk.sh)
	keys P
	expect 'sorted by P99' "$size: P sorts by p99"
	keys M
	expect 'sorted by BYTES/S' "$size: M sorts by memory"

	# F3 search: the selection goes to the match, F3 the next
	keys F3
	expect 'Search: ' "$size: F3 opens the search"
	text cuMem
	keys Enter
	keys Enter
	expect '^ cuMem(cpyHtoD|Alloc|Free)  driver API' "$size: the search selected a cuMem op"
	first=$(screen | grep -m1 -E '^ cuMem(cpyHtoD|Alloc|Free)  driver API')
	keys Escape
	keys F3
	keys F3
	keys Enter
	keys Enter
	expect '^ cuMem(cpyHtoD|Alloc|Free)  driver API' "$size: F3 again: another match"
	[ "$(screen | grep -m1 -E '^ cuMem(cpyHtoD|Alloc|Free)  driver API')" != "$first" ] || fail "$size: F3 again opened the same op ($first)"
	ok "$size: F3 again found the next one"
	keys Escape

	# F9 F7 F8 in a replay: live only, said so
	keys Tab
	keys F9
	expect 'F9 kill: live only' "$size: F9 is live only here"
	keys F7
	expect 'F7 renice: live only' "$size: F7 is live only here"
	keys BTab

	# F2 setup: hide a column of the processes pane, the refresh, the theme
	keys F2
	expect 'Setup: Enter changes' "$size: F2 opens the setup"
	keys /
	text 'processes: CALLS/S'
	keys Enter
	keys Enter
	expect 'processes: CALLS/S +hidden' "$size: the column is hidden"
	keys Escape # the filter
	keys Escape
	expect '^ +PID PROCESS ' "$size: back on the main screen"
	expect_not '^ +PID PROCESS .*CALLS/S' "$size: the hidden column is gone"
	keys F2
	keys g
	keys Down
	keys Enter
	expect 'Refresh +2 s' "$size: the refresh interval changes"
	keys g
	keys Enter
	expect 'Theme +light' "$size: the theme changes"
	keys Escape

	# the mouse
	y=$(row_of '^ +'"$W0"' dl-worker-0')
	[ "$y" -ge 0 ] || fail "$size: no dl-worker-0 row"
	click "$y" 10
	keys Enter
	expect '^ dl-worker-0\['"$W0"'\]  container' "$size: a click selected the row (Enter opens it)"
	keys Escape
	y=$(row_of '^ +'"$DL"' dataloader')
	dclick "$y" 10
	expect '^ dataloader\['"$DL"'\]  container' "$size: a double click opens the row"
	keys Escape
	y=$(row_of '^ +PID PROCESS')
	x=$(col_of 'WAIT%')
	click "$y" "$x"
	expect 'sorted by WAIT%' "$size: a click on a column title sorts by it"
	y=$(row_of 'F1Help')
	click "$y" 1
	expect 'help \(replay mode\)' "$size: a click on F1Help opens the help"
	wheel_down 10 10
	keys Escape
	keys q
	wait_exit 10
	stop
done
