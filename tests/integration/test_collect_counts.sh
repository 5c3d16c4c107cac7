#!/usr/bin/env bash
# needs: root
# Exact per-op call counts from real uprobes: the workload counts every CUDA
# call it makes (and the shim runtime's nested driver calls); ingero-top
# must see exactly those, for the runtime, driver and graph APIs, threads
# and a forked child.
. "$(dirname "$0")/lib.sh"
need_root

run_case() { # name, workload args...
	local name=$1; shift
	"$IG" --events --no-system-libs ${IG_EXTRA:-} -- "$WL" "$@" --expect "$TMP/$name.expect" >"$TMP/$name.ev" 2>"$TMP/$name.err"
	local rc=$?
	expect_eq "$name: exit status" "$rc" 0
	event_counts "$TMP/$name.ev" >"$TMP/$name.got"
	expect_counts "$TMP/$name.expect" >"$TMP/$name.want"
	if diff -u "$TMP/$name.want" "$TMP/$name.got" >"$TMP/$name.diff"; then
		ok "$name: per-op counts equal the workload's own ($(wc -l <"$TMP/$name.want") ops, $(awk '{s+=$2} END {print s}' "$TMP/$name.want") calls)"
	else
		bad "$name: per-op counts differ (want vs got):"; cat "$TMP/$name.diff"; cat "$TMP/$name.err"
	fi
}

run_case basic --iters 40 --kernels 3 --kernel-us 50 --h2d 65536 --d2h 4096 --sync-every 1 \
	--malloc-every 4
run_case driver-graph --iters 25 --kernels 2 --kernel-us 20 --driver --graph --device-sync \
	--async-copy --h2d 8192 --malloc-every 5
# The fallbacks: one perf-event uprobe per probe (kernels before 6.6) and
# raw tracepoints instead of tp_btf give the same counts.
INGERO_TOP_NO_UPROBE_MULTI=1 run_case perf-uprobes --iters 20 --kernels 2 --kernel-us 20 --h2d 4096 \
	--malloc-every 4
IG_EXTRA=--raw-tp run_case raw-tp --iters 20 --kernels 2 --kernel-us 20 --d2h 4096
run_case threads-fork --iters 20 --kernels 2 --kernel-us 20 --threads 3 --fork --sync-every 2

# The forked child is traced under its own pid.
pids=$(awk '$1 == "pid" {print $2}' "$TMP/threads-fork.expect" | sort -u | wc -l)
expect_eq "threads-fork: processes in the expect file" "$pids" 2
traced=$(awk '$2 == "call" {print $3}' "$TMP/threads-fork.ev" | sort -u | wc -l)
expect_eq "threads-fork: processes with traced calls" "$traced" 2
grep -q " fork " "$TMP/threads-fork.ev" && ok "threads-fork: fork event seen" || bad "no fork event"
threads=$(awk '$2 == "call" {print $4}' "$TMP/threads-fork.ev" | sort -u | wc -l)
[ "$threads" -ge 4 ] && ok "threads-fork: $threads threads traced" || bad "threads traced: $threads, want >= 4"

# Return codes and arguments: copies carry bytes and direction.
h2d=$(grep " op=cudaMemcpy " "$TMP/basic.ev" | grep -c "arg0=65536 arg1=1 ")
expect_eq "basic: cudaMemcpy H2D of 65536 bytes (arg0/arg1)" "$h2d" 40
d2h=$(grep " op=cudaMemcpy " "$TMP/basic.ev" | grep -c "arg0=4096 arg1=2 ")
expect_eq "basic: cudaMemcpy D2H of 4096 bytes" "$d2h" 40
nonzero=$(grep " call " "$TMP/basic.ev" | grep -vc " ret=0 ")
expect_eq "basic: calls with a non-zero return code" "$nonzero" 0
finish
