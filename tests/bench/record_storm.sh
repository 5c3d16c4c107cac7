#!/usr/bin/env bash
# The recorder under a storm (issue 30): the shim workload's two threads
# calling as fast as they can (a 1 us kernel and a sync, in a loop: four
# traced calls a step), traced by `ingero-top --batch --summary --no-stacks
# --record FILE`. Prints, per build, the CPU time of the recorder's writer
# thread per row written (user + system from /proc/PID/task/TID/stat, read
# every 0.1 s until the process ends: CPU time, so the machine's other load
# changes it little), that of the reader (the main thread), and how often
# and how long the reader waited for the writer (the summary's line), with
# the kernel's drops. BASE=/path/to/another/ingero-top runs that build in
# the same interleaved rounds and prints the ratios. ITERS (60000 steps a
# thread), ROUNDS (3; the best of each build is kept). Needs root.
cd "$(dirname "$0")/../.." || exit 1
B=${BUILD:-build}
IG=${IG:-$PWD/$B/ingero-top}
WL=${WL:-$PWD/$B/workload}
BASE=${BASE:-}
ITERS=${ITERS:-60000}
ROUNDS=${ROUNDS:-3}
[ "$(id -u)" = 0 ] || { echo "record_storm: skip: needs root"; exit 77; }
for x in "$IG" "$WL"; do [ -x "$x" ] || { echo "record_storm: skip: $x not built"; exit 77; }; done
command -v sqlite3 >/dev/null || { echo "record_storm: skip: sqlite3 missing"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
hz=$(getconf CLK_TCK)

# run NAME BINARY: one storm; appends "writer_s reader_s rows waits wait_s
# drops" to NAME.runs
run() {
	local db=$tmp/$1.db pid t
	rm -f "$db" "$db-wal" "$db-shm"
	# a python parent takes the process's own CPU time at its end (wait4)
	rm -f "$tmp/pid"
	python3 -c '
import os, subprocess, sys
with open(sys.argv[2], "w") as out:
    p = subprocess.Popen(sys.argv[4:], stdout=out, stderr=subprocess.DEVNULL)
    open(sys.argv[1], "w").write(str(p.pid))
    _, status, ru = os.wait4(p.pid, 0)
open(sys.argv[3], "a").write(f"{ru.ru_utime + ru.ru_stime:.3f}\n")
' "$tmp/pid" "$tmp/$1.out" "$tmp/$1.total" \
		"$2" --batch --summary --no-stacks --record "$db" -- "$WL" --iters "$ITERS" --threads 2 \
		--kernels 1 --kernel-us 1 --sync-every 1 &
	local py=$!
	for _ in $(seq 100); do [ -s "$tmp/pid" ] && break; sleep 0.05; done
	pid=$(cat "$tmp/pid")
	: >"$tmp/$1.ticks"
	# the last reading of each thread: tid, name, ticks
	while kill -0 "$pid" 2>/dev/null; do
		for t in /proc/"$pid"/task/*; do
			printf '%s %s %s\n' "${t##*/}" "$(cat "$t/comm" 2>/dev/null)" \
				"$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null)"
		done >"$tmp/$1.now" 2>/dev/null
		[ -s "$tmp/$1.now" ] && cat "$tmp/$1.now" >>"$tmp/$1.ticks"
		sleep 0.1
	done
	wait "$py"
	local rows line
	rows=$(sqlite3 "$db" "SELECT COUNT(*) FROM events")
	line=$(grep '^recording' "$tmp/$1.out")
	# the writer: the thread named ig-rec-writer, else (older builds) the
	# thread other than the main one that used the most CPU
	awk -v pid="$pid" -v hz="$hz" -v rows="$rows" -v line="$line" \
		-v drops="$(sed -n 's/.* drops kernel \([0-9]*\) .*/\1/p' "$tmp/$1.out" | head -n 1)" '
	$3 != "" { last[$1] = $3; name[$1] = $2 }
	END {
		w = -1
		for (t in last) if (name[t] == "ig-rec-writer") w = t
		if (w < 0) for (t in last) if (t != pid && (w < 0 || last[t] > last[w])) w = t
		waits = 0; ws = 0
		if (match(line, /waited [0-9]+ times [0-9.]+s/)) {
			split(substr(line, RSTART, RLENGTH), a, " "); waits = a[2]; ws = a[4] + 0
		}
		printf "%.3f %.3f %d %d %.2f %d\n", last[w] / hz, last[pid] / hz, rows, waits, ws, drops
	}' "$tmp/$1.ticks" >>"$tmp/$1.runs"
}

names=(ig)
[ -n "$BASE" ] && names=(base ig)
for _ in $(seq "$ROUNDS"); do
	for n in "${names[@]}"; do
		bin=$IG
		[ "$n" = base ] && bin=$BASE
		run "$n" "$bin"
	done
done
echo "record storm: 2 threads x $ITERS steps (4 traced calls a step), best of $ROUNDS by the writer's CPU"
for n in "${names[@]}"; do
	label=$IG
	[ "$n" = base ] && label=$BASE
	# the best round: the least writer CPU per row
	awk '{ printf "%.4f %s\n", $1 / $3 * 1e6, $0 }' "$tmp/$n.runs" | sort -n | head -n 1 >"$tmp/$n.best"
	read -r per w r rows waits ws drops <"$tmp/$n.best"
	printf '%s\n  writer %.2f us CPU/row (%.2f s, %d rows)  reader %.2f s CPU  waited %d times %.2f s  kernel drops %d\n' \
		"$label" "$per" "$w" "$rows" "$r" "$waits" "$ws" "$drops"
	printf '  every round, writer us CPU/row:%s\n' "$(awk '{ printf " %.2f", $1 / $3 * 1e6 }' "$tmp/$n.runs")"
	printf '  every round, ingero-top us CPU/row (all threads, to its exit):%s\n' \
		"$(paste -d' ' "$tmp/$n.total" "$tmp/$n.runs" | awk '{ printf " %.2f", $1 / $4 * 1e6 }')"
	paste -d' ' "$tmp/$n.total" "$tmp/$n.runs" | awk '{ print $1 / $4 * 1e6 }' | sort -n | head -n 1 >"$tmp/$n.tbest"
done
if [ -n "$BASE" ]; then
	awk -v a="$(cut -d' ' -f1 "$tmp/base.best")" -v b="$(cut -d' ' -f1 "$tmp/ig.best")" \
		'BEGIN { printf "ratio writer CPU per row, this build / BASE  %.3f\n", b / a }'
	awk -v a="$(cat "$tmp/base.tbest")" -v b="$(cat "$tmp/ig.tbest")" \
		'BEGIN { printf "ratio ingero-top CPU per row, this build / BASE  %.3f\n", b / a }'
fi
