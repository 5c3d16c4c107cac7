# Helpers of the shim tests (sourced, not run): no root, no tracing. The op
# counts a workload run must produce, computed from its flags; the shim
# libraries' own counters (SHIM_STATS) folded to traced op names.
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
WL=$BUILD/workload
SHIMDIR=$BUILD/shim

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
finish() {
	if [ "$FAILS" -gt 0 ]; then echo "$1: $FAILS check(s) FAILED"; exit 1; fi
	echo "$1: all checks passed"
	exit 0
}

if [ ! -x "$WL" ] || [ ! -x "$SHIMDIR/nvml-read" ]; then
	echo "building the workload and the shim"
	make -C "$ROOT" --no-print-directory BUILD="$BUILD" "$WL" >"$TMP/make.log" 2>&1 ||
		{ cat "$TMP/make.log"; echo "FAIL: cannot build"; exit 1; }
fi

# The traced op names, from the workload's own list (tests/workload/workload.h).
TRACED=$(sed -n 's/^[[:space:]]*X(\([A-Za-z0-9_]*\)).*/\1/p' "$ROOT/tests/workload/workload.h" | tr '\n' ' ')

# exports LIB: the functions a library exports, without symbol versions, sorted.
# Weak ones count: NVIDIA's libnccl exports ncclX as weak aliases of pncclX.
exports() { nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | sort -u; }

# lacks LIB NAME...: the names LIB does not export (empty when all are there).
lacks() {
	local lib=$1 n out=""
	shift
	exports "$lib" >"$TMP/lacks.syms"
	for n in "$@"; do grep -qx "$n" "$TMP/lacks.syms" || out="$out $n"; done
	echo "$out"
}

# The op lines of an --expect file, sorted; its NCCL byte lines ("OP BYTES").
expect_ops() { awk '$1 != "pid" && $1 != "bytes"' "$1" | sort; }
expect_bytes() { awk '$1 == "bytes" { print $2, $3 }' "$1" | sort; }

# Folds SHIM_STATS lines ("PID SYMBOL COUNT") to the traced op names, the way
# a tracer attaches symbol variants (_v2, _ptsz) to one op, sorted.
stats_ops() {
	awk -v traced="$TRACED" '
	BEGIN { n = split(traced, names, " "); for (i = 1; i <= n; i++) t[names[i]] = 1 }
	{ op = $2; sub(/_ptsz$/, "", op); sub(/_v2$/, "", op); if (op in t) c[op] += $3 }
	END { for (op in c) print op, c[op] }' "$1" | sort
}

# expected_ops KEY=VALUE...: the op counts the workload flags imply, sorted.
# Keys mirror the flags: iters kernels h2d d2h async sync device malloc
# threads procs (processes: 2 with --fork) driver graph launch_ex
# async_malloc memset events pinned driver_ext modules nccl types (NCCL data
# type indices, comma-separated) ops (NCCL op names) hip.
expected_ops() {
	local iters=100 kernels=4 h2d=0 d2h=0 async=0 sync=1 device=0 malloc=0 threads=1 procs=1
	local driver=0 graph=0 launch_ex=0 async_malloc=0 memset=0 events=0 pinned=0 driver_ext=0
	local modules=0 nccl=0 types="0,1,2,3,4,5,6,7,8,9,10,11" ops="all" hip=0 kv
	for kv in "$@"; do local "$kv"; done
	awk -v N="$iters" -v K="$kernels" -v h2d="$h2d" -v d2h="$d2h" -v async="$async" \
	    -v S="$sync" -v dev="$device" -v M="$malloc" -v T="$threads" -v P="$procs" \
	    -v drv="$driver" -v graph="$graph" -v lex="$launch_ex" -v am="$async_malloc" \
	    -v ms="$memset" -v ev="$events" -v pin="$pinned" -v dx="$driver_ext" \
	    -v mods="$modules" -v nccl="$nccl" -v types="$types" -v ops="$ops" -v hip="$hip" '
	function add(op, n) { if (n > 0) c[op] += n }
	BEGIN {
		allocs = 1 + (M > 0 ? int(N / M) : 0)
		syncs = S > 0 ? int(N / S) : 0
		launches = graph ? K : N * K
		if (hip) {
			add("hipMalloc", allocs); add("hipFree", allocs)
			add("hipLaunchKernel", launches)
			if (graph) add("hipGraphLaunch", N)
			if (h2d > 0) add(async ? "hipMemcpyAsync" : "hipMemcpy", N)
			if (d2h > 0) add("hipMemcpy", N)
			if (drv) {
				add("hipModuleLaunchKernel", N); add("hipExtModuleLaunchKernel", N)
				add("hipMemcpyHtoD", N); add("hipMemcpyDtoH", N)
			}
			if (ev) add("hipEventSynchronize", N)
			if (am) add("hipMallocAsync", N)
			add(dev ? "hipDeviceSynchronize" : "hipStreamSynchronize", syncs)
		} else {
			add("cudaMalloc", allocs); add("cuMemAlloc", allocs)
			add("cudaFree", allocs); add("cuMemFree", allocs)
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
			if (dev) { add("cudaDeviceSynchronize", syncs); add("cuCtxSynchronize", syncs) }
			else { add("cudaStreamSynchronize", syncs); add("cuStreamSynchronize", syncs) }
			add("cudaLaunchKernelExC", N * lex); add("cuLaunchKernelEx", N * lex)
			if (am) {
				add("cudaMallocAsync", N); add("cudaFreeAsync", N)
				add("cuMemAllocAsync", N); add("cuMemFreeAsync", N)
			}
			if (ms) { add("cudaMemset", N); add("cudaMemsetAsync", N) }
			if (ev) {
				add("cudaEventRecord", N); add("cudaEventQuery", N)
				add("cudaStreamWaitEvent", N); add("cudaEventSynchronize", N)
			}
			if (pin) { add("cudaMallocHost", 1); add("cudaHostAlloc", 1); add("cudaFreeHost", 2) }
			if (dx) {
				add("cuLaunchKernelEx", N); add("cuMemAllocAsync", N); add("cuMemFreeAsync", N)
				add("cuMemcpyHtoDAsync", N); add("cuMemcpyDtoDAsync", N)
				add("cuMemcpyDtoD", N); add("cuMemcpyDtoHAsync", N)
			}
			add("cuModuleLoadData", mods); add("cuLibraryLoadData", mods)
		}
		if (nccl) {
			nt = split(types, tl, ",")
			if (ops == "all") ops = "allreduce,allgather,reducescatter,broadcast,bcast,reduce,sendrecv"
			split("allreduce ncclAllReduce allgather ncclAllGather reducescatter ncclReduceScatter " \
			      "broadcast ncclBroadcast bcast ncclBcast reduce ncclReduce", m, " ")
			for (i = 1; i < 12; i += 2) name[m[i]] = m[i + 1]
			add("ncclCommInitRank", 1); add("ncclCommDestroy", 1)
			no = split(ops, ol, ",")
			for (i = 1; i <= no; i++) {
				if (ol[i] == "sendrecv") {
					add("ncclSend", N * nt); add("ncclRecv", N * nt)
					add("ncclGroupStart", N * nt); add("ncclGroupEnd", N * nt)
				} else {
					add(name[ol[i]], N * nt)
				}
			}
		}
		for (op in c) print op, c[op] * T * P
	}' | sort
}

# expected_bytes iters= threads= procs= types= ops= count=: the NCCL bytes per
# op ("OP BYTES"): per call, type t moves count + t elements of its size.
expected_bytes() {
	local iters=100 threads=1 procs=1 types="0,1,2,3,4,5,6,7,8,9,10,11" ops="all" count=1024 kv
	for kv in "$@"; do local "$kv"; done
	awk -v N="$iters" -v T="$threads" -v P="$procs" -v types="$types" -v ops="$ops" -v C="$count" '
	BEGIN {
		split("1 1 4 4 8 8 2 4 8 2 1 1", size, " ")
		nt = split(types, tl, ",")
		for (i = 1; i <= nt; i++) per += (C + tl[i]) * size[tl[i] + 1]
		if (ops == "all") ops = "allreduce,allgather,reducescatter,broadcast,bcast,reduce,sendrecv"
		split("allreduce ncclAllReduce allgather ncclAllGather reducescatter ncclReduceScatter " \
		      "broadcast ncclBroadcast bcast ncclBcast reduce ncclReduce", m, " ")
		for (i = 1; i < 12; i += 2) name[m[i]] = m[i + 1]
		no = split(ops, ol, ",")
		for (i = 1; i <= no; i++) {
			if (ol[i] == "sendrecv") { b["ncclSend"] += per; b["ncclRecv"] += per }
			else b[name[ol[i]]] += per
		}
		for (op in b) printf "%s %.0f\n", op, b[op] * N * T * P
	}' | sort
}

# run_counts NAME "WORKLOAD FLAGS" "FORMULA KEYS" [ENV=VALUE...]: runs the
# workload and compares its --expect file with the formula and with the shim
# libraries' counters; with nccl=1 in the keys, the NCCL bytes too.
run_counts() {
	local name=$1 flags=$2 keys=$3 out=$TMP/$1
	shift 3
	rm -f "$out.expect" "$out.stats"
	# shellcheck disable=SC2086
	if ! env SHIM_STATS="$out.stats" "$@" "$WL" $flags --expect "$out.expect" 2>"$out.err"; then
		fail "$name: workload $flags exited non-zero: $(tail -3 "$out.err")"
		return 1
	fi
	# shellcheck disable=SC2086
	expected_ops $keys >"$out.want"
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

# summary FIELD FILE [ROLE]: value of FIELD=... in a workload summary line.
summary() { sed -n "s/.*role=${3:-parent}.* $1=\([0-9.]*\).*/\1/p" "$2" | head -1; }
