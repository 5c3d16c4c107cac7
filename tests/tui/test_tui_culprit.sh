#!/usr/bin/env bash
# needs: root
# The culprit can be acted on, and only while its pid is still that
# process (issue 28): on the --demo cpu-contention run, at 80x24, F8 on the
# alert screen and F7 on the alerts pane renice the alert's culprit
# (ig-hog, never a row of the processes pane) after y; once the workload
# ended (the test ends it), the alerts' ages count on with "ENDED 5s ago"
# (to the same now), and F9 on the exited workload is refused with one
# line, no signal menu. (A pid that names another process now:
# tests/unit/test_tui_pidcheck.c.)
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_live

nice_of() { ps -o ni= -L -p "$1" | sort -u | tr -d ' ' | paste -sd,; }

start 80 24 "$IG" --demo cpu-contention
wait_for '^HIGH .*CPU contention by ig-hog\[[0-9]+\]' 60
hog=$(screen | sed -nE 's/^HIGH .*CPU contention by ig-hog\[([0-9]+)\].*/\1/p' | head -1)
wl=$(screen | sed -nE 's/^ +([0-9]+) workload .*/\1/p' | head -1)
[ -n "$hog" ] && [ -n "$wl" ] || fail "no culprit or workload pid on the screen"
n0=$(nice_of "$hog")
keys n
expect '^ culprit +ig-hog' "n opens the CPU contention alert"
keys F8
expect "y/N Renice ig-hog\[$hog\] \(the alert's culprit\) from $n0 to $((n0 + 1))" \
	"F8 on the alert screen asks to renice the culprit"
keys y
for ((i = 0; i < 50; i++)); do [ "$(nice_of "$hog")" = $((n0 + 1)) ] && break; sleep 0.1; done
[ "$(nice_of "$hog")" = $((n0 + 1)) ] || fail "ig-hog[$hog] at nice $(nice_of "$hog"), want $((n0 + 1))"
ok "y reniced ig-hog[$hog] to $((n0 + 1))"
keys Escape
keys Tab
keys Tab
keys F7
expect "y/N Renice ig-hog\[$hog\] \(the alert's culprit\) from $((n0 + 1)) to $n0" \
	"F7 on the alerts pane asks about the selected alert's culprit"
keys y
for ((i = 0; i < 50; i++)); do [ "$(nice_of "$hog")" = "$n0" ] && break; sleep 0.1; done
[ "$(nice_of "$hog")" = "$n0" ] || fail "ig-hog[$hog] at nice $(nice_of "$hog"), want $n0"
ok "y reniced it back"
secs() { python3 -c '
import re, sys
m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", sys.argv[1])
print(int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + int(m.group(3) or 0))' "$1"; }
age0=$(secs "$(screen | sed -nE 's/^HIGH\?? +([0-9hms]+) .*CPU contention.*/\1/p' | head -1)")
# the workload ends (sooner than the demo would end it)
kill "$wl"
wait_for ' ENDED [0-9]+(s|m)' 60
# the alerts' ages count to the same now as "ENDED 5s ago": the age
# before the end plus the time since
wait_for ' ENDED ([5-9]|[1-9][0-9])s ago' 30
scr=$(screen)
ended=$(secs "$(echo "$scr" | sed -nE 's/.* ENDED ([0-9hms]+) ago.*/\1/p')")
age1=$(secs "$(echo "$scr" | sed -nE 's/^HIGH\?? +([0-9hms]+) .*CPU contention.*/\1/p' | head -1)")
echo "alert age $age0 s before the end, $age1 s at ENDED $ended s ago"
[ "$age1" -ge $((age0 + ended - 1)) ] || fail "the alert's age ($age1 s) does not count the $ended s since the end"
ok "the alerts' ages count past the end, as ENDED does"
keys BTab
keys F9
expect_not 'Send a signal|y/N Send' "F9 on the exited workload offers no signal"
keys l
expect "F9 kill: workload\[$wl\] exited; nothing done" "F9 says the workload exited, in one line"
keys l
keys q
wait_exit 30
