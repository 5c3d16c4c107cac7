#!/usr/bin/env bash
# needs: root
# A live run that ends (issue 14), at 80x24, 120x40 and 200x60: when the
# traced command exits, the screens stay at its last activity, marked
# ENDED in the header, the hint bar stays; the op rows keep their figures,
# the op screen keeps its calls and its slowest calls, Enter on one opens
# its stack; z gives every figure since the start. Then two workloads, one
# exiting early: while the other runs on, no alert names the one that
# exited after its exit (an exit raises no alert). ingero-top's own process,
# when named, is marked (self).
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_live

self_marked() { # every ingero-top[PID] on the screen with the viewer's pid says (self)
	local ig
	ig=$(pgrep -n -x ingero-top) || return 0
	screen | grep -oE "ingero-top\[$ig\]( \(self\))?" | grep -qv '(self)' &&
		fail "$1: ingero-top[$ig] named without (self)"
	return 0
}

for size in $SIZES; do
	w=$(size_w "$size") h=$(size_h "$size")
	echo "--- $size"
	start "$w" "$h" "$IG" -- sh -c "exec $WL --iters 2500 --threads 2 --kernels 4 --sync-every 1 --sleep-us 500 >/dev/null 2>&1"
	wait_for 'cudaLaunchKernel +[0-9]' 30
	self_marked "$size running"
	wait_for ' ENDED [0-9]+(s|m)' 60
	ok "$size: the command exited: ENDED in the header"
	expect 'F1Help F10Quit' "$size: the hint bar stays after the command exits"
	p99=$(cell '^! GPU API' 'cudaLaunchKernel' P99)
	case $p99 in *us | *ms | *s) ok "$size: the op rows keep their figures (cudaLaunchKernel p99 $p99)" ;;
	*) fail "$size: the cudaLaunchKernel row has no p99 after the end ('$p99')" ;; esac
	keys /
	text cudaStreamSynchronize
	keys Enter
	keys Enter
	expect '^ cudaStreamSynchronize  runtime API' "$size: the op screen after the end"
	expect 'window: [1-9][0-9]* calls in ' "$size: it keeps the calls of the last window"
	keys Tab
	expect '^[0-9:.]{12} +([0-9]+ +)?[0-9]+ +[0-9.]+(us|ms|s) ' "$size: and the slowest calls" # PID drops first when narrow
	keys Enter
	expect '^ stack 0x[0-9a-f]+ of cudaStreamSynchronize' "$size: Enter on a slow call opens its stack"
	keys Escape
	keys z
	expect 'since the start: [1-9][0-9]* calls' "$size: z: since the start"
	keys z
	keys Escape
	keys Escape
	expect '^! GPU API' "$size: back on the main screen"
	self_marked "$size ended"
	keys q
	wait_exit 60
	stop
done

# an early exit raises no alert while the other workload runs on
cat >"$TMPD/two.sh" <<EOF
$WL --iters 600 --kernels 4 --sync-every 1 --sleep-us 1000 >/dev/null 2>&1 &
echo \$! >$TMPD/early.pid
$WL --iters 8000 --kernels 4 --sync-every 1 --sleep-us 1000 >/dev/null 2>&1 &
echo \$! >$TMPD/late.pid
wait
EOF
start 200 60 "$IG" -- sh "$TMPD/two.sh"
wait_for 'cudaLaunchKernel +[0-9]' 30
for i in $(seq 100); do [ -s "$TMPD/early.pid" ] && break; sleep 0.1; done
early=$(cat "$TMPD/early.pid")
for i in $(seq 600); do kill -0 "$early" 2>/dev/null || break; sleep 0.1; done
kill -0 "$early" 2>/dev/null && fail "the early workload did not end"
t_exit=$SECONDS
ok "workload[$early] exited; the other runs on"
# for 12 s (past the window): every alert naming it is older than its exit
while [ $((SECONDS - t_exit)) -lt 12 ]; do
	since=$((SECONDS - t_exit))
	screen | grep -E "^(HIGH|MED|LOW|INFO) " | grep -E "workload\[$early\]" |
		awk -v s="$since" '{ a = $2; t = 0
			if (a ~ /m/) { split(a, p, "m"); t = p[1] * 60; a = p[2] }
			sub(/s$/, "", a); t += a
			if (t + 2 < s) { print; bad = 1 } } END { exit bad }' >"$TMPD/young" ||
		fail "an alert on workload[$early] younger than its exit ($since s ago): $(cat "$TMPD/young")"
	expect_not ' ENDED ' "the view follows the running workload"
	sleep 1
done
ok "no alert raised by workload[$early]'s exit in 12 s"
keys q
wait_exit 60
