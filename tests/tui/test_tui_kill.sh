#!/usr/bin/env bash
# needs: root
# F7/F8 renice and F9 kill, htop's way, live (issue 14), at 80x24, 120x40
# and 200x60: the selected process is reniced after y (every thread of it),
# any other key cancels; F9 offers the signals, Enter asks, y sends; the
# workload ends and the view says ENDED. ingero-top refuses to signal
# itself.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_live

nice_of() { ps -o ni= -L -p "$1" | sort -u | tr -d ' ' | paste -sd,; }

for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	echo "--- $size"
	start "$w" "$h" "$IG" -- sh -c "exec $WL --iters 100000000 --threads 2 --kernels 2 >/dev/null 2>&1"
	wait_for '^ +[0-9]+ workload ' 30
	pid=$(screen | sed -nE 's/^ +([0-9]+) workload .*/\1/p' | head -1)
	[ -n "$pid" ] || fail "$size: no workload row"
	[ "$(nice_of "$pid")" = 0 ] || fail "$size: nice is $(nice_of "$pid") before"
	keys Tab
	keys /
	text workload
	keys Enter
	keys Home
	keys F8
	expect "y/N Renice workload\[$pid\] from 0 to 1 \(lower priority\)\?" "$size: F8 asks"
	keys n
	expect 'cancelled' "$size: n cancels"
	[ "$(nice_of "$pid")" = 0 ] || fail "$size: cancelled, yet nice is $(nice_of "$pid")"
	keys F8
	keys y
	expect "workload\[$pid\] now runs at nice 1" "$size: y renices"
	[ "$(nice_of "$pid")" = 1 ] || fail "$size: nice of the threads: $(nice_of "$pid"), want 1"
	ok "$size: every thread of workload[$pid] at nice 1"
	keys F7
	keys y
	expect "now runs at nice 0" "$size: F7 renices back"
	[ "$(nice_of "$pid")" = 0 ] || fail "$size: nice $(nice_of "$pid"), want 0"
	keys F9
	expect 'Send a signal' "$size: F9: the signal menu"
	expect 'SIGTERM +ask it to end' "$size: the menu says what each signal does"
	keys Enter
	expect "y/N Send SIGTERM to workload\[$pid\]\?" "$size: Enter asks"
	keys y
	for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "$size: workload[$pid] still runs after SIGTERM"
	ok "$size: y sent it: the workload ended"
	wait_for ' ENDED [0-9]+(s|m)' 30
	ok "$size: the view says ENDED"
	keys l
	expect "sent Terminated to workload\[$pid\]" "$size: the log says what was sent to whom"
	keys l
	keys q
	wait_exit 60
	stop
done
