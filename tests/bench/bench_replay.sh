#!/usr/bin/env bash
# Replay throughput into the model: `ingero-top --replay FILE --batch
# --summary`, in events per second of CPU time (user + system of all its
# threads, from getrusage: other load on a shared machine changes it far
# less than the wall time) and, where perf can count them, instructions per
# event. FILE is $REPLAY, or a long recording made by
# tests/bench/long_replay.py from the largest shipped scenario
# (cpu-contention.db repeated for MINUTES, default 10: ~1.3 M events).
# BASE=/path/to/another/ingero-top runs that build in the same interleaved
# rounds and prints the ratio of the two, and whether their summaries are
# the same bytes. ROUNDS (default 3): the best of each build is kept.
# tests/tools/replay_floor runs in the same rounds: the same query stepped
# and every row decoded, without the model (what SQLite alone costs), and
# the replay's share of it is printed.
# Exits 77 without python3 or the binary.
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
IG=${IG:-$PWD/$B/ingero-top}
BASE=${BASE:-}
ROUNDS=${ROUNDS:-3}
MINUTES=${MINUTES:-10}
[ -x "$IG" ] || { echo "bench_replay: skip: $IG not built"; exit 77; }
command -v python3 >/dev/null || { echo "bench_replay: skip: python3 missing"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

file=${REPLAY:-}
if [ -z "$file" ]; then
	file=$tmp/long.db
	python3 tests/bench/long_replay.py tests/scenarios/cpu-contention.db "$file" "$MINUTES" >/dev/null ||
		{ echo "bench_replay: cannot make the long recording"; exit 1; }
fi
perf_ok=0
if command -v perf >/dev/null &&
	perf stat -x, -e instructions:u true 2>&1 | grep -q '^[0-9]'; then
	perf_ok=1
fi

# run NAME BINARY: one replay; appends "cpu_s" to NAME.cpu, the summary to
# NAME.out, and the user instructions to NAME.ins where perf counts them.
run() {
	local pre=()
	[ $perf_ok = 1 ] && pre=(perf stat "-x," -o "$tmp/$1.perf" -e instructions:u --)
	python3 - "$tmp/$1.out" "${pre[@]}" "$2" --replay "$file" --batch --summary >>"$tmp/$1.cpu" <<'PY'
import os, subprocess, sys
with open(sys.argv[1], "w") as out:
    p = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
if status:
    sys.exit(1)
print(f"{ru.ru_utime + ru.ru_stime:.3f}")
PY
	[ "${PIPESTATUS[0]}" = 0 ] || return 1
	if [ $perf_ok = 1 ]; then
		awk -F, '/instructions/ {print $1}' "$tmp/$1.perf" >>"$tmp/$1.ins"
	fi
}

names=(ig)
[ -n "$BASE" ] && names=(base ig)
FLOOR=$PWD/$B/tests/tools/replay_floor
floor_ok=0
[ -x "$FLOOR" ] && floor_ok=1
for _ in $(seq "$ROUNDS"); do
	if [ $floor_ok = 1 ]; then
		"$FLOOR" "$file" >>"$tmp/floor.out" 2>"$tmp/floor.err" || floor_ok=0
	fi
	for n in "${names[@]}"; do
		bin=$IG
		[ "$n" = base ] && bin=$BASE
		run "$n" "$bin" || { echo "bench_replay: $bin --replay $file failed"; exit 1; }
	done
done
events=$(sed -n 's/.* events \([0-9]*\) drops .*/\1/p' "$tmp/ig.out" | head -n 1)
echo "replay into the model: $file, ${events:-?} events, best of $ROUNDS (CPU time, user + system)"
for n in "${names[@]}"; do
	cpu=$(sort -n "$tmp/$n.cpu" | head -n 1)
	ins=-
	[ $perf_ok = 1 ] && ins=$(sort -n "$tmp/$n.ins" | head -n 1)
	label=$IG
	[ "$n" = base ] && label=$BASE
	awk -v n="$label" -v e="$events" -v c="$cpu" -v i="$ins" 'BEGIN {
		printf "%-40s %6.2f s CPU  %9.0f events/s", n, c, e / c
		if (i != "-") printf "  %6.0f instructions/event", i / e
		else printf "  instructions: not counted (no hardware counters)"
		printf "\n" }'
	echo "$cpu" >"$tmp/$n.best"
done
if [ $floor_ok = 1 ]; then
	awk -v e="$events" -v c="$(cat "$tmp/ig.best")" '
	{ if (best == "" || $4 < best) best = $4; rows = $2 }
	END {
		printf "%-40s %6.2f s CPU  %9.0f rows/s\n", "SQLite alone (tests/tools/replay_floor)",
			best, rows / best
		printf "replay events/s / SQLite rows/s  %.3f (SQLite is %.0f %% of the replay)\n",
			(e / c) / (rows / best), 100 * best / c
	}' "$tmp/floor.out"
else
	echo "SQLite alone: not measured ($(head -n 1 "$tmp/floor.err" 2>/dev/null || echo "$FLOOR not built"))"
fi
if [ -n "$BASE" ]; then
	awk -v a="$(cat "$tmp/base.best")" -v b="$(cat "$tmp/ig.best")" \
		'BEGIN { printf "ratio events/s this build / BASE  %.3f\n", a / b }'
	if cmp -s "$tmp/base.out" "$tmp/ig.out"; then
		echo "summaries: the same bytes"
	else
		echo "summaries: DIFFER"
		diff "$tmp/base.out" "$tmp/ig.out" | head -n 10
		exit 1
	fi
fi
