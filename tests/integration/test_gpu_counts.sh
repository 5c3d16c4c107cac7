#!/usr/bin/env bash
# needs: root
# Exact per-op counts from real uprobes for every op added for what
# frameworks call (CUDA 12/13 runtime and driver calls), NCCL (two ranks as
# two processes, threads, every data type and op, groups) and HIP
# (libamdhip64.so.6; .so.5 attached), live and again after recording the
# run and replaying it; NCCL bytes exact for every data type, live and in
# replay; the NCCL arguments (type, reduction op, peer or root,
# communicator rank) as the workload passed them; what the real CUDA 13
# libraries at /usr/local/cuda export of the new ops.
. "$(dirname "$0")/lib.sh"
need_root

# NCCL bytes per data op from an --events file of the expect file's pids.
event_bytes_of() { # events, expect
	awk 'NR == FNR { if ($1 == "pid") want["pid=" $2] = 1; next }
	     $2 == "call" && ($3 in want) {
		op = ""; b = 0
		for (i = 4; i <= NF; i++) { if ($i ~ /^op=nccl/) op = substr($i, 4); if ($i ~ /^arg0=/) b = substr($i, 6) }
		if (op != "" && op !~ /Group|Comm/) s[op] += b
	     }
	     END { for (o in s) printf "%s %.0f\n", o, s[o] }' "$2" "$1" | sort
}

compare() { # what, want file, got file
	if diff -u "$2" "$3" >"$3.diff"; then
		ok "$1 ($(wc -l <"$2") ops, $(awk '{s += $2} END {printf "%.0f", s}' "$2") in all)"
	else
		bad "$1 differ (want vs got):"; cat "$3.diff"
	fi
}

run_case() { # name, workload args...
	local name=$1; shift
	"$IG" -v --events --no-system-libs --record "$TMP/$name.db" -- "$WL" "$@" \
		--expect "$TMP/$name.expect" >"$TMP/$name.ev" 2>"$TMP/$name.err"
	expect_eq "$name: exit status" "$?" 0
	if grep -q "cannot attach uprobe" "$TMP/$name.err"; then
		bad "$name: probes refused:"; grep "cannot attach uprobe" "$TMP/$name.err"
	fi
	expect_counts "$TMP/$name.expect" >"$TMP/$name.want"
	event_counts_of "$TMP/$name.ev" "$TMP/$name.expect" >"$TMP/$name.got"
	compare "$name: live per-op counts equal the workload's own" "$TMP/$name.want" "$TMP/$name.got"
	chmod 644 "$TMP/$name.db"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$IG" --events --replay "$TMP/$name.db" \
		>"$TMP/$name.rev" 2>"$TMP/$name.rerr"
	expect_eq "$name: replay exit status" "$?" 0
	event_counts_of "$TMP/$name.rev" "$TMP/$name.expect" >"$TMP/$name.rgot"
	compare "$name: replayed per-op counts equal the workload's own" "$TMP/$name.want" "$TMP/$name.rgot"
	if grep -q '^bytes ' "$TMP/$name.expect"; then
		expect_bytes "$TMP/$name.expect" >"$TMP/$name.bwant"
		event_bytes_of "$TMP/$name.ev" "$TMP/$name.expect" >"$TMP/$name.bgot"
		compare "$name: live NCCL bytes per op" "$TMP/$name.bwant" "$TMP/$name.bgot"
		event_bytes_of "$TMP/$name.rev" "$TMP/$name.expect" >"$TMP/$name.rbgot"
		compare "$name: replayed NCCL bytes per op" "$TMP/$name.bwant" "$TMP/$name.rbgot"
	fi
}

# The CUDA calls of frameworks: launch configs, stream-ordered and pinned
# memory, memsets, events, the driver's async and device copies, modules.
run_case cuda-ext --iters 30 --kernels 2 --kernel-us 20 --launch-ex 2 --async-malloc --memset \
	--events --pinned --driver-ext --modules 2 --threads 2
# The arguments where they matter: a launch config's stream and shape, the
# bytes of memsets and stream-ordered allocations.
n=$(grep -c " op=cudaLaunchKernelExC .* ret=0 " "$TMP/cuda-ext.ev")
expect_eq "cudaLaunchKernelExC calls that succeeded" "$n" 120
n=$(grep " op=cudaLaunchKernelExC " "$TMP/cuda-ext.ev" | grep -vc " stream=0x0 ")
expect_eq "cudaLaunchKernelExC: the config's stream (not 0)" "$n" 120
n=$(grep " op=cudaMallocAsync " "$TMP/cuda-ext.ev" | grep -c " arg0=1048576 ")
expect_eq "cudaMallocAsync of 1 MiB (arg0)" "$n" 60

# NCCL: two ranks (a forked child), two threads each, every op and type.
run_case nccl --iters 6 --kernels 1 --kernel-us 20 --nccl --fork --threads 2
# the arguments: type, reduction op, root/peer, rank of the communicator
n=$(grep " op=ncclReduce " "$TMP/nccl.ev" | grep -c " type=float32 redop=prod peer=0 nccl_comm=[0-9a-f]* rank=[01]/2")
expect_eq "ncclReduce: float32, prod, root 0, rank r/2" "$n" 24
n=$(grep " op=ncclAllGather " "$TMP/nccl.ev" | grep " type=bfloat16 " | grep -c " arg0=2066 ")
expect_eq "ncclAllGather bfloat16: (1024 + 9) x 2 bytes per rank" "$n" 24
ranks=$(grep " op=ncclCommInitRank " "$TMP/nccl.ev" | sed 's/.* rank=\([0-9]*\/[0-9]*\).*/\1/' | sort | uniq -c | awk '{print $2 "x" $1}' | tr '\n' ' ')
expect_eq "ncclCommInitRank: rank (third register, the id on the stack) and nranks" "$ranks" "0/2x2 1/2x2 "
comms=$(grep " op=ncclAllReduce " "$TMP/nccl.ev" | sed 's/.* nccl_comm=\([0-9a-f]*\) .*/\1/' | sort -u | wc -l)
expect_eq "two communicators (one per thread pair), each shared by both ranks" "$comms" 2
n=$(sqlite3 "$TMP/nccl.db" "SELECT COUNT(*) FROM events WHERE source = 9 AND rank IS NOT NULL AND world_size = 2")
want=$(awk '$1 ~ /^nccl/ && $1 !~ /Group/ {s += $2} END {print s}' "$TMP/nccl.want")
expect_eq "recorded NCCL rows with Ingero's rank and world_size columns" "$n" "$want"
# A group counts as one operation with its members listed.
"$IG" --batch --summary --replay "$TMP/nccl.db" >"$TMP/nccl.sum" 2>/dev/null
ops=$(awk '$1 == "nccl" && $2 == "group(ncclSend," && $3 == "ncclRecv)" {print $5}' "$TMP/nccl.sum")
expect_eq "group(ncclSend, ncclRecv): one operation per ncclGroupEnd" "$ops" \
	"$(awk '$1 == "ncclGroupEnd" {print $2}' "$TMP/nccl.want")"
grep -q "^nccl ncclSend \|^nccl ncclRecv " "$TMP/nccl.sum" && bad "grouped sends counted on their own" ||
	ok "no ncclSend or ncclRecv operation outside the groups"

# HIP, judged like CUDA: launches, module launches, copies, syncs, graphs.
run_case hip --hip --iters 30 --kernels 2 --kernel-us 20 --h2d 4096 --d2h 4096 --driver --events \
	--async-malloc --malloc-every 5
run_case hip-graph --hip --iters 20 --kernels 3 --kernel-us 20 --graph --device-sync --async-copy \
	--h2d 8192
grep -q " op=hipExtModuleLaunchKernel " "$TMP/hip.ev" && ok "hipExtModuleLaunchKernel found by its mangled name" ||
	bad "no hipExtModuleLaunchKernel"
"$IG" --batch -n 1 -d 0.2 --pid $$ --no-system-libs --lib "$B/shim/libamdhip64.so.5" >"$TMP/hip5.txt" 2>&1
grep -q "libamdhip64.so.5: 14 HIP ops" "$TMP/hip5.txt" && ok "libamdhip64.so.5: 14 HIP ops attached" ||
	{ bad "libamdhip64.so.5 not attached"; grep attach "$TMP/hip5.txt"; }

# What NVIDIA's CUDA 13 exports of the new ops (the attach summary says it).
rt=/usr/local/cuda/lib64/libcudart.so.13 drv=/usr/local/cuda/lib64/stubs/libcuda.so
if [ -r "$rt" ] && [ -r "$drv" ]; then
	"$IG" --batch -n 1 -d 0.2 --pid $$ --no-system-libs --lib "$rt" --lib "$drv" >"$TMP/cuda13.txt" 2>&1
	grep "^attach: /usr/local/cuda" "$TMP/cuda13.txt"
	grep -q "libcudart.so.13: 24 runtime ops" "$TMP/cuda13.txt" && ok "CUDA 13 runtime: all 24 runtime ops exported" ||
		bad "CUDA 13 runtime: $(grep 'libcudart.so.13' "$TMP/cuda13.txt")"
	grep -q "stubs/libcuda.so: 20 driver ops" "$TMP/cuda13.txt" && ok "CUDA 13 driver: all 20 driver ops exported" ||
		bad "CUDA 13 driver: $(grep 'stubs/libcuda.so' "$TMP/cuda13.txt")"
else
	echo "note: no CUDA 13 at /usr/local/cuda: its exports not checked"
fi
finish
