#!/usr/bin/env bash
# needs: root
# Stacks in the viewer: records a short run of the test workload (stacks on),
# replays it, opens an op, sees its top stacks by tail time with a function
# of the workload as headline, opens a stack (its frames), opens the stack
# of a slow call (Enter) and its thread (o), and comes back with positions
# kept; then a live run with --no-stacks says so in one line.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_live

DB=$TMPD/stacks.db
"$IG" --batch --summary --record "$DB" -- "$WL" --iters 200 --kernels 2 --kernel-us 300 \
	>"$TMPD/rec.txt" 2>&1 || fail "recording failed: $(tail -n 3 "$TMPD/rec.txt")"

start 120 45 "$IG" --speed 0 --replay "$DB"
wait_for 'cudaLaunchKernel +[0-9]' 15
keys p # frozen
# the op: cudaLaunchKernel
keys /
text cudaLaunchKernel
keys Enter
keys Enter
expect '^ cudaLaunchKernel  runtime API' "op screen"
expect 'top stacks by tail time' "op screen: stacks section"
expect 'TAIL TIME +TAIL +CALLS +MAX' "op screen: stack columns"
expect ' (wl_worker|wl_launch)[+a-z0-9_]* \(workload\)' "op screen: a stack with a workload function"
# focus the stacks list (breakdown -> slow calls -> stacks) and open one
keys Tab
keys Tab
keys Enter
expect '^ stack 0x[0-9a-f]+ of cudaLaunchKernel' "stack screen title"
expect 'frames, innermost first' "stack screen: frames"
expect '^ #0 +[A-Za-z_]' "stack screen: the innermost frame"
expect '(wl_worker|wl_launch)\+0x[0-9a-f]+ \(workload\)' "stack screen: a workload function with offset and file"
expect '(wl_worker|wl_launch)\+0x[0-9a-f]+ \(workload\) workload\.c:[0-9]+' \
	"stack screen: its source file:line (the workload has DWARF line tables)"
expect '^ calls [0-9]+ ' "stack screen: counts of the stack"
keys o
expect 'o: this stack is many calls' "o on a stack of many calls says where o works"
keys Escape
expect 'top stacks by tail time' "back to the op screen"
keys Enter
expect '^ stack 0x[0-9a-f]+ of cudaLaunchKernel' "the stacks focus and selection are kept"
keys BSpace
# a slow call: Enter opens its stack, o its thread
keys BTab
keys Enter
expect '^ stack 0x[0-9a-f]+ of cudaLaunchKernel' "Enter on a slow call: its stack"
expect '(wl_worker|wl_launch)\+0x' "slow call stack: workload frames"
keys Escape
keys o
expect '^ thread [0-9]+ \(wl-worker-0\) of workload\[' "o on a slow call: its thread, by name"
expect '^ during cudaLaunchKernel at [0-9:.]+, [0-9.]+(ns|us|ms|s)' "o: the intervals during that call"
keys Escape
expect 'slowest calls in the window' "back to the op screen"
keys Escape
expect '^! GPU API' "back to the main screen"
# a sync's newest slow call: o shows the thread off the CPU during it
keys /
keys C-u
text cudaStreamSynchronize
keys Enter
keys Enter
expect '^ cudaStreamSynchronize  runtime API' "the sync op"
keys Tab
keys '<'
keys '<'
keys '<'
keys I
keys g
keys o
expect '^ during cudaStreamSynchronize at ' "o on the newest slow sync"
# the model keeps a thread's last 32 intervals: the call's, or it says so
if screen | grep -q 'intervals are kept'; then
	expect 'only a thread.s last 32 intervals are kept; the oldest began [0-9:.]+, after this call' \
		"the call is older than the intervals kept: said plainly"
	expect 'none kept for this call' "and no interval of another time is shown"
else
	expect ' (preempted|blocked) +in a CUDA( cal|…)' "during the sync: its off-CPU intervals"
	expect 'these intervals: preempted [0-9.]+(ns|us|ms), blocked [0-9.]+(ns|us|ms)' \
		"what the intervals during the call add up to"
fi
keys Escape
keys Escape
keys Escape
expect '^! GPU API' "back to the main screen"
# the thread's latest intervals (from the process screen): syncs asleep,
# woken by the timer interrupt ([irq]) that ends the shim's wait
keys Tab
keys g
keys Enter
keys Tab
keys /
text wl-worker-0
keys Enter
keys Enter
expect '^ thread [0-9]+ \(wl-worker-0\) of workload\[' "the thread from the process screen"
expect ' blocked +in a CUDA( cal|…).* \[irq\]' "its latest intervals: blocked in a sync, woken by [irq]"
keys Escape
keys Escape
keys Escape
expect '^! GPU API' "back to the main screen"
keys q
wait_exit 5
ok "quit"
stop

# stacks off (live, --no-stacks): one line says so
start 120 45 "$IG" --no-stacks -- "$WL" --iters 100000000 --kernels 2 --kernel-us 300
wait_for 'cudaLaunchKernel +[0-9]' 20
keys p
keys /
text cudaLaunchKernel
keys Enter
keys Enter
expect '^ cudaLaunchKernel  runtime API' "op screen, stacks off"
expect 'stacks are off' "op screen: stacks off, in one line"
keys Tab
keys Enter
expect '^ stack 0x[0-9a-f]+ of cudaLaunchKernel' "stack screen of a slow call, stacks off"
expect '^ stacks are off' "stack screen: stacks off, in one line"
keys Escape
expect 'slowest calls in the window' "back to the op screen"
keys q
wait_exit 10
ok "quit"
