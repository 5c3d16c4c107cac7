#!/usr/bin/env bash
# needs: root
# The viewer on a live run of the test workload (shim CUDA stack, real BPF
# probes): LIVE header with probes attached, the workload's ops and process,
# an alert, drill-down into op, process and alert and back, pause, and q
# stopping the launched command.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_live

# SHIM_SYNC=block: every sync sleeps until its kernel ends, so the slowest
# one left the CPU whatever else stretched it (a sync that spins can be the
# slowest without a switch, when the hypervisor took its vCPU)
start 140 45 env SHIM_SYNC=block "$IG" -- "$WL" --iters 100000000 --threads 2 --kernel-us 200 \
	--sync-every 1 --h2d 65536 --driver --host-us 100
wait_for '^ LIVE ' 15
wait_for 'cudaLaunchKernel +[0-9]' 20
expect 'probes [1-9][0-9]* +failed 0' "header: probes attached, none failed"
expect 'targets [1-9]' "header: targets"
expect 'ev/s [0-9.k]+' "header: events/s"
expect 'cuLaunchKernel +[0-9]' "driver ops"
expect 'cudaStreamSync(hronize)? +[0-9]' "syncs"
expect '^ +[0-9]+ workload ' "the workload in the processes pane"
wait_for '^(HIGH|MED|LOW|INFO) +[0-9]+s ' 30
ok "an alert appears"

keys Home
keys Enter
expect '^ cudaMalloc|^ cudaLaunchKernel' "op screen"
expect 'slowest calls' "op screen: slowest calls"
expect '^[0-9:.]{12} +[0-9]+ +[0-9]+ +[0-9.]+(ns|us|ms|s) ' "op screen: a slow call row"
keys Escape
keys Tab
keys Home
keys Enter
expect '^ workload\[[0-9]+\]  container' "process screen"
expect 'threads \(% of each' "process screen: threads"
expect '^ +[0-9]+ wl-worker-0 +[0-9]' "process screen: the threads by name (wl-worker-0)"
expect '^ +[0-9]+ wl-worker-1 +[0-9]' "process screen: the threads by name (wl-worker-1)"
keys Enter
expect ' in workload\[[0-9]+\]' "an op of the process"
expect '^ +TID THREAD ' "its per-thread breakdown"
expect '^ +[0-9]+ wl-worker-[01] +[0-9]' "per-thread rows by thread name"
keys Escape
expect '^ workload\[[0-9]+\]  container' "back to the process"
keys Escape
keys Tab
keys Home
keys Enter
expect '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-' "alert screen"
expect '(-|─)+ Recommendations' "alert: recommendations"
keys Escape
expect '^! GPU API' "back to the main screen"

keys p
expect ' PAUSED ' "p pauses the view"
expect 'collection continues' "and says collection continues"
keys p
expect_not ' PAUSED ' "p resumes"

# o on the slowest sync that left the CPU: its off-CPU intervals, kept with
# it (each sync of this workload blocks, so the thread has left the CPU
# many more times than the 32 intervals it keeps by the time one looks)
keys p
expect ' PAUSED ' "paused to look at a call"
keys Tab # from the alerts back to the ops
keys /
text cudaStreamSync
keys Enter
keys Enter
expect '^ cudaStreamSynchronize  runtime API' "the sync op"
keys Tab
keys o
expect '^ during cudaStreamSynchronize at [0-9:.]+, ' "o on the slowest sync: its thread during it"
# a call can be slow without leaving the CPU (the hypervisor took the
# vCPU): the screen says so, and the next slowest is looked at (4 at most)
for i in 1 2 3 4; do
	screen | grep -q 'the call never left the CPU' || break
	screen | grep -q 'no off-CPU interval during this call: it stayed on the CPU' ||
		fail "a call that stayed on the CPU: the table says otherwise"
	ok "slow call $i stayed on the CPU, and the screen says so"
	keys Escape
	keys Down
	keys o
done
expect '^[0-9:.]{12} +[0-9.]+(ns|us|ms|s) +(blocked|preempted) +in a CUDA( cal|…)' \
	"live: the slowest sync's off-CPU interval is shown"
expect_not 'intervals are gone|none kept for this call' "live: nothing said to be gone"
keys Escape
keys Escape
keys Escape
keys p
expect_not ' PAUSED ' "resumed"

wlpid=$(pgrep -n -f -- "$WL --iters 100000000") || fail "no workload process"
keys q
t0=$SECONDS
# the viewer gives the terminal back at once; detaching the probes may take
# a while after that (session_free)
for i in $(seq 30); do screen | grep -q 'F1Help' || break; sleep 0.1; done
screen | grep -q 'F1Help' && fail "the screen was not given back after q"
ok "q gives the terminal back at once"
wait_exit 120
echo "info: ingero-top exited $((SECONDS - t0)) s after q"
[ "$(cat "$TMPD/status")" = 0 ] || fail "exit status $(cat "$TMPD/status")"
for i in $(seq 50); do kill -0 "$wlpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$wlpid" 2>/dev/null && { kill "$wlpid"; fail "the launched workload still runs after q"; }
ok "q quits and stops the launched command"
