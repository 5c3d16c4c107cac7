#!/usr/bin/env bash
# needs: alone (it checks the simulated times; scripts beside it would stretch them)
# The HIP shim without tracing: sonames .so.6 and .so.5, ROCm's symbol
# versions and the mangled hipExtModuleLaunchKernel (against ROCm's own
# libamdhip64.so.5 when Debian's libamdhip64-5 is installed), the workload's
# exact counts in --hip mode, and the same timing rules as CUDA. No root, no
# GPU. Exit 0 pass, 1 fail.
# shellcheck source=tests/integration/shim_lib.sh
. "$(dirname "$0")/shim_lib.sh"

HIP6=$SHIMDIR/libamdhip64.so.6
HIP5=$SHIMDIR/libamdhip64.so.5
REAL=${SHIM_REAL_HIP:-/usr/lib/x86_64-linux-gnu/libamdhip64.so.5}
EXT=_Z24hipExtModuleLaunchKernelP18ihipModuleSymbol_tjjjjjjmP12ihipStream_tPPvS4_P11ihipEvent_tS6_j

echo "exported symbols"
names="hipLaunchKernel hipModuleLaunchKernel $EXT hipMemcpy hipMemcpyAsync hipMemcpyHtoD
	hipMemcpyDtoH hipMalloc hipFree hipMallocAsync hipFreeAsync hipStreamSynchronize
	hipDeviceSynchronize hipEventSynchronize hipEventCreate hipEventRecord hipGraphLaunch
	hipLaunchKernel_spt hipMemcpyAsync_spt hipStreamSynchronize_spt"
for lib in "$HIP6" "$HIP5"; do
	so=$(basename "$lib")
	# shellcheck disable=SC2086
	missing=$(lacks "$lib" $names)
	if [ -z "$missing" ]; then pass "$so exports the HIP names"; else fail "$so lacks:$missing"; fi
	if readelf -d "$lib" | grep -q "SONAME.*\[$so\]"; then pass "$so: soname $so"
	else fail "$so: wrong soname"; fi
	extra=$(exports "$lib" | grep -Ev '^(hip[A-Z]|_Z24hipExt)' | tr '\n' ' ')
	if [ -z "$extra" ]; then pass "$so exports no internal helper"
	else fail "$so exports internal helpers: $extra"; fi
done
vers=$(nm -D --defined-only "$HIP6" | awk '{ print $3 }' |
	grep -E '^(hipMalloc|hipGraphLaunch|hipMallocAsync|hipLaunchKernel_spt|_Z24hipExt[^@]*)@@' |
	sed 's/^_Z24hipExt[^@]*/ext/' | sort | tr '\n' ' ')
if [ "$vers" = "ext@@hip_4.2 hipGraphLaunch@@hip_4.3 hipLaunchKernel_spt@@hip_5.2 hipMalloc@@hip_4.2 hipMallocAsync@@hip_5.1 " ]; then
	pass "ROCm's symbol versions: $vers"
else
	fail "symbol versions: $vers"
fi
if [ -f "$REAL" ]; then
	real_v=$(nm -D --defined-only "$REAL" | awk '{ print $3 }' | sort)
	ours_v=$(nm -D --defined-only "$HIP5" | awk '$2 == "T" { print $3 }' | sort)
	missing=$(comm -13 <(echo "$real_v") <(echo "$ours_v") | tr '\n' ' ')
	if [ -z "$missing" ]; then pass "every versioned name of the shim is in $REAL"
	else fail "$REAL lacks: $missing"; fi
else
	echo "  skip: Debian's libamdhip64-5 is not installed ($REAL) to compare names with"
fi

echo "op counts (--expect, --hip)"
run_counts hip-basic "--hip --iters 10 --kernels 3" "hip=1 iters=10 kernels=3"
run_counts hip-all "--hip --iters 8 --kernels 2 --driver --events --async-malloc --h2d 8192 --d2h 4096 --malloc-every 3 --threads 2" \
	"hip=1 iters=8 kernels=2 driver=1 events=1 async_malloc=1 h2d=8192 d2h=4096 malloc=3 threads=2"
run_counts hip-graph "--hip --iters 7 --kernels 3 --graph --async-copy --h2d 100 --device-sync --sync-every 2 --fork" \
	"hip=1 iters=7 kernels=3 graph=1 async=1 h2d=100 device=1 sync=2 procs=2"
if grep -q 'cuda\|cu[A-Z]' "$TMP/hip-all.stats"; then
	fail "--hip made CUDA calls: $(grep 'cuda\|cu[A-Z]' "$TMP/hip-all.stats" | head -3 | tr '\n' ' ')"
else
	pass "--hip makes no CUDA call"
fi
if "$WL" --hip --memset 2>"$TMP/flag.err"; [ $? = 2 ] && grep -q 'no CUDA-only flag' "$TMP/flag.err"; then
	pass "--hip with a CUDA-only flag exits 2 with one line"
else
	fail "--hip --memset: $(cat "$TMP/flag.err")"
fi

echo "simulated time, as CUDA"
# step_of FLAGS: the best step_ms of two runs.
step_of() {
	local best="" v
	for _ in 1 2; do
		# shellcheck disable=SC2068
		"$WL" $@ 2>"$TMP/t.err" >/dev/null || { echo error; return; }
		v=$(summary step_ms "$TMP/t.err")
		best=$(awk -v a="$best" -v b="$v" 'BEGIN { print (a == "" || b < a) ? b : a }')
	done
	echo "$best"
}
flags="--iters 30 --kernels 2 --kernel-us 1000 --h2d 1048576"
h=$(step_of --hip $flags)
c=$(step_of $flags)
if awk -v h="$h" -v c="$c" 'BEGIN { exit !(h >= 2.1 && h / c > 0.85 && h / c < 1.15) }'; then
	pass "2 x 1000 us kernels + 1 MiB copy + sync: HIP $h ms, CUDA $c ms per step"
else
	fail "HIP $h ms vs CUDA $c ms per step (want within 15 %, >= 2.1)"
fi
e=$(step_of --hip --iters 20 --kernels 1 --kernel-us 3000 --events --sync-every 0)
if awk -v e="$e" 'BEGIN { exit !(e >= 2.95) }'; then
	pass "hipEventSynchronize waits for a 3000 us kernel: $e ms per step"
else
	fail "hipEventSynchronize: $e ms per step, want >= 2.95"
fi

finish test_shim_hip
