#!/usr/bin/env bash
# needs: alone (it checks the simulated times; scripts beside it would stretch them)
# The CUDA 12/13 calls of the shim (launch-ex, stream-ordered allocation,
# page-locked memory, memset, events, driver copies, module loads) without
# tracing: exported names (and, where the real CUDA 13 is installed, that it
# exports the same names), the workload's exact counts for every new flag
# against a formula and the libraries' own counters, and the timing rules.
# No root, no GPU. Exit 0 pass, 1 fail.
# shellcheck source=tests/integration/shim_lib.sh
. "$(dirname "$0")/shim_lib.sh"

CUDA=$SHIMDIR/libcuda.so.1
CUDART=$SHIMDIR/libcudart.so.12
REAL_RT=/usr/local/cuda/lib64/libcudart.so.13
REAL_DRV=/usr/local/cuda/lib64/stubs/libcuda.so

new_drv="cuLaunchKernelEx cuMemAllocAsync cuMemFreeAsync cuMemcpyDtoD_v2 cuMemcpyDtoD
	cuMemcpyHtoDAsync_v2 cuMemcpyHtoDAsync cuMemcpyDtoHAsync_v2 cuMemcpyDtoHAsync
	cuMemcpyDtoDAsync_v2 cuMemcpyDtoDAsync cuModuleLoadData cuModuleGetFunction cuModuleUnload
	cuLibraryLoadData cuLibraryUnload cuMemAllocHost_v2 cuMemAllocHost cuMemHostAlloc
	cuMemFreeHost cuMemsetD8_v2 cuMemsetD8 cuMemsetD8Async cuEventCreate cuEventDestroy_v2
	cuEventDestroy cuEventRecord cuEventQuery cuEventSynchronize cuStreamWaitEvent"
new_rt="cudaLaunchKernelExC cudaLaunchKernelExC_ptsz cudaMallocAsync cudaMallocAsync_ptsz
	cudaFreeAsync cudaFreeAsync_ptsz cudaMallocHost cudaHostAlloc cudaFreeHost cudaMemset
	cudaMemsetAsync cudaMemsetAsync_ptsz cudaEventCreate cudaEventCreateWithFlags
	cudaEventDestroy cudaEventRecord cudaEventRecord_ptsz cudaEventQuery cudaEventSynchronize
	cudaStreamWaitEvent cudaStreamWaitEvent_ptsz"

echo "exported symbols"
# shellcheck disable=SC2086
missing=$(lacks "$CUDA" $new_drv)
if [ -z "$missing" ]; then pass "libcuda.so.1 exports the CUDA 12/13 driver names"
else fail "libcuda.so.1 lacks:$missing"; fi
# shellcheck disable=SC2086
missing=$(lacks "$CUDART" $new_rt)
if [ -z "$missing" ]; then pass "libcudart.so.12 exports the CUDA 12/13 runtime names"
else fail "libcudart.so.12 lacks:$missing"; fi
for lib in "$CUDA" "$CUDART"; do
	extra=$(exports "$lib" | grep -Ev '^(cu|cuda|shim)[A-Z]' | tr '\n' ' ')
	if [ -z "$extra" ]; then pass "$(basename "$lib") exports no internal helper"
	else fail "$(basename "$lib") exports internal helpers: $extra"; fi
done

# The shim's names must be NVIDIA's: every one the shim exports (bar its
# shim* controls) is exported by the real CUDA 13 libraries, when installed.
if [ -f "$REAL_RT" ]; then
	# shellcheck disable=SC2046
	missing=$(lacks "$REAL_RT" $(exports "$CUDART"))
	if [ -z "$missing" ]; then
		pass "every runtime name of the shim is exported by $REAL_RT"
	else
		fail "$REAL_RT does not export:$missing"
	fi
	for s in cudaLaunchKernelExC cudaMallocAsync cudaFreeAsync cudaMallocHost cudaHostAlloc \
		cudaFreeHost cudaMemset cudaMemsetAsync cudaEventRecord cudaEventSynchronize \
		cudaEventQuery cudaStreamWaitEvent; do
		v=$(exports "$REAL_RT" | grep -E "^${s}(_ptsz|_ptds)?$" | tr '\n' ' ')
		echo "  info $REAL_RT: $v"
	done
else
	echo "  skip: no real CUDA 13 runtime at $REAL_RT to compare names with"
fi
if [ -f "$REAL_DRV" ]; then
	# shellcheck disable=SC2046
	missing=$(lacks "$REAL_DRV" $(exports "$CUDA" | grep -v '^shim'))
	if [ -z "$missing" ]; then pass "every driver name of the shim is exported by $REAL_DRV"
	else fail "$REAL_DRV does not export:$missing"; fi
else
	echo "  skip: no real CUDA 13 driver stub at $REAL_DRV to compare names with"
fi

echo "op counts (--expect)"
run_counts each-flag "--iters 12 --kernels 2 --launch-ex 3 --async-malloc --memset --events --pinned --driver-ext --modules 2" \
	"iters=12 kernels=2 launch_ex=3 async_malloc=1 memset=1 events=1 pinned=1 driver_ext=1 modules=2"
run_counts with-old-flags "--iters 9 --kernels 1 --h2d 8192 --d2h 4096 --driver --graph --sync-every 2 --malloc-every 3 --launch-ex 1 --events --driver-ext --threads 2" \
	"iters=9 kernels=1 h2d=8192 d2h=4096 driver=1 graph=1 sync=2 malloc=3 launch_ex=1 events=1 driver_ext=1 threads=2"
run_counts fork "--iters 6 --kernels 1 --async-malloc --pinned --memset --modules 1 --fork --device-sync" \
	"iters=6 kernels=1 async_malloc=1 pinned=1 memset=1 modules=1 procs=2 device=1"
if "$WL" --iters 3 --check-errors --events --memset 2>"$TMP/err.err" >/dev/null &&
	grep -q 'check-errors: ok' "$TMP/err.err"; then
	pass "error codes unchanged with the new calls (--check-errors)"
else
	fail "error codes: $(cat "$TMP/err.err")"
fi

echo "simulated time"
# best_of NAME FIELD N ENV... -- FLAGS: the smallest FIELD of N runs (a loaded
# machine only ever stretches a run).
best_of() {
	local field=$1 n=$2 best="" v
	shift 2
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	for _ in $(seq "$n"); do
		env "${envs[@]}" "$WL" "$@" 2>"$TMP/t.err" >/dev/null || { echo "error"; return; }
		v=$(summary "$field" "$TMP/t.err")
		best=$(awk -v a="$best" -v b="$v" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}

# cudaEventSynchronize waits for the kernels recorded before the event.
step=$(best_of step_ms 2 -- --iters 20 --kernels 1 --kernel-us 3000 --events --sync-every 0)
if awk -v s="$step" 'BEGIN { exit !(s >= 2.95 && s < 4.5) }'; then
	pass "cudaEventSynchronize waits for a 3000 us kernel: $step ms per step"
else
	fail "event sync: $step ms per step, want 3.0-4.5"
fi
# Stream-ordered frees do not synchronise; cudaFree does. With a 3000 us
# kernel and 3000 us of host sleep per step, the kernel overlaps the sleep
# unless the free waits for it.
a=$(best_of step_ms 2 -- --iters 20 --kernels 1 --kernel-us 3000 --sync-every 0 --sleep-us 3000 --async-malloc)
f=$(best_of step_ms 2 -- --iters 20 --kernels 1 --kernel-us 3000 --sync-every 0 --sleep-us 3000 --malloc-every 1)
if awk -v a="$a" -v f="$f" 'BEGIN { exit !(f >= 5.9 && f > 1.6 * a) }'; then
	pass "cudaFreeAsync does not wait for kernels ($a ms per step), cudaFree does ($f ms)"
else
	fail "stream-ordered free: $a ms per step, cudaFree: $f ms (want >= 1.6 x, >= 5.9)"
fi
# Cold start: the first module load of the process costs SHIM_MODULE_COLD_US
# (the baseline is the best of three: one slow run would shrink the difference).
w0=$(best_of wall_s 3 SHIM_MODULE_COLD_US=20000 SHIM_MODULE_US=2000 -- --iters 1 --kernels 0 --sync-every 0)
w3=$(best_of wall_s 1 SHIM_MODULE_COLD_US=20000 SHIM_MODULE_US=2000 -- --iters 1 --kernels 0 --sync-every 0 --modules 3)
if awk -v a="$w0" -v b="$w3" 'BEGIN { exit !(b - a >= 0.0318) }'; then
	pass "3 module + 3 library loads: $w3 s vs $w0 s without (want 20 ms cold + 6 x 2 ms more)"
else
	fail "module loads: $w3 s vs $w0 s without, want >= 31.8 ms more"
fi
# Page-locked memory is real: a D2H copy into it lands (--check-errors
# covers managed memory); here the run with --pinned must simply copy.
if "$WL" --iters 5 --kernels 1 --pinned --h2d 65536 --d2h 65536 2>/dev/null; then
	pass "copies from and to page-locked host buffers succeed"
else
	fail "copies with --pinned failed"
fi

echo "stream items completed later (what the NCCL shim builds on)"
if "$SHIMDIR/ext-check" >"$TMP/ext.out" 2>&1; then
	pass "events and cross-stream waits behind an item posted later ($(grep -c '^ok' "$TMP/ext.out") checks of ext-check)"
else
	fail "ext-check: $(grep -v '^ok' "$TMP/ext.out" | tr '\n' ' ')"
fi

finish test_shim_cuda13
