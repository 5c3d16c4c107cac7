#!/usr/bin/env bash
# needs: root
# User stacks of traced calls (bpf/ingero.bpf.c capture_stack, src/stacks.c,
# src/symbolize.c, src/pyframes.c), through the real uprobes:
#   1. with stacks on, per-op call counts stay exact and every call carries a
#      stack that the kernel stored once per distinct hash;
#   2. nothing stays loaded or attached afterwards.
. "$(dirname "$0")/lib.sh"
need_root
ST=$B/tests/tools/stacktrace
[ -x "$ST" ] || { echo "skip: $ST not built (make test-build)"; exit 77; }

our_progs() { bpftool prog show 2>/dev/null | grep -cE 'call_enter|call_exit|btf_sched_switch|raw_sched_switch'; }
base_progs=$(our_progs)

# 1. Exact counts with stacks on; every call has a stack id, stored once.
run_counts() { # name, workload args...
	local name=$1; shift
	"$ST" -- "$WL" "$@" --expect "$TMP/$name.expect" >"$TMP/$name.ev" 2>"$TMP/$name.err"
	expect_eq "$name: exit status" "$?" 0
	event_counts "$TMP/$name.ev" >"$TMP/$name.got"
	expect_counts "$TMP/$name.expect" >"$TMP/$name.want"
	if diff -u "$TMP/$name.want" "$TMP/$name.got" >"$TMP/$name.diff"; then
		ok "$name: per-op counts with stacks on equal the workload's own ($(awk '{s+=$2} END {print s}' "$TMP/$name.want") calls)"
	else
		bad "$name: per-op counts differ with stacks on:"; cat "$TMP/$name.diff"
	fi
	local calls nostack ids missing
	calls=$(grep -c " call " "$TMP/$name.ev")
	nostack=$(grep " call " "$TMP/$name.ev" | grep -c " stack=0x0$")
	expect_eq "$name: calls without a stack id (of $calls)" "$nostack" 0
	ids=$(grep " call " "$TMP/$name.ev" | sed 's/.* stack=//' | sort -u | wc -l)
	missing=$(grep -c "^stack .* missing" "$TMP/$name.ev")
	expect_eq "$name: distinct stack ids not readable from the stacks map (of $ids)" "$missing" 0
	grep -q "^summary .* errors=0 lost=0 " "$TMP/$name.ev" && ok "$name: no stack capture errors or losses" \
		|| bad "$name: $(grep '^summary' "$TMP/$name.ev")"
}
run_counts basic --iters 40 --kernels 3 --kernel-us 50 --h2d 65536 --d2h 4096 --sync-every 1 --malloc-every 4
run_counts threads-fork --iters 20 --kernels 2 --kernel-us 20 --threads 3 --fork --sync-every 2

# 2. Nothing left behind.
sleep 0.3
expect_eq "after the runs: ingero-top programs loaded" "$(our_progs)" "$base_progs"
finish
