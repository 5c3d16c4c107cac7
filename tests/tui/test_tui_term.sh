#!/usr/bin/env bash
# The terminal is sane after every way out: q, Ctrl-C, SIGTERM, a crash
# (kill -SEGV), and after Ctrl-Z / fg; the screen is given back
# (alternate screen left, cursor shown, echo and canonical mode on).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

shell 100 30
run_ig() {
	keys 'clear' Enter
	text "$IG --speed 4 --replay $FIXTURE; echo EXIT=\$?"
	keys Enter
	wait_for 'REPLAY' 5
}
check_sane() { # what
	sleep 0.5
	keys 'clear' Enter
	text "stty -a | tr ' ;' '\n\n' | grep -xE -- '-?(icanon|echo)' | tr '\n' ' '; echo STTY-END"
	keys Enter
	wait_for 'STTY-END$' 5
	screen | grep -qE '^icanon echo STTY-END$' || fail "$1: terminal not sane: $(screen | grep STTY-END)"
	screen | grep -q 'F1Help' && fail "$1: the viewer's screen is still there"
	ok "$1: terminal sane (icanon echo), screen given back"
}
pid_of_ig() { pgrep -n -f -- "$IG --speed 4 --replay" || fail "no ingero-top process"; }

run_ig
keys q
wait_for '^EXIT=0' 5
check_sane "q"

run_ig
keys C-c
wait_for '^EXIT=' 5
check_sane "Ctrl-C"

run_ig
kill -TERM "$(pid_of_ig)"
wait_for '^EXIT=' 5
check_sane "SIGTERM"

run_ig
kill -SEGV "$(pid_of_ig)"
wait_for '^EXIT=139' 5
ok "a crash dies of its signal"
check_sane "SIGSEGV"

run_ig
keys C-z
wait_for 'Stopped' 5
check_sane "Ctrl-Z"
keys 'fg' Enter
wait_for 'REPLAY' 5
expect '^! GPU API' "fg redraws the viewer"
keys q
# (bash drops the rest of a command list once a job of it stopped: no EXIT=)
for i in $(seq 50); do pgrep -f -- "$IG --speed 4 --replay" >/dev/null || break; sleep 0.1; done
pgrep -f -- "$IG --speed 4 --replay" >/dev/null && fail "q after fg did not quit"
check_sane "q after fg"
