#!/usr/bin/env bash
# Labels that do not mislead (issue 28), replays: PRE% reads "?" where the
# preempted/blocked split is not known (an Ingero recording: off-CPU time
# of unknown state), at 80 and 200 columns, and the time split says
# "unknown" at every width; the page-allocation column is named PGALLOC,
# not MEM (which an htop user reads as resident memory); an alert of the
# first window (the window not full yet) says its severity is provisional
# (HIGH?), and no longer once the window is full. (ENDED and the alerts'
# ages counting to the same now: test_tui_culprit.sh, live.)
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

for size in 80x24 200x60; do
	start "$(size_w $size)" "$(size_h $size)" "$IG" --replay "$FIXTURE" --speed 0
	wait_for '^ +[0-9]+ python3 ' 30
	pre=$(cell '^ +PID PROCESS' '^ +[0-9]+ python3 ' 'PRE%')
	[ "$pre" = '?' ] || fail "$size: PRE% of python3 is '$pre', want ? (split not known)"
	ok "$size: PRE% reads ? where the split is not known"
	if [ "$size" = 200x60 ]; then
		expect '^ +PID PROCESS.* PGALLOC ' "$size: the page-allocation column is PGALLOC"
		screen | grep -E '^ +PID PROCESS' | sed 's/GPU MEM//' | grep -qE ' MEM ' && fail "$size: a MEM column"
	fi
	keys Tab
	keys Enter
	expect '^── where the time goes' "$size: the process screen"
	expect '^ host( CPU)? 83%  unknown 17%' "$size: the split says unknown, not unk"
	keys q
	wait_exit 30
	stop
done

start 80 24 "$IG" --replay tests/scenarios/cpu-contention.db --speed 0
wait_for '^HIGH ' 30
keys j
text '+6s'
keys Enter
expect 'at 6s/22s' "j +6s: in the first window"
expect '^HIGH\? +[0-9]+s .*CPU contention' "the first window's alert reads HIGH? (provisional)"
keys n
expect '^ provisional: [0-9.]+s of the 10s window so far; the severity may change' \
	"the alert screen says the severity is provisional"
keys Escape
keys End
expect 'at 22s/22s' "End: the window is full"
expect '^HIGH +[0-9]+s .*CPU contention' "a full window's alert reads HIGH"
screen | grep -qE '^[A-Z]+\? ' && fail "a full window's alert is still provisional"
ok "no longer provisional"
keys q
wait_exit 30
