#!/usr/bin/env bash
# Numbers add up, read off the screen as a user reads them (issue 14), at
# 80x24, 120x40 and 200x60, on the shipped data-loader recording: every
# share at most 100 %, the processes pane's GPU% CPU% PRE% WAIT% add up to
# 100 %, the process screen's calls are the sum of its ops' calls, the
# WAKER names the data-loader worker, helper processes fold into one line
# that Enter unfolds and folds, where the time goes is a bar with a legend
# on the main, process and thread screens, names and pids are never cut,
# bytes and durations are spelt one way. tests/unit/test_tui_figures.c
# checks the same figures on every frame of every recording.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics
REC=tests/fixtures/tui/dataloader.db
# the pids of the shipped recording (they change when it is made again)
DL=$(sqlite3 "$REC" "SELECT pid FROM process_names WHERE name = 'dataloader' LIMIT 1")
W0=$(sqlite3 "$REC" "SELECT pid FROM process_names WHERE name = 'dl-worker-0' LIMIT 1")

# every "N%" on the screen is at most 100
shares_ok() {
	local bad
	bad=$(screen | grep -oE '[0-9]+(\.[0-9]+)?%' | tr -d % | awk '$1 > 100' | head -1)
	[ -z "$bad" ] || fail "$1: a share of $bad% on the screen"
	ok "$1: no share above 100%"
}
# "<0.1%" reads as 0.05, "-" as nothing
pct() { sed -e 's/^<0\.1%$/0.05/' -e 's/%$//' -e 's/^-$/0/'; }
# the four columns of a process row add up to 100 % (within the rounding)
split_ok() { # what row-regex
	local g c p wt sum
	g=$(cell 'PID PROCESS' "$2" 'GPU%' | pct)
	c=$(cell 'PID PROCESS' "$2" 'CPU%' | pct)
	p=$(cell 'PID PROCESS' "$2" 'PRE%' | pct)
	wt=$(cell 'PID PROCESS' "$2" 'WAIT%' | pct)
	sum=$(awk -v a="$g" -v b="$c" -v d="$p" -v e="$wt" 'BEGIN { print a + b + d + e }')
	awk -v s="$sum" 'BEGIN { exit !(s >= 98.5 && s <= 101.5) }' ||
		fail "$1: GPU% $g + CPU% $c + PRE% $p + WAIT% $wt = $sum"
	ok "$1: GPU% $g + CPU% $c + PRE% $p + WAIT% $wt = $sum (100 within the rounding)"
}
units_ok() {
	screen | grep -qE '[0-9]e[+-][0-9]' && fail "$1: a number in e-notation"
	screen | grep -qE '[0-9]{5,}(\.[0-9]+)?B' && fail "$1: bytes not in KiB/MiB/GiB"
	names_whole || fail "$1: a name[pid] cut in the middle"
	ok "$1: units one way, names whole"
}

for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	echo "--- $size"
	start "$w" "$h" "$IG" --speed 0 --replay "$REC"
	wait_for '^ +'"$DL"' dataloader' 20
	wait_for ' 100% ' 20
	keys p
	expect '1 alert \(HIGH\)' "$size: the header says how many alerts and the worst"
	shares_ok "$size main"
	units_ok "$size main"
	split_ok "$size dataloader" '^ +'"$DL"' dataloader'
	split_ok "$size dl-worker-0" '^ +'"$W0"' dl-worker-0'
	if [ "$w" -ge 120 ]; then
		expect '^ +'"$DL"' dataloader .* dl-worker-0\['"$W0"'\] 100%' "$size: WAKER beside TOP PREEMPTOR"
	fi
	# where the time goes: the selected (or busiest) process under the pane
	expect '^ dataloader\['"$DL"'\] (█|W)+.* wait 8[0-9]%' "$size: the compact bar of the process"
	# helpers: folded into one line; Enter unfolds them, and folds them again
	expect '^ +\+2 helpers ' "$size: two helper processes folded"
	keys Tab
	keys G
	keys Enter
	expect '^ +-2 helpers ' "$size: Enter unfolds them"
	keys Enter
	expect '^ +\+2 helpers ' "$size: and folds them again"
	# the process: the bar and its legend, culprits, calls adding up
	keys g
	keys Enter
	expect '^ dataloader\['"$DL"'\]  container' "$size: the process screen"
	expect 'where the time goes: ' "$size: where the time goes"
	expect '^ (input wait|wait) 8[0-9]%  (GPU wait|gpu) 1[0-9]%' "$size: its legend, largest first"
	expect 'woken by \(between calls\): dl-worker-0\['"$W0"'\] 100%' "$size: who woke it"
	shares_ok "$size process"
	units_ok "$size process"
	life=$(screen | sed -nE 's/.*\(([0-9]+) since the start\).*/\1/p' | head -1)
	if [ "$h" -ge 40 ]; then
		sum=$(screen | awk '/CUDA ops of this process/ { on = 1; next } /threads \(/ { on = 0 }
			on && $0 ~ /^[ HMLI] +cu/ { s += ($1 ~ /^[HMLI]$/ ? $3 : $2) } END { print s + 0 }')
		[ "$sum" = "$life" ] || fail "$size: ops' calls add up to $sum, the process says $life"
		ok "$size: the ops' calls add up to the process's ($life)"
	fi
	# its thread: the same bar
	keys Tab
	keys g
	keys Enter
	expect '^ thread '"$DL"' ' "$size: the thread screen"
	expect '^ (input wait|wait) 8[0-9]%' "$size: the thread's where the time goes"
	shares_ok "$size thread"
	keys Escape
	keys Escape
	keys q
	wait_exit 10
	stop
done
