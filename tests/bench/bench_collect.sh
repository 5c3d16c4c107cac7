#!/usr/bin/env bash
# Per-call cost of tracing: the same workload untraced, under a bpftrace
# script with empty uprobe+uretprobe pairs on the same functions, under the
# steps of tests/tools/probe_floor (the least a duration tracer does), and
# under ingero-top (--no-stacks, the default tail stacks, --stack-mode all).
# Prints the per-call cost of each and the ratios to
# bpftrace (goal for ingero-top: <= 1.15). Needs root and bpftrace.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
IG=$PWD/$B/ingero-top
WL=$PWD/$B/workload
FLOOR=$PWD/$B/tests/tools/probe_floor
ITERS=${ITERS:-10000}
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
wall_ns() { sed -n 's/.*wall_s=\([0-9.]*\).*/\1/p' | awk '{printf "%.0f\n", $1 * 1e9}'; }
run_base() { "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns; }
run_bpftrace() {
	: >"$tmp/bt.log"
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
# The least a duration tracer can do per call on this machine, in steps
# (tests/tools/probe_floor.bpf.c): counting pairs on uprobe_multi links as
# ingero-top uses; plus a clock read at each end and a per-thread slot; plus
# a ring-buffer record per call. Where the goal is out of reach, this shows
# whether the cost is ours or the machine's.
run_floor() {
	: >"$tmp/floor.log"
	"$FLOOR" "$1" "$(readlink -f "$B/shim/libcudart.so.12")" "$(readlink -f "$B/shim/libcuda.so.1")" \
		>"$tmp/floor.log" 2>&1 & local fp=$!
	for _ in $(seq 100); do grep -q attached "$tmp/floor.log" && break; sleep 0.1; done
	for _ in $(seq 60); do
		"$WL" --iters 1 --kernels 1 2>/dev/null
		sleep 0.2
		grep -q "^hits [1-9]" "$tmp/floor.log" && break
	done
	run_base
	kill -INT $fp; wait $fp 2>/dev/null
}
# Like with like: bpftrace captures no stacks, so the comparison runs
# ingero-top with --no-stacks; the default (stacks of the tail and 1 in 64
# of the other calls) and --stack-mode all (every call's stack) are
# reported too, with the default's ratio to --no-stacks (goal <= 1.10).
run_ig() {
	"$IG" --batch --summary --no-system-libs --no-stacks -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}
run_ig_stacks() {
	"$IG" --batch --summary --no-system-libs -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}
run_ig_all() {
	"$IG" --batch --summary --no-system-libs --stack-mode all -- "$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns
}

# Rounds interleave the runs so that load changes hit all of them; the best
# of each is kept.
best() { sort -n | head -n 1; }
confs="base bt count clock floor ig igs iga"
for c in $confs; do : >"$tmp/$c"; done
for _ in $(seq "$ROUNDS"); do
	run_base >>"$tmp/base"; run_bpftrace >>"$tmp/bt"
	run_floor count >>"$tmp/count"; run_floor clock >>"$tmp/clock"; run_floor floor >>"$tmp/floor"
	run_ig >>"$tmp/ig"; run_ig_stacks >>"$tmp/igs"; run_ig_all >>"$tmp/iga"
done
for c in $confs; do printf '%s %s\n' "$c" "$(best <"$tmp/$c")"; done >"$tmp/best"

awk -v c="$calls" '{ t[$1] = $2 } END {
	b = t["base"]
	added = "us/call added"
	printf "calls per run                     %d\n", c
	printf "untraced                          %8.3f us/call\n", b / c / 1000
	printf "bpftrace counting pairs           %8.3f %s\n", (t["bt"] - b) / c / 1000, added
	printf "floor: counting pairs (multi)     %8.3f %s\n", (t["count"] - b) / c / 1000, added
	printf "floor: + 2 clock reads, thread    %8.3f %s\n", (t["clock"] - b) / c / 1000, added
	printf "floor: + ring-buffer record       %8.3f %s\n", (t["floor"] - b) / c / 1000, added
	printf "ingero-top --no-stacks            %8.3f %s\n", (t["ig"] - b) / c / 1000, added
	printf "ingero-top default (tail stacks)  %8.3f %s\n", (t["igs"] - b) / c / 1000, added
	printf "ingero-top --stack-mode all       %8.3f %s\n", (t["iga"] - b) / c / 1000, added
	bt = t["bt"] - b
	printf "ratio floor/bpftrace              %.3f (the least a duration tracer pays here)\n", (t["floor"] - b) / bt
	printf "ratio ingero-top/bpftrace         %.3f (goal <= 1.15)\n", (t["ig"] - b) / bt
	ns = t["ig"] - b
	printf "ratio default/--no-stacks         %.3f (goal <= 1.10)\n", (t["igs"] - b) / ns
	printf "ratio all/--no-stacks             %.3f\n", (t["iga"] - b) / ns
}' "$tmp/best"
