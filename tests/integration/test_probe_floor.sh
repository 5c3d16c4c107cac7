#!/usr/bin/env bash
# needs: root
# The instrument of the overhead benchmark (tests/bench/bench_collect.sh):
# probe_floor must see exactly the calls the workload makes, in each mode,
# on the same functions ingero-top traces, and leave nothing attached.
. "$(dirname "$0")/lib.sh"
need_root

PF=$B/tests/tools/probe_floor
RT=$(readlink -f "$B/shim/libcudart.so.12")
DR=$(readlink -f "$B/shim/libcuda.so.1")
"$WL" --iters 100 --kernels 8 --sync-every 1 --expect "$TMP/expect" >/dev/null 2>&1
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$TMP/expect")
expect_eq "workload: calls per run" "$calls" 1804

for mode in count clock floor; do
	"$PF" "$mode" "$RT" "$DR" >"$TMP/$mode.out" 2>"$TMP/$mode.err" &
	pf=$!
	for _ in $(seq 100); do grep -q attached "$TMP/$mode.out" && break; sleep 0.1; done
	"$WL" --iters 100 --kernels 8 --sync-every 1 >/dev/null 2>&1
	sleep 0.3
	kill -INT $pf; wait $pf; rc=$?
	expect_eq "$mode: exit status" "$rc" 0
	last=$(tail -n 1 "$TMP/$mode.out")
	case $mode in
	count) expect_eq "count: entries and returns" "$(echo "$last" | awk '{print $2, $4}')" "$calls $calls" ;;
	clock) expect_eq "clock: hits (durations summed)" "$(grep -c '^hits [1-9]' "$TMP/$mode.out" | awk '{print ($1 > 0)}')" 1 ;;
	floor) expect_eq "floor: one record per call" "$(echo "$last" | awk '{print $6}')" "$calls" ;;
	esac
done

"$PF" bogus "$RT" >/dev/null 2>"$TMP/bad.err"; rc=$?
expect_eq "unknown mode: exit status" "$rc" 1
"$PF" count /etc/passwd >/dev/null 2>"$TMP/bad2.err"; rc=$?
expect_eq "no CUDA functions: exit status" "$rc" 1
expect_eq "no CUDA functions: one line" "$(wc -l <"$TMP/bad2.err")" 1
sleep 0.3
expect_eq "nothing left attached" "$(bpftool link show 2>/dev/null | grep -c 'uprobe_multi')" 0
finish
