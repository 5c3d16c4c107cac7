#!/usr/bin/env bash
# Cost of user stacks (docs/performance.md, "Stacks"). Needs root.
#   1. per call, native: the workload's cheap calls untraced, traced without
#      stacks and traced with stacks (same collector, build/tests/tools/
#      stacktrace); the added cost of stack capture as a ratio to the run
#      without stacks, and the kernel run time of call_exit vs call_exit_stk
#      (BPF_ENABLE_STATS);
#   2. per call, Python: ctypes calls from a 5-frame Python stack (Debian's
#      python3), the same three ways, plus the interpreter walk;
#   3. symbolisation throughput (build/tests/tools/symbench, no root).
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
ST=$PWD/$B/tests/tools/stacktrace
WL=$PWD/$B/workload
ITERS=${ITERS:-3000}
ROUNDS=${ROUNDS:-5}
PYCALLS=${PYCALLS:-20000}
[ "$(id -u)" = 0 ] || { echo "bench_stacks: needs root"; exit 77; }
[ -x "$ST" ] || { echo "bench_stacks: $ST not built (make test-build)"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
LIBS=(--lib "$B/shim/libcudart.so.12" --lib "$B/shim/libcuda.so.1")

# 1. Native: many cheap calls (8 launches, each also a driver launch, and a
# sync per step), timed by the workload's own clock.
args=(--iters "$ITERS" --kernels 8 --kernel-us 1 --sync-every 1)
"$WL" "${args[@]}" --expect "$tmp/expect" 2>/dev/null
calls=$(awk '$1 != "pid" {s += $2} END {print s}' "$tmp/expect")
wall_ns() { sed -n 's/.*role=parent.* wall_s=\([0-9.]*\).*/\1/p' | awk '{printf "%.0f\n", $1 * 1e9}'; }
best() { sort -n | head -n 1; }
: >"$tmp/base"; : >"$tmp/off"; : >"$tmp/on"
for _ in $(seq "$ROUNDS"); do
	"$WL" "${args[@]}" 2>&1 >/dev/null | wall_ns >>"$tmp/base"
	"$ST" --quiet --no-stacks --bpf-stats -- "$WL" "${args[@]}" >"$tmp/off.out" 2>&1
	wall_ns <"$tmp/off.out" >>"$tmp/off"
	"$ST" --quiet --bpf-stats -- "$WL" "${args[@]}" >"$tmp/on.out" 2>&1
	wall_ns <"$tmp/on.out" >>"$tmp/on"
done
bpf_avg() { sed -n "s/^bpfstat prog=$2 .* avg_ns=\([0-9]*\).*/\1/p" "$1" | head -1; }
awk -v c="$calls" -v b="$(best <"$tmp/base")" -v f="$(best <"$tmp/off")" -v n="$(best <"$tmp/on")" \
	-v ke="$(bpf_avg "$tmp/off.out" call_exit)" -v ks="$(bpf_avg "$tmp/on.out" call_exit_stk)" \
	-v ds="$(sed -n 's/^summary .* distinct=\([0-9]*\).*/\1/p' "$tmp/on.out")" 'BEGIN {
	off = (f - b) / c; on = (n - b) / c
	printf "native: %d calls per run, %d distinct stacks, best of %s rounds\n", c, ds, '"$ROUNDS"'
	printf "  untraced                     %8.3f us/call\n", b / c / 1000
	printf "  traced, stacks off           %8.3f us/call added\n", off / 1000
	printf "  traced, stacks on            %8.3f us/call added\n", on / 1000
	printf "  stack capture                %8.3f us/call added, ratio on/off %.2f\n", (on - off) / 1000, on / off
	printf "  kernel: call_exit %d ns, call_exit_stk %d ns per call (+%d ns)\n", ke, ks, ks - ke
}'

# 2. Python through ctypes (5 Python frames, native frames stop in libffi).
PY=/usr/bin/python3
if [ -x "$PY" ]; then
	loop_ns() { sed -n 's/.*loop_s=\([0-9.]*\).*/\1/p' | awk '{printf "%.0f\n", $1 * 1e9}'; }
	pyrun() { "$PY" tests/progs/ctypes_calls.py "$B/shim/libcudart.so.12" "$PYCALLS" 0.5; }
	: >"$tmp/pbase"; : >"$tmp/poff"; : >"$tmp/pon"
	for _ in $(seq "$ROUNDS"); do
		pyrun 2>/dev/null | loop_ns >>"$tmp/pbase"
		"$ST" --quiet --no-stacks --bpf-stats "${LIBS[@]}" -- "$PY" tests/progs/ctypes_calls.py \
			"$B/shim/libcudart.so.12" "$PYCALLS" 1 >"$tmp/poff.out" 2>&1
		loop_ns <"$tmp/poff.out" >>"$tmp/poff"
		"$ST" --quiet --bpf-stats "${LIBS[@]}" -- "$PY" tests/progs/ctypes_calls.py \
			"$B/shim/libcudart.so.12" "$PYCALLS" 1 >"$tmp/pon.out" 2>&1
		loop_ns <"$tmp/pon.out" >>"$tmp/pon"
	done
	# cudaMalloc + cudaFree per step, each with its nested driver call.
	pcalls=$((PYCALLS * 4))
	awk -v c="$pcalls" -v b="$(best <"$tmp/pbase")" -v f="$(best <"$tmp/poff")" -v n="$(best <"$tmp/pon")" \
		-v ke="$(bpf_avg "$tmp/poff.out" call_exit)" -v ks="$(bpf_avg "$tmp/pon.out" call_exit_stk)" \
		-v pf="$(sed -n 's/^resolver .* py_frames=\([0-9]*\).*/\1/p' "$tmp/pon.out")" 'BEGIN {
		off = (f - b) / c; on = (n - b) / c
		printf "python (%s, ctypes): %d traced calls per run, %d Python frames resolved\n", "'"$PY"'", c, pf
		printf "  untraced loop                %8.3f us/call\n", b / c / 1000
		printf "  traced, stacks off           %8.3f us/call added\n", off / 1000
		printf "  traced, stacks + Python      %8.3f us/call added\n", on / 1000
		printf "  stack capture                %8.3f us/call added, ratio on/off %.2f\n", (on - off) / 1000, on / off
		printf "  kernel: call_exit %d ns, call_exit_stk %d ns per call (+%d ns)\n", ke, ks, ks - ke
	}'
else
	echo "python: $PY missing, skipped"
fi

# 3. Symbolisation throughput.
echo "symbolisation:"
"$B/tests/tools/symbench" | sed 's/^/  /'
