#!/usr/bin/env bash
# What the always-on recorder costs, per hour: `ingero-top record` (its
# defaults: --record-rate 100, 250 ms commits) for SECS seconds (default 60)
# on an idle host, a busy trainer and a sync storm (the shim workload),
# then SIGINT. Prints per case the calls a second recorded, the bytes the
# closed files take (an empty recording's subtracted) and the recorder's
# CPU (all its threads, from /proc/PID/stat after the first 5 s, so that
# loading the BPF programs is not counted) as per-hour figures. Each case
# traces only the command it launches (idle: sleep), so that other
# processes on the machine that map a CUDA library are not counted. Root; not
# part of `make test`. Figures: docs/performance.md, "The always-on recorder".
#   sudo tests/bench/record_cost.sh [SECS]
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
IG=$B/ingero-top WL=$B/workload
SECS=${1:-60}
TMP=$(mktemp -d /tmp/record_cost.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" = 0 ] || { echo "record_cost: needs root"; exit 77; }
TCK=$(getconf CLK_TCK)

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

# one CASE [-- WORKLOAD ARGS]: prints its line
one() {
	local name=$1; shift
	local d=$TMP/$name
	local ts; ts=$(date +%s%N)
	"$IG" record --dir "$d" --rotate 1h --max-size 20G --no-system-libs "$@" 2>"$TMP/$name.err" &
	local pid=$!
	sleep 5
	local c0; c0=$(cpu_ticks $pid)
	local t0; t0=$(date +%s%N)
	sleep "$SECS"
	local c1; c1=$(cpu_ticks $pid)
	local t1; t1=$(date +%s%N)
	kill -INT $pid; wait $pid
	local f; f=$(ls "$d"/ingero-*.db | head -1)
	local bytes; bytes=$(du -cb "$d" | tail -1 | cut -f1)
	read -r span calls rows runs < <(sqlite3 -separator ' ' "$f" "SELECT
		(MAX(end_ns) - MIN(end_ns)) / 1e9,
		(SELECT COUNT(*) FROM events WHERE source IN (1, 4)) + (SELECT COALESCE(SUM(calls), 0) FROM ingero_top_summaries),
		(SELECT COUNT(*) FROM events), (SELECT COUNT(*) FROM ingero_top_summaries) FROM events")
	awk -v n="$name" -v b="$bytes" -v e="$EMPTY" -v span="$span" -v calls="$calls" -v rows="$rows" -v runs="$runs" \
		-v cpu=$((c1 - c0)) -v tck="$TCK" -v wall=$(((t1 - t0) / 1000000)) -v rec=$(((t1 - ts) / 1000000)) 'BEGIN {
		if (span < 1) span = 1
		cs = cpu / tck; w = wall / 1000; r = rec / 1000
		printf "%-8s %4.0fs %9.0f calls/s recorded %8d rows %6d runs %7.2f MB %8.1f MB/hour  CPU %5.2f%% of a core (%5.0f s/hour)\n",
			n, r, calls / span, rows, runs, b / 1e6, (b - e) / r * 3600 / 1e6, cs / w * 100, cs / w * 3600 }'
}

EMPTY=0
"$IG" record --dir "$TMP/empty" --no-system-libs -- sleep 100000 2>/dev/null & p=$!; sleep 5; kill -INT $p; wait $p
EMPTY=$(du -cb "$TMP/empty" | tail -1 | cut -f1)
echo "record_cost: ${SECS}s a case, $(nproc) CPUs, an empty recording $EMPTY bytes (subtracted)"
one idle -- sleep 100000 # a target that makes no CUDA call: other processes' calls are not counted
one trainer -- "$WL" --iters 100000000 --kernels 4 --kernel-us 2000 --h2d 1048576 --d2h 4096 \
	--sync-every 1 --malloc-every 50 --host-us 2000
one storm -- "$WL" --iters 1000000000 --kernels 1 --kernel-us 5 --sync-every 1
