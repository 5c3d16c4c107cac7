#!/usr/bin/env bash
# The viewer's CPU when nothing happens (issue 30: under 1 % of a core):
# the real binary in a 120x40 tmux pane at a 1 s refresh (-d 1), for SECS
# seconds per case (default 60; SECS=600 is the issue's 10 minutes):
#   1. a replay played to its end (nothing more to read), then paused (p);
#   2. (root) live, tracing a command that makes no CUDA call (sleep).
# ingero-top's CPU is user + system of all its threads from /proc/PID/stat
# over the SECS after a warm-up, as % of one core; CPU time, so the load of
# other programs on the machine changes it little. Prints one line a case
# and "over 1 %" where the goal is missed (exit 1). Exits 77 without tmux.
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
IG=${IG:-$PWD/$B/ingero-top}
FIXTURE=${FIXTURE:-$PWD/tests/fixtures/ingero/pytorch-dataloader-starvation.db}
SECS=${SECS:-60}
WARM=${WARM:-5}
SOCK=ingero-idle-$$
TM=(tmux -L "$SOCK" -f /dev/null)
command -v tmux >/dev/null || { echo "bench_idle: skip: tmux missing"; exit 77; }
[ -x "$IG" ] || { echo "bench_idle: skip: $IG not built"; exit 77; }
trap '"${TM[@]}" kill-server 2>/dev/null' EXIT

ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; }
# the ingero-top started in the pane (its shell's child)
ig_pid() {
	local sh
	sh=$("${TM[@]}" list-panes -t b -F '#{pane_pid}' 2>/dev/null) || return 1
	pgrep -P "$sh" -f -- "^$IG " | head -n 1
}
fail=0
# measure NAME KEYS COMMAND...: KEYS (or -) are sent once after the warm-up
measure() {
	local name=$1 keys=$2 pid t0 t1
	shift 2
	"${TM[@]}" new-session -d -s b -x 120 -y 40 "$*; sleep 3600"
	sleep "$WARM"
	pid=$(ig_pid) || true
	[ -n "$pid" ] || { echo "$name: ingero-top did not start"; fail=1; return; }
	if [ "$keys" != - ]; then
		"${TM[@]}" send-keys -t b "$keys"
		sleep 1
	fi
	t0=$(ticks "$pid")
	sleep "$SECS"
	t1=$(ticks "$pid")
	[ -n "$t1" ] || { echo "$name: ingero-top exited"; fail=1; return; }
	local pct
	pct=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" -v s="$SECS" \
		'BEGIN { printf "%.2f", (b - a) / hz / s * 100 }')
	local verdict=ok
	awk -v p="$pct" 'BEGIN { exit !(p > 1) }' && { verdict="over 1 %"; fail=1; }
	printf '%-44s %5s %% of a core over %s s (%s ticks)  %s\n' "$name" "$pct" "$SECS" \
		"$((t1 - t0))" "$verdict"
	"${TM[@]}" kill-server 2>/dev/null
	for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
}

echo "ingero-top viewer idle, -d 1, ${SECS} s a case, $(nproc) CPUs, $(uname -r)"
measure "replay at its end, paused" p "$IG -d 1 --speed 0 --replay $FIXTURE"
if [ "$(id -u)" = 0 ]; then
	measure "live, tracing sleep (no CUDA call)" - "$IG -d 1 -- sleep 3600"
else
	echo "live, tracing sleep: skipped (needs root)"
fi
exit $fail
