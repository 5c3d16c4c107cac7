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
ROUNDS=${ROUNDS:-5}
[ "$(id -u)" = 0 ] || { echo "bench_collect: needs root"; exit 77; }
command -v bpftrace >/dev/null || { echo "bench_collect: bpftrace not installed"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Many cheap calls: 8 launches (each also a driver launch) and a sync per step.
args=(--iters "$ITERS" --kernels 8 --kernel-us 1 --sync-every 1)
"$WL" "${args[@]}" --expect "$tmp/expect" 2>/dev/null
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$tmp/expect")

# bpftrace: a pair on every symbol ingero-top attaches in the shim. The
# bodies only count (bpftrace drops probes whose body does nothing), so this
# is the cost of the traps plus a per-CPU increment.
{
	echo 'BEGIN { printf("attached\n"); } interval:ms:200 { print(@n); }'
	for lib in "$B/shim/libcudart.so.12" "$B/shim/libcuda.so.1"; do
		p=$(readlink -f "$lib")
		for sym in $(nm -D --defined-only "$p" | awk '$2 == "T" {print $3}' | grep -E '^cu(da)?[A-Z]'); do
			echo "uprobe:$p:$sym { @n = count(); } uretprobe:$p:$sym { @n = count(); }"
		done
	done
} > "$tmp/empty.bt"

# Time each run with the workload's own clock (wall_s on its summary line),
# so start-up and attach time of the tracers do not count.
wall_ns() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' | awk '{printf "%d\n", $1 * 1e9}'; }
run_base() { "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns; }
run_bpftrace() {
	bpftrace "$tmp/empty.bt" >"$tmp/bt.log" 2>&1 & local bt=$!
	# BEGIN prints once the probes are set up; uprobes still take a moment
	# to become live on a VM, so wait until a probe is seen to fire.
	for _ in $(seq 600); do grep -q attached "$tmp/bt.log" && break; sleep 0.1; done
	for _ in $(seq 60); do
		"$WL" --iters 1 --kernels 1 2>/dev/null
		sleep 0.5
		grep -q "^@n: [1-9]" "$tmp/bt.log" && break
	done
	run_base
	kill -INT $bt; wait $bt 2>/dev/null
}
# Like with like: bpftrace captures no stacks, so the comparison runs
# ingero-top with --no-stacks; the default (stacks on) is reported too.
run_ig() {
	"$IG" --batch --summary --no-system-libs --no-stacks -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}
run_ig_stacks() {
	"$IG" --batch --summary --no-system-libs -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}

# Rounds interleave the three runs so that load changes hit all of them;
# the best of each is kept.
best() { sort -n | head -n 1; }
: >"$tmp/base"; : >"$tmp/bt"; : >"$tmp/ig"
for _ in $(seq "$ROUNDS"); do
	run_base >>"$tmp/base"; run_bpftrace >>"$tmp/bt"; run_ig >>"$tmp/ig"; run_ig_stacks >>"$tmp/igs"
done
base=$(best <"$tmp/base"); bt=$(best <"$tmp/bt"); ig_net=$(best <"$tmp/ig"); igs=$(best <"$tmp/igs")

awk -v c="$calls" -v b="$base" -v t="$bt" -v i="$ig_net" -v s="$igs" 'BEGIN {
	pb = b / c; pt = (t - b) / c; pi = (i - b) / c; ps = (s - b) / c
	printf "calls per run           %d\n", c
	printf "untraced                %8.2f us/call\n", pb / 1000
	printf "bpftrace empty pairs    %8.2f us/call added\n", pt / 1000
	printf "ingero-top --no-stacks  %8.2f us/call added\n", pi / 1000
	printf "ingero-top (stacks on)  %8.2f us/call added\n", ps / 1000
	printf "ratio ingero-top/bpftrace %.3f (goal <= 1.15)\n", pi / pt
}'
