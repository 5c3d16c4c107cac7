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

# BPF program ids held by a process, from its fds (other ingero-tops may
# run meanwhile: compare ids, not totals).
progs_of() { cat /proc/"$1"/fdinfo/* 2>/dev/null | awk '$1 == "prog_id:" {print $2}' | sort -u; }
alive_ids() { bpftool prog show -j 2>/dev/null | python3 -c '
import json, sys
want = set(sys.argv[1:])
print(" ".join(str(p["id"]) for p in json.load(sys.stdin) if str(p["id"]) in want))' "$@"; }

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

# 2. Nothing left behind: the programs the run held are gone after it.
"$ST" --quiet -- "$WL" --wait-signal --iters 5 --kernels 1 --kernel-us 50 >"$TMP/life.ev" 2>"$TMP/life.err" &
st=$!
ids=""
for _ in $(seq 100); do ids=$(progs_of $st); [ -n "$ids" ] && break; sleep 0.1; done
wl=$(pgrep -P $st | head -1)
[ -n "$ids" ] && ok "stack run holds BPF programs $(echo $ids | tr '\n' ' ')" || bad "no BPF programs seen for the run"
bpftool prog show | grep -q "call_exit_stk" && ok "call_exit_stk loaded while stacks are on" || bad "call_exit_stk not loaded"
sleep 0.5; [ -n "$wl" ] && kill -USR1 "$wl"
wait $st
sleep 0.3
expect_eq "after the run: its programs still loaded" "$(alive_ids $ids)" ""
finish
