#!/usr/bin/env bash
# Drill-down on a replay: op (histogram, p99 over time, per process, slowest
# calls), process (wall split, ops, threads, alerts), thread, alert (summary,
# explanation, evidence, timeline, recommendations), and back, with the
# selection of each list kept.
cd "$(dirname "$0")/../.." || exit 1
. tests/tui/lib.sh
need_basics

start 120 45 "$IG" --speed 0 --replay "$FIXTURE"
wait_for 'cuCtxSync' 10
keys p # frozen: the view does not move under the test

# op: the third one (cudaMemcpyAsync)
keys g
keys Down
keys Down
keys Enter
expect '^ cudaMemcpyAsync  runtime API, all processes' "op screen title"
expect 'since the start: 14 calls' "op screen: call count of the recording (the window is empty at the end)"
expect 'latency histogram' "op screen: histogram"
expect '(█|#)+ +[0-9]+$' "op screen: histogram bars with counts"
expect 'p99 per second' "op screen: p99 over time"
expect '── per process|-- per process' "op screen: per-process breakdown"
expect '^ +2233 python3 ' "op screen: the process row"
expect 'slowest calls' "op screen: slowest calls"
expect 'SLOWEST AT +PID +TID DURATION PREEMPTED +BLOCKED' "op screen: slow call columns"
# Enter on the process row opens the process
keys Enter
expect '^ python3\[2233\]  container' "process screen from the op screen"
keys Escape
expect '^ cudaMemcpyAsync ' "back to the op"
keys Escape
expect '^! GPU API' "back to the main screen"
# the selection was kept: Enter opens the same op again
keys Enter
expect '^ cudaMemcpyAsync ' "the op selection is kept"
keys Escape

# process
keys Tab
keys g
keys Enter
expect '^ python3\[2233\]  container \?' "process screen title with container"
expect 'where the time goes: ' "process screen: where the time goes"
expect '^ host CPU [0-9.]+%' "process screen: the legend of the bar"
expect 'preempted by:' "process screen: preemptors"
expect 'woken by' "process screen: wakers"
expect 'CUDA ops of this process' "process screen: per-op table"
expect 'threads \(% of each' "process screen: threads"
expect 'TID THREAD +CALLS/S MAIN OP +GPU% +CPU% +PRE% WAIT%' "process screen: thread columns"
expect '^ +2233 python3 ' "process screen: a thread row with the thread's name"
expect 'alerts on this process' "process screen: chains"
# an op of this process: broken down per thread
keys Enter
expect '^ [a-zA-Z]+  in python3\[2233\]' "op screen of the process"
expect '(-|─)+ per thread' "op screen of the process: per-thread breakdown"
expect '^ +TID THREAD +CALLS/S +P50 +P99 +MAX P99/P50 PREEMPT TOP PREEMPTOR' \
	"per-thread columns: PREEMPT (threads keep no tail accounting)"
expect '^ +2233 python3 ' "per-thread row"
keys Escape
expect '^ python3\[2233\]  container' "back to the process"
# thread: focus the threads list
keys Tab
keys Enter
expect '^ thread 2233 (\(python3\) )?of python3\[2233\]' "thread screen"
expect 'OFF-CPU AT +DURATION STATE' "thread screen: off-CPU timeline"
keys BSpace
expect 'threads \(% of each' "Backspace back to the process"
# an alert of this process
keys Tab
keys Enter
expect '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-[0-9]{4}' "alert screen from the process"
keys Escape
keys Escape
expect '^! GPU API' "back to the main screen"

# alert from the alerts pane (the second one, to see that it is kept)
keys Tab
keys g
keys Down
keys Enter
expect '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-[0-9]{4} ' "alert screen title"
expect '(-|─)+ Explanation' "alert: explanation"
expect '(-|─)+ Evidence' "alert: evidence"
expect 'impact_pct +[0-9.]+%  share of the feeding threads' "alert: each evidence key explained"
expect '(-|─)+ Timeline' "alert: timeline"
expect '(-|─)+ Recommendations' "alert: recommendations"
expect '^ +1\. ' "alert: a numbered recommendation"
expect 'op +cuda|op +-' "alert: the op"
expect 'process +python3\[2233\]' "alert: the process"
title=$(screen | grep -E '^ \[(HIGH|MEDIUM|LOW|INFO)\] chain-' | head -1)
keys G
keys g
keys Escape
expect '^SEV +AGE' "back to the main screen"
keys Enter
screen | grep -qF -- "$title" || fail "the alert selection was not kept"
ok "the alert selection is kept"
keys Escape
keys q
wait_exit 5
ok "quit"
