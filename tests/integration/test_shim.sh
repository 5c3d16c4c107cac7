#!/usr/bin/env bash
# needs: alone (it checks the simulated times; scripts beside it would stretch them)
# The CUDA shim and the workload, without any tracing: exported symbols, the
# op counts the workload promises in --expect (against a formula from its
# flags and against the shim's own per-symbol counters), the simulated times,
# and the process-control flags. No root, no GPU. Exit 0 pass, 1 fail.
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
WL=$BUILD/workload
HOG=$BUILD/tests/progs/hog
CUDA=$BUILD/shim/libcuda.so.1
CUDART=$BUILD/shim/libcudart.so.12

TMP=$(mktemp -d /tmp/test_shim.XXXXXX)
BG_PIDS=()
cleanup() {
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

FAILS=0
pass() { echo "  ok   $*"; }
fail() { echo "  FAIL $*"; FAILS=$((FAILS + 1)); }

if [ ! -x "$WL" ] || [ ! -x "$HOG" ]; then
	echo "building workload, hog and the shim"
	make -C "$ROOT" --no-print-directory BUILD="$BUILD" "$WL" "$HOG" >"$TMP/make.log" 2>&1 ||
		{ cat "$TMP/make.log"; echo "FAIL: cannot build"; exit 1; }
fi

# ---- expected counts -------------------------------------------------------

# expected_counts KEY=VALUE... : the op counts the workload flags imply, sorted.
# Keys mirror the flags: iters kernels h2d d2h async sync device malloc
# threads fork driver graph. Per thread: one setup cudaMalloc and one
# teardown cudaFree; --graph launches the kernels once, inside the capture.
expected_counts() {
	local iters=100 kernels=4 h2d=0 d2h=0 async=0 sync=1 device=0 malloc=0
	local threads=1 fork=0 driver=0 graph=0 kv
	for kv in "$@"; do local "$kv"; done
	awk -v N="$iters" -v K="$kernels" -v h2d="$h2d" -v d2h="$d2h" -v async="$async" \
	    -v S="$sync" -v dev="$device" -v M="$malloc" -v T="$threads" -v F="$fork" \
	    -v drv="$driver" -v graph="$graph" '
	function add(op, n) { if (n > 0) c[op] += n }
	BEGIN {
		allocs = 1 + (M > 0 ? int(N / M) : 0)
		add("cudaMalloc", allocs); add("cuMemAlloc", allocs)
		add("cudaFree", allocs); add("cuMemFree", allocs)
		launches = graph ? K : N * K
		add("cudaLaunchKernel", launches); add("cuLaunchKernel", launches)
		if (graph) {
			add("cudaStreamBeginCapture", 1); add("cudaStreamEndCapture", 1)
			add("cudaGraphInstantiate", 1)
			add("cudaGraphLaunch", N); add("cuGraphLaunch", N)
		}
		if (h2d > 0 && async) { add("cudaMemcpyAsync", N); add("cuMemcpyAsync", N) }
		if (h2d > 0 && !async) { add("cudaMemcpy", N); add("cuMemcpyHtoD", N) }
		if (d2h > 0) { add("cudaMemcpy", N); add("cuMemcpyDtoH", N) }
		if (drv) { add("cuLaunchKernel", N); add("cuMemcpyHtoD", N) }
		syncs = S > 0 ? int(N / S) : 0
		if (dev) { add("cudaDeviceSynchronize", syncs); add("cuCtxSynchronize", syncs) }
		else { add("cudaStreamSynchronize", syncs); add("cuStreamSynchronize", syncs) }
		for (op in c) print op, c[op] * T * (F ? 2 : 1)
	}' | sort
}

# The op lines of an --expect file, sorted.
expect_ops() { grep -v '^pid ' "$1" | sort; }

# Folds SHIM_STATS lines ("PID SYMBOL COUNT") to canonical traced op names,
# the way a tracer attaches symbol variants to one op, sorted.
stats_ops() {
	awk '
	BEGIN {
		n = split("cudaMalloc cudaFree cudaMallocManaged cudaLaunchKernel cudaMemcpy " \
			  "cudaMemcpyAsync cudaStreamSynchronize cudaDeviceSynchronize " \
			  "cudaStreamBeginCapture cudaStreamEndCapture cudaGraphInstantiate " \
			  "cudaGraphLaunch cuLaunchKernel cuMemcpy cuMemcpyAsync cuMemcpyHtoD " \
			  "cuMemcpyDtoH cuMemAlloc cuMemAllocManaged cuMemFree cuCtxSynchronize " \
			  "cuStreamSynchronize cuGraphLaunch", names, " ")
		for (i = 1; i <= n; i++) traced[names[i]] = 1
	}
	{ op = $2; sub(/_ptsz$/, "", op); sub(/_v2$/, "", op); if (op in traced) c[op] += $3 }
	END { for (op in c) print op, c[op] }' "$1" | sort
}

# run_counts NAME "WORKLOAD FLAGS" "FORMULA KEYS": runs the workload and
# compares its --expect file with the formula and with the shim's counters.
run_counts() {
	local name=$1 flags=$2 keys=$3 out=$TMP/$1
	rm -f "$out.expect" "$out.stats"
	# shellcheck disable=SC2086
	if ! SHIM_STATS=$out.stats "$WL" $flags --expect "$out.expect" 2>"$out.err"; then
		fail "$name: workload $flags exited non-zero: $(cat "$out.err")"
		return
	fi
	# shellcheck disable=SC2086
	expected_counts $keys >"$out.want"
	expect_ops "$out.expect" >"$out.got"
	if cmp -s "$out.want" "$out.got"; then
		pass "$name: --expect counts match the flags ($(wc -l <"$out.got") ops)"
	else
		fail "$name: --expect counts differ from the flags (want | got):"
		diff "$out.want" "$out.got" | sed 's/^/         /'
	fi
	stats_ops "$out.stats" >"$out.shim"
	if cmp -s "$out.got" "$out.shim"; then
		pass "$name: the shim libraries saw exactly those calls"
	else
		fail "$name: shim counters differ from --expect (expect | shim):"
		diff "$out.got" "$out.shim" | sed 's/^/         /'
	fi
}

# within VALUE WANT PCT: is VALUE within PCT % of WANT?
within() { awk -v v="$1" -v w="$2" -v p="$3" 'BEGIN { d = v - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; }

# field NAME FILE: value of NAME=... in the workload's summary line.
field() { sed -n "s/.*role=parent.* $1=\([0-9.]*\).*/\1/p" "$2" | head -1; }

# ---- exported symbols --------------------------------------------------------

echo "exported symbols"
want_cuda="cuInit cuLaunchKernel cuMemcpy cuMemcpyAsync cuMemcpyHtoD_v2 cuMemcpyDtoH_v2
	cuMemAlloc_v2 cuMemAllocManaged cuMemFree_v2 cuCtxSynchronize cuStreamSynchronize
	cuGraphLaunch cuStreamCreate cuStreamDestroy_v2 cuMemAlloc cuMemFree cuMemcpyHtoD
	cuMemcpyDtoH shimSetKernelTime shimSetMallocTime"
want_cudart="cudaMalloc cudaFree cudaMallocManaged cudaLaunchKernel cudaMemcpy cudaMemcpyAsync
	cudaStreamSynchronize cudaDeviceSynchronize cudaStreamCreate cudaStreamDestroy
	cudaStreamBeginCapture cudaStreamEndCapture cudaGraphInstantiate cudaGraphLaunch
	cudaGetLastError cudaGetErrorString cudaLaunchKernel_ptsz cudaMemcpyAsync_ptsz
	cudaStreamSynchronize_ptsz"
for lib in CUDA CUDART; do
	path=${!lib}
	want=want_${lib,,}
	nm -D --defined-only "$path" | awk '$2 == "T" { print $3 }' | sort >"$TMP/$lib.syms"
	missing=""
	for s in ${!want}; do grep -qx "$s" "$TMP/$lib.syms" || missing="$missing $s"; done
	if [ -z "$missing" ]; then pass "$(basename "$path") exports the CUDA 12 names"
	else fail "$(basename "$path") lacks:$missing"; fi
	extra=$(grep -Ev '^(cu|cuda|shim)[A-Z]' "$TMP/$lib.syms" | tr '\n' ' ')
	if [ -z "$extra" ]; then pass "$(basename "$path") exports no internal helper"
	else fail "$(basename "$path") exports internal helpers: $extra"; fi
done
if readelf -d "$CUDART" | grep -q 'NEEDED.*\[libcuda.so.1\]'; then
	pass "libcudart.so.12 links libcuda.so.1 (driver calls go through its PLT)"
else
	fail "libcudart.so.12 does not link libcuda.so.1"
fi

# ---- counts --------------------------------------------------------------------

echo "op counts (--expect)"
run_counts basic "--iters 20 --kernels 3" "iters=20 kernels=3"
run_counts copies "--iters 30 --kernels 2 --h2d 1048576 --d2h 4096 --sync-every 4 --malloc-every 7 --driver --threads 3" \
	"iters=30 kernels=2 h2d=1048576 d2h=4096 sync=4 malloc=7 driver=1 threads=3"
run_counts graph "--iters 12 --kernels 3 --graph --h2d 8192 --async-copy --device-sync --sync-every 2 --slow-malloc-every 3 --slow-malloc-us 200 --warmup-slow 2 --warmup-us 500" \
	"iters=12 kernels=3 graph=1 h2d=8192 async=1 device=1 sync=2 malloc=1"
run_counts nosync "--iters 15 --kernels 1 --sync-every 0 --host-us 50 --sleep-us 50" \
	"iters=15 kernels=1 sync=0"
run_counts fork "--iters 10 --kernels 2 --d2h 1024 --fork --threads 2" \
	"iters=10 kernels=2 d2h=1024 fork=1 threads=2"

f=$TMP/fork.expect
pids=$(awk '$1 == "pid" { print $2 }' "$f" | sort -u | wc -l)
parent=$(sed -n 's/.*pid=\([0-9]*\) role=parent.*/\1/p' "$TMP/fork.err")
child=$(sed -n 's/.*pid=\([0-9]*\) role=child.*/\1/p' "$TMP/fork.err")
if [ "$pids" = 2 ] && grep -qx "pid $parent" "$f" && grep -qx "pid $child" "$f"; then
	pass "fork: --expect names the parent $parent and the child $child"
else
	fail "fork: want pid lines for parent '$parent' and child '$child', got: $(grep ^pid "$f" | tr '\n' ' ')"
fi
if [ "$(awk '{ print $1 }' "$TMP/fork.stats" | sort -u | wc -l)" = 2 ]; then
	pass "fork: both processes called the shim"
else
	fail "fork: the shim saw calls from $(awk '{ print $1 }' "$TMP/fork.stats" | sort -u | wc -l) processes"
fi

if "$WL" --iters 3 --check-errors --expect "$TMP/err.expect" 2>"$TMP/err.err" &&
	grep -q 'check-errors: ok' "$TMP/err.err"; then
	pass "error codes: bad arguments give CUDA's codes (--check-errors)"
else
	fail "error codes: $(grep check-errors "$TMP/err.err")"
fi

# ---- time ----------------------------------------------------------------------

# The machine's wake-up latency (ms): how late a thread runs after the
# absolute-time sleep that ends a simulated wait (timer, idle exit, run
# queue). Measured below by SHIM_SYNC=block; until then 0.
WAKE_MS=0

# timed_range NAME LO_MS HI_MS ENV... -- FLAGS...: step time in [LO, HI],
# HI plus, per sleep of a step (the workload's voluntary switches), three
# times WAKE_MS: the simulation never ends early, and is late only by the
# wake-ups the machine makes it pay. A loaded machine can stretch one run
# (preemption), so a second run gets a chance.
timed_range() {
	local name=$1 lo=$2 hi=$3 got="" hi2=$3
	shift 3
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	for try in 1 2; do
		env "${envs[@]}" "$WL" "$@" 2>"$TMP/t.err" >/dev/null || break
		got=$(field step_ms "$TMP/t.err")
		hi2=$(awk -v h="$hi" -v v="$(field nvcsw "$TMP/t.err")" -v n="$(field steps "$TMP/t.err")" \
			-v w="$WAKE_MS" 'BEGIN { printf "%.4f", h + (n > 0 ? v / n : 0) * 3 * w }')
		awk -v g="$got" -v l="$lo" -v h="$hi2" 'BEGIN { exit !(g != "" && g >= l && g <= h) }' &&
			{ pass "$name: $got ms per step (want $lo..$hi2)"; return 0; }
	done
	fail "$name: ${got:-no} ms per step, want $lo..$hi2 ($(cat "$TMP/t.err"))"
	return 1
}
# timed NAME WANT_MS PCT ENV... -- FLAGS...: step time within PCT % of WANT_MS.
timed() {
	local name=$1 want=$2 pct=$3
	shift 3
	timed_range "$name" "$(awk -v w="$want" -v p="$pct" 'BEGIN { print w * (1 - p / 100) }')" \
		"$(awk -v w="$want" -v p="$pct" 'BEGIN { print w * (1 + p / 100) }')" "$@"
}

echo "simulated time"
# block sleeps to the kernel's end on an absolute timer, which never fires
# early but wakes the thread late by the machine's wake-up latency (timer
# interrupt, idle exit, run queue: ~0.1 ms on a VM, 1.103 ms per 1.005 ms
# step was seen on one), once per step. So the step is never shorter than
# the kernel, and its excess is one wake-up: bounded by a whole kernel time,
# whatever the machine. That excess is WAKE_MS for the checks below.
timed_range "1000 us kernel + sync, SHIM_SYNC=block" 1.000 2.010 SHIM_SYNC=block -- \
	--iters 100 --kernels 1 --kernel-us 1000
cp "$TMP/t.err" "$TMP/sync.block"
WAKE_MS=$(awk -v s="$(field step_ms "$TMP/sync.block")" 'BEGIN { w = s - 1.005; printf "%.4f", (w > 0.02 ? w : 0.02) }')
echo "  wake-up latency here: $WAKE_MS ms"
# 2 launches of 5 us, then a sync that waits for 2 x 2000 us of kernels.
timed "2 x 2000 us kernels + sync" 4.01 15 -- --iters 25 --kernels 2 --kernel-us 2000
# auto and spin end their wait spinning: the step is the kernel's time.
for mode in auto spin; do
	timed "1000 us kernel + sync, SHIM_SYNC=$mode" 1.005 5 SHIM_SYNC=$mode -- \
		--iters 100 --kernels 1 --kernel-us 1000
	cp "$TMP/t.err" "$TMP/sync.$mode"
done
# CPU use tells the wait strategies apart: sleeping, or burning the CPU.
cpu_block=$(field cpu_s "$TMP/sync.block")
cpu_spin=$(field cpu_s "$TMP/sync.spin")
cpu_auto=$(field cpu_s "$TMP/sync.auto")
wall=$(field wall_s "$TMP/sync.spin")
if awk -v b="$cpu_block" -v s="$cpu_spin" -v a="$cpu_auto" -v w="$wall" \
	'BEGIN { exit !(s > 0.8 * w && b < 0.1 * w && a > b && a < 0.5 * w) }'; then
	pass "sync CPU: spin ${cpu_spin}s, auto ${cpu_auto}s, block ${cpu_block}s of ${wall}s"
else
	fail "sync CPU: spin ${cpu_spin}s, auto ${cpu_auto}s, block ${cpu_block}s of ${wall}s"
fi
# 1 MiB at 10 GB/s is 104.9 us, plus the fixed 10 us of a copy.
timed "1 MiB cudaMemcpy H2D" 0.115 15 -- --iters 200 --kernels 0 --sync-every 0 --h2d 1048576
timed "SHIM_COPY_GBPS=1: 1 MiB H2D" 1.059 10 SHIM_COPY_GBPS=1 -- --iters 50 --kernels 0 --sync-every 0 --h2d 1048576
# The D2H copy waits for the kernels queued before it (implicit sync).
timed "kernel then D2H copy" 0.515 10 -- --iters 100 --kernels 1 --kernel-us 500 --d2h 4 --sync-every 0
timed "SHIM_KERNEL_US=300" 0.305 10 SHIM_KERNEL_US=300 -- --iters 100 --kernels 1
timed "graph of 3 x 200 us kernels" 0.605 10 -- --iters 100 --kernels 3 --kernel-us 200 --graph
timed "slow malloc every 2nd step: 1000 us" 0.515 15 -- --iters 40 --kernels 0 --sync-every 0 \
	--malloc-every 1 --slow-malloc-every 2 --slow-malloc-us 1000
timed "first 10 launches take 2000 us" 2.000 15 -- --iters 10 --kernels 1 --kernel-us 0 \
	--warmup-slow 10 --warmup-us 2000 --sync-every 0

# ---- process control --------------------------------------------------------------

echo "process control"
# The first CPU this script may use (containers may not allow CPU 0).
CPU=$(awk '/^Cpus_allowed_list/ { split($2, a, "[-,]"); print a[1] }' /proc/self/status)
"$WL" --wait-signal --cpu "$CPU" --threads 2 --iters 400 --kernels 1 --kernel-us 1000 \
	>"$TMP/ready" 2>"$TMP/ready.err" &
wl=$!
BG_PIDS+=("$wl")
for _ in $(seq 50); do [ -s "$TMP/ready" ] && break; sleep 0.02; done
if [ "$(cat "$TMP/ready")" = "ready $wl" ]; then
	pass "--wait-signal prints 'ready $wl'"
else
	fail "--wait-signal printed '$(cat "$TMP/ready")', want 'ready $wl'"
fi
sleep 0.2 # nothing may happen meanwhile: no condition to wait for
if kill -0 "$wl" 2>/dev/null && [ "$(ls "/proc/$wl/task" | wc -l)" = 1 ]; then
	pass "--wait-signal waits, with no worker started"
else
	fail "--wait-signal did not wait"
fi
kill -USR1 "$wl"
thread_names() { cat /proc/"$wl"/task/*/comm 2>/dev/null | sort | tr '\n' ' '; }
for _ in $(seq 300); do [ "$(thread_names)" = "wl-worker-0 wl-worker-1 workload " ] && break; sleep 0.1; done
names=$(thread_names)
cpus=$(grep -h Cpus_allowed_list /proc/"$wl"/task/*/status 2>/dev/null | awk '{ print $2 }' | sort -u | tr '\n' ' ')
if [ "$names" = "wl-worker-0 wl-worker-1 workload " ]; then
	pass "worker threads are named: $names"
else
	fail "thread names: '$names'"
fi
if [ "$cpus" = "$CPU " ]; then pass "--cpu $CPU pins every thread"
else fail "--cpu $CPU: threads allowed on '$cpus'"; fi
if wait "$wl"; then pass "SIGUSR1 starts the loop and it finishes"
else fail "workload after SIGUSR1 exited non-zero: $(cat "$TMP/ready.err")"; fi

t0=$(date +%s%N)
"$WL" --start-delay-ms 300 --iters 1 --kernels 1 2>/dev/null
dt=$((($(date +%s%N) - t0) / 1000000))
# at least the delay; the upper bound only catches a delay ignored or multiplied
if [ "$dt" -ge 300 ] && [ "$dt" -lt 10000 ]; then pass "--start-delay-ms 300 took $dt ms"
else fail "--start-delay-ms 300 took $dt ms"; fi

if "$WL" --iters x 2>/dev/null; [ $? = 2 ]; then pass "a bad flag value exits 2"
else fail "a bad flag value does not exit 2"; fi

"$HOG" --cpu "$CPU" --seconds 3 &
hog=$!
BG_PIDS+=("$hog")
for _ in $(seq 100); do [ "$(cat "/proc/$hog/comm" 2>/dev/null)" = ig-hog ] && break; sleep 0.02; done
comm=$(cat "/proc/$hog/comm" 2>/dev/null)
cpus=$(awk '/Cpus_allowed_list/ { print $2 }' "/proc/$hog/status" 2>/dev/null)
if [ "$comm" = ig-hog ] && [ "$cpus" = "$CPU" ]; then pass "hog runs as ig-hog on CPU $CPU"
else fail "hog: comm '$comm', CPUs '$cpus'"; fi
if wait "$hog"; then pass "hog --seconds 3 exits by itself"
else fail "hog exited non-zero"; fi

if [ "$FAILS" -gt 0 ]; then
	echo "test_shim: $FAILS check(s) FAILED"
	exit 1
fi
echo "test_shim: all checks passed"
exit 0
