#!/usr/bin/env bash
# needs: alone (it checks the simulated times; scripts beside it would stretch them)
# The NCCL shim without tracing: exported names (against the real libnccl.so.2
# when installed), exact op counts and bytes for every data type, two ranks as
# two processes (forked, or started separately), collectives that return at
# once and complete on the stream when every rank has arrived, a straggler
# that makes its peers wait (as ratios), and a peer that never comes. No
# root, no GPU. Exit 0 pass, 1 fail.
# shellcheck source=tests/integration/shim_lib.sh
. "$(dirname "$0")/shim_lib.sh"

NCCL=$SHIMDIR/libnccl.so.2
REAL=/usr/local/cuda/lib64/libnccl.so.2
# The rendezvous files of this test's ranks, so that none is left behind.
export SHIM_NCCL_DIR=$TMP/shm
mkdir -p "$SHIM_NCCL_DIR"

echo "exported symbols"
names="ncclGetUniqueId ncclCommInitRank ncclCommDestroy ncclCommCount ncclCommUserRank
	ncclAllReduce ncclAllGather ncclReduceScatter ncclBroadcast ncclBcast ncclReduce ncclSend
	ncclRecv ncclGroupStart ncclGroupEnd ncclGetErrorString ncclGetVersion"
# shellcheck disable=SC2086
missing=$(lacks "$NCCL" $names)
if [ -z "$missing" ]; then pass "libnccl.so.2 exports the NCCL names"
else fail "libnccl.so.2 lacks:$missing"; fi
extra=$(exports "$NCCL" | grep -v '^p\?nccl[A-Z]' | tr '\n' ' ')
if [ -z "$extra" ]; then pass "libnccl.so.2 exports no internal helper"
else fail "libnccl.so.2 exports internal helpers: $extra"; fi
if readelf -d "$NCCL" | grep -q 'SONAME.*\[libnccl.so.2\]'; then pass "soname libnccl.so.2"
else fail "soname of $NCCL is not libnccl.so.2"; fi
# As in NVIDIA's library: ncclX is a weak alias of pncclX, at one address.
alias_bad=$(nm -D --defined-only "$NCCL" | awk '
	$3 ~ /^nccl/ { w[$3] = $2 " " $1 } $3 ~ /^pnccl/ { p["n" substr($3, 3)] = "W " $1 }
	END { for (n in w) if (w[n] != p[n]) print n }' | tr '\n' ' ')
if [ -z "$alias_bad" ]; then pass "every ncclX is a weak alias of pncclX (same address)"
else fail "not weak aliases of pncclX: $alias_bad"; fi
if [ -f "$REAL" ]; then
	# shellcheck disable=SC2046
	missing=$(lacks "$REAL" $(exports "$NCCL"))
	if [ -z "$missing" ]; then pass "every name of the shim is exported by $REAL"
	else fail "$REAL does not export:$missing"; fi
else
	echo "  skip: no real NCCL at $REAL to compare names with"
fi

echo "counts and bytes, one rank"
# Each data type alone: its bytes show its size exactly (count + type index
# elements per call).
bad_types=""
for t in 0 1 2 3 4 5 6 7 8 9 10 11; do
	tname=$(echo int8 uint8 int32 uint32 int64 uint64 float16 float32 float64 bfloat16 \
		fp8e4m3 fp8e5m2 | cut -d' ' -f$((t + 1)))
	out=$TMP/type$t
	if ! "$WL" --nccl --nccl-types "$tname" --nccl-count 1000 --iters 3 --kernels 0 \
		--expect "$out.expect" 2>"$out.err"; then
		bad_types="$bad_types $tname(exit)"
		continue
	fi
	expected_bytes iters=3 types=$t count=1000 >"$out.want"
	expect_bytes "$out.expect" >"$out.got"
	cmp -s "$out.want" "$out.got" || bad_types="$bad_types $tname"
done
if [ -z "$bad_types" ]; then
	pass "bytes = count x type size for each of the 12 data types, every op"
else
	fail "bytes wrong for:$bad_types"
fi
run_counts one-rank "--nccl --iters 4 --kernels 1 --nccl-count 333" "iters=4 kernels=1 nccl=1"
expected_bytes iters=4 count=333 >"$TMP/one-rank.bwant"
expect_bytes "$TMP/one-rank.expect" >"$TMP/one-rank.bgot"
if cmp -s "$TMP/one-rank.bwant" "$TMP/one-rank.bgot"; then
	pass "one-rank: bytes of every op over all types match"
else
	fail "one-rank: bytes (want | got): $(diff "$TMP/one-rank.bwant" "$TMP/one-rank.bgot" | tr '\n' ' ')"
fi
run_counts threads "--nccl --nccl-ops allreduce,sendrecv --nccl-types float16,int64 --iters 5 --kernels 1 --threads 3" \
	"iters=5 kernels=1 nccl=1 ops=allreduce,sendrecv types=6,4 threads=3"

echo "two ranks"
run_counts fork "--nccl --fork --iters 5 --kernels 2 --events" \
	"iters=5 kernels=2 nccl=1 events=1 procs=2"
# Threads whose communicators' operations interleave differently in each
# rank: each communicator's operations keep their own order.
run_counts fork-threads "--nccl --fork --threads 3 --iters 20 --kernels 1 --nccl-ops allreduce,sendrecv --nccl-types float32,int8" \
	"iters=20 kernels=1 nccl=1 ops=allreduce,sendrecv types=7,0 threads=3 procs=2" SHIM_NCCL_TIMEOUT_MS=20000
expected_bytes iters=5 procs=2 >"$TMP/fork.bwant"
expect_bytes "$TMP/fork.expect" >"$TMP/fork.bgot"
if cmp -s "$TMP/fork.bwant" "$TMP/fork.bgot"; then pass "fork: bytes of both ranks match"
else fail "fork: bytes differ: $(diff "$TMP/fork.bwant" "$TMP/fork.bgot" | tr '\n' ' ')"; fi
if [ "$(grep -c '^pid ' "$TMP/fork.expect")" = 2 ] &&
	grep -q 'role=parent.* rank=0 ' "$TMP/fork.err" && grep -q 'role=child.* rank=1 ' "$TMP/fork.err"; then
	pass "fork: the parent is rank 0, the child rank 1, both in --expect"
else
	fail "fork: ranks or pids wrong: $(grep -o 'role=[a-z]*\|rank=[0-9]*' "$TMP/fork.err" | tr '\n' ' ')"
fi

# Started separately: rank 1 first (it waits for the id file), then rank 0.
ID=$TMP/nccl.id
flags="--nccl --nccl-ranks 2 --nccl-id $ID --nccl-ops allreduce,broadcast,sendrecv --iters 4 --kernels 1"
# shellcheck disable=SC2086
"$WL" $flags --nccl-rank 1 --expect "$TMP/r1.expect" 2>"$TMP/r1.err" &
r1=$!
BG_PIDS+=("$r1")
# shellcheck disable=SC2086
"$WL" $flags --nccl-rank 0 --expect "$TMP/r0.expect" 2>"$TMP/r0.err"
rc0=$?
wait "$r1"
rc1=$?
expected_ops iters=4 kernels=1 nccl=1 ops=allreduce,broadcast,sendrecv >"$TMP/sep.want"
if [ "$rc0" = 0 ] && [ "$rc1" = 0 ] && cmp -s "$TMP/sep.want" <(expect_ops "$TMP/r0.expect") &&
	cmp -s "$TMP/sep.want" <(expect_ops "$TMP/r1.expect"); then
	pass "two ranks started separately (--nccl-rank, --nccl-id): each has its exact counts"
else
	fail "separate ranks: exit $rc0/$rc1: $(tail -2 "$TMP/r0.err" "$TMP/r1.err" | tr '\n' ' ')"
fi

# A peer that never comes: the rank gives up after SHIM_NCCL_TIMEOUT_MS.
t0=$(date +%s%N)
SHIM_NCCL_TIMEOUT_MS=400 "$WL" --nccl --nccl-ranks 2 --nccl-id "$TMP/lonely.id" --iters 2 \
	2>"$TMP/lonely.err"
rc=$?
dt=$((($(date +%s%N) - t0) / 1000000))
if [ "$rc" = 1 ] && grep -q 'peers did not join' "$TMP/lonely.err" && [ "$dt" -lt 10000 ]; then
	pass "a rank whose peer never joins fails after the timeout ($dt ms)"
else
	fail "lonely rank: exit $rc after $dt ms: $(cat "$TMP/lonely.err")"
fi

echo "time: collectives complete when every rank has arrived"
# ranks FLAGS...: runs two forked ranks; prints "parent_wait child_wait step".
ranks() {
	local envs=()
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env "${envs[@]}" "$WL" --nccl --fork --nccl-ops allreduce --nccl-types float32 \
		--nccl-count 262144 --kernels 1 --kernel-us 1000 --iters 30 "$@" 2>"$TMP/r.err" >/dev/null ||
		{ echo "error error error"; return; }
	echo "$(summary nccl_wait_ms "$TMP/r.err") $(summary nccl_wait_ms "$TMP/r.err" child)" \
		"$(summary step_ms "$TMP/r.err")"
}
# check_ratio NAME AWK-CONDITION ENV... -- FLAGS: two tries on a loaded host.
check_ratio() {
	local name=$1 cond=$2 got
	shift 2
	for _ in 1 2; do
		got=$(ranks "$@")
		# shellcheck disable=SC2086
		if echo "$got $base" | awk "{ p = \$1; c = \$2; s = \$3; bp = \$4; bc = \$5; bs = \$6; exit !($cond) }"; then
			pass "$name (waits ms: rank 0, rank 1, step; then without: $got $base)"
			return
		fi
	done
	fail "$name: $got (without a straggler: $base)"
}
base=$(ranks --)
# A 1 MiB float32 AllReduce: 10 us + 104.9 us after both ranks' 1000 us kernel.
if echo "$base" | awk '{ exit !($3 >= 1.1 && $3 < 2.5) }'; then
	pass "no straggler: $base (rank 0 wait, rank 1 wait, step ms; want step 1.12)"
else
	fail "no straggler: $base, want a step of 1.12 ms"
fi
# Rank 1's device reaches every collective 4000 us late: both ranks wait.
check_ratio "SHIM_NCCL_DELAY_US=1:4000: both ranks wait ~4 ms more" \
	"p >= 4 && c >= 4 && s > 3 * bs && p > 0.8 * s" SHIM_NCCL_DELAY_US=1:4000 --
# Rank 1's host is 4000 us late to every collective: rank 0 waits for it in
# its stream sync, rank 1 hardly waits at all.
check_ratio "--straggler-rank 1: rank 0 waits, the late rank does not" \
	"p >= 2.9 && p > 10 * c" -- --straggler-rank 1 --straggler-us 4000

if [ -z "$(ls -A "$SHIM_NCCL_DIR")" ]; then pass "no rendezvous file left in $SHIM_NCCL_DIR"
else fail "rendezvous files left: $(ls "$SHIM_NCCL_DIR" | tr '\n' ' ')"; fi

finish test_shim_nccl
