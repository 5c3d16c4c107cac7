#!/usr/bin/env bash
# Per-call cost of tracing: the same workload untraced, under a bpftrace
# script with empty uprobe+uretprobe pairs on the same functions, and under
# ingero-top. Prints the per-call cost of each and the ratio
# ingero-top / bpftrace (goal: <= 1.15). Needs root and bpftrace.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
IG=$PWD/$B/ingero-top
WL=$PWD/$B/workload
ITERS=${ITERS:-3000}
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "bench_collect: needs root"; exit 77; }
command -v bpftrace >/dev/null || { echo "bench_collect: bpftrace not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Many cheap calls: 8 launches (each also a driver launch) and a sync per step.
args=(--iters "$ITERS" --kernels 8 --kernel-us 1 --sync-every 1)
"$WL" "${args[@]}" --expect "$tmp/expect" 2>/dev/null
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$tmp/expect")

# bpftrace: an empty pair on every symbol ingero-top attaches in the shim.
{
	for lib in "$B/shim/libcudart.so.12" "$B/shim/libcuda.so.1"; do
		p=$(readlink -f "$lib")
		for sym in $(nm -D --defined-only "$p" | awk '$2 == "T" {print $3}' | grep -E '^cu(da)?[A-Z]'); do
			echo "uprobe:$p:$sym {} uretprobe:$p:$sym {}"
		done
	done
} > "$tmp/empty.bt"

now() { date +%s%N; }
run_base() { local t0; t0=$(now); "$WL" "${args[@]}" 2>/dev/null; echo $(( $(now) - t0 )); }
run_bpftrace() {
	bpftrace "$tmp/empty.bt" >"$tmp/bt.log" 2>&1 & local bt=$!
	for _ in $(seq 100); do grep -q Attaching "$tmp/bt.log" && break; sleep 0.1; done
	sleep 1
	local t; t=$(run_base)
	kill -INT $bt; wait $bt 2>/dev/null
	echo "$t"
}
run_ig() {
	local t0; t0=$(now)
	"$IG" --batch --summary --no-system-libs -- "$WL" "${args[@]}" >"$tmp/ig.out" 2>&1
	local t=$(( $(now) - t0 ))
	# ingero-top's own start-up (BPF load, attach) is not per-call cost:
	# subtract the time of the same session around a workload with 1 step.
	echo "$t"
}
run_ig_empty() {
	local t0; t0=$(now)
	"$IG" --batch --summary --no-system-libs -- "$WL" --iters 1 --kernels 8 --kernel-us 1 >/dev/null 2>&1
	echo $(( $(now) - t0 ))
}
run_base_empty() { local t0; t0=$(now); "$WL" --iters 1 --kernels 8 --kernel-us 1 2>/dev/null; echo $(( $(now) - t0 )); }

best() { sort -n | head -n 1; }
base=$(for _ in $(seq "$ROUNDS"); do run_base; done | best)
bt=$(for _ in $(seq "$ROUNDS"); do run_bpftrace; done | best)
ig=$(for _ in $(seq "$ROUNDS"); do run_ig; done | best)
ig0=$(for _ in $(seq "$ROUNDS"); do run_ig_empty; done | best)
base0=$(for _ in $(seq "$ROUNDS"); do run_base_empty; done | best)
ig_net=$(( ig - (ig0 - base0) ))

awk -v c="$calls" -v b="$base" -v t="$bt" -v i="$ig_net" 'BEGIN {
	pb = b / c; pt = (t - b) / c; pi = (i - b) / c
	printf "calls per run           %d\n", c
	printf "untraced                %8.2f us/call\n", pb / 1000
	printf "bpftrace empty pairs    %8.2f us/call added\n", pt / 1000
	printf "ingero-top              %8.2f us/call added\n", pi / 1000
	printf "ratio ingero-top/bpftrace %.3f (goal <= 1.15)\n", pi / pt
}'
